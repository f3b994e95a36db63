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

package scheduler

import (
	"testing"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

func TestShortfallsMatch(t *testing.T) {
	m := shortfalls{}
	m.add("q", "queue", "cohort", "ns/a", schedtypes.Resources{"cpu": 2000, "memory": 10}, 10, &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitInsufficientQuota, Subject: "q", Detail: "cpu"}})
	for _, tc := range []struct {
		name  string
		quota schedtypes.QuotaName
		queue schedtypes.QueueName
		req   schedtypes.Resources
		prio  int32
		want  bool
	}{
		{"same shape and priority", "q", "queue", schedtypes.Resources{"cpu": 2000, "memory": 10}, 10, true},
		{"asks more, lower priority", "q", "queue", schedtypes.Resources{"cpu": 3000, "memory": 10, "gpu": 1}, 5, true},
		{"asks less cpu", "q", "queue", schedtypes.Resources{"cpu": 1000, "memory": 10}, 5, false},
		{"asks no memory", "q", "queue", schedtypes.Resources{"cpu": 3000}, 5, false},
		{"higher priority may preempt", "q", "queue", schedtypes.Resources{"cpu": 2000, "memory": 10}, 11, false},
		{"other quota", "p", "queue", schedtypes.Resources{"cpu": 2000, "memory": 10}, 10, false},
		{"other queue", "q", "other", schedtypes.Resources{"cpu": 2000, "memory": 10}, 10, false},
	} {
		sf, ok := m.match(tc.quota, tc.queue, tc.req, tc.prio)
		if ok != tc.want {
			t.Errorf("%s: match = %v, want %v", tc.name, ok, tc.want)
		}
		if ok && (sf.unit != "ns/a" || sf.cohort != "cohort" || sf.failure.Reason.String() != "short/q/cpu") {
			t.Errorf("%s: matched %+v", tc.name, sf)
		}
	}
}

func TestShortfallsBounded(t *testing.T) {
	m := shortfalls{}
	for i := range 2 * maxShortfallsPerScope {
		m.add("q", "queue", "", "u", schedtypes.Resources{"cpu": int64(100 - i)}, 0, &schedtypes.Failure{})
	}
	if n := len(m[shortfallScope{"q", "queue"}]); n != maxShortfallsPerScope {
		t.Fatalf("remembered %d shapes, want %d", n, maxShortfallsPerScope)
	}
}
