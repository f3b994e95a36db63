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

package framework

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestPodOrphaned(t *testing.T) {
	owned := func(uid string) *corev1.Pod {
		p := &corev1.Pod{}
		if uid != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: "j", UID: k8stypes.UID("u" + uid), Controller: ptr.To(true)}}
		}
		return p
	}
	cases := map[string]struct {
		old, new *corev1.Pod
		want     bool
	}{
		"status change":    {owned("1"), owned("1"), false},
		"orphaned":         {owned("1"), owned(""), true},
		"adopted by other": {owned("1"), owned("2"), true},
		"never owned":      {owned(""), owned(""), false},
	}
	for name, tc := range cases {
		if got := podOrphaned(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: podOrphaned = %v, want %v", name, got, tc.want)
		}
	}
}
