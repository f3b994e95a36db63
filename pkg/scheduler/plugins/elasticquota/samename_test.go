/*
Copyright 2026 The Koordinator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package elasticquota

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

func TestTheOldestQuotaOfANameCounts(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	older := utiltesting.MakeElasticQuota("dup").Namespace("ns-b").Max(corev1.ResourceCPU, "2").Obj()
	older.CreationTimestamp = metav1.NewTime(at)
	newer := utiltesting.MakeElasticQuota("dup").Namespace("ns-a").Max(corev1.ResourceCPU, "8").Obj()
	newer.CreationTimestamp = metav1.NewTime(at.Add(time.Minute))
	// The newer one arrives second, and again first: the older counts both ways.
	for _, order := range [][]*quotaObj{{older, newer}, {newer, older}} {
		p, h := newTestPlugin(t, nil, order...)
		p.follow.report("dup")
		if s := p.Filter(context.Background(), unitIn("ns-b", "u", "dup", 0, 4)); s.IsSuccess() || !strings.Contains(s.Message, "max 2") && !strings.Contains(s.Message, "at most 2") {
			t.Errorf("a 4-CPU unit of dup was judged by %+v; want the older quota's max of 2", s)
		}
		ev := h.events()
		if len(ev) != 1 || !strings.Contains(ev[0], "DuplicateQuotaName") || !strings.Contains(ev[0], "ns-b/dup") {
			t.Errorf("events = %q; want one DuplicateQuotaName naming ns-b/dup, the quota that counts", ev)
		}
		// Said once.
		p.follow.report("dup")
		if ev := h.events(); len(ev) != 0 {
			t.Errorf("events on a second sync = %q; want none", ev)
		}
		// The older one goes: the other counts.
		p.follow.onQuotaDelete(older)
		if s := p.Filter(context.Background(), unitIn("ns-a", "u", "dup", 0, 4)); !s.IsSuccess() {
			t.Errorf("a 4-CPU unit of dup after ns-b/dup went = %+v; want admitted by ns-a/dup's max of 8", s)
		}
	}
}

func TestOfTwoQuotasOfOneSecondTheFirstSeenCounts(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	a := utiltesting.MakeElasticQuota("tie").Namespace("ns-z").Max(corev1.ResourceCPU, "2").Obj()
	b := utiltesting.MakeElasticQuota("tie").Namespace("ns-a").Max(corev1.ResourceCPU, "8").Obj()
	a.CreationTimestamp, b.CreationTimestamp = at, at
	p, _ := newTestPlugin(t, nil, a, b)
	// An update of the second does not make it count.
	p.follow.onQuota(b.DeepCopy())
	if got := p.quotas["tie"]; got == nil || got.Namespace != "ns-z" {
		t.Errorf("the quota of name tie that counts = %v; want ns-z/tie, seen first", got)
	}
}
