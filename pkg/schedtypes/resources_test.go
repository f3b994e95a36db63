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

package schedtypes

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// TestFromListHugeAmounts checks that a quota's amounts beyond the bound are
// read as the bound (unlimited in effect), never wrapped to zero or below.
func TestFromListHugeAmounts(t *testing.T) {
	for _, tc := range []struct {
		name corev1.ResourceName
		q    string
		want int64
	}{
		{corev1.ResourceCPU, "100P", resources.MaxAmount},
		{corev1.ResourceCPU, "9223372036854775807", resources.MaxAmount},
		{corev1.ResourceCPU, "1e1000", resources.MaxAmount},
		{corev1.ResourceMemory, "1e1000", resources.MaxAmount},
		{corev1.ResourceMemory, "8Ei", resources.MaxAmount},
		{corev1.ResourceCPU, "4611686018427387m", 4611686018427387},
		{corev1.ResourceCPU, "0.0001", 1},
		{corev1.ResourceMemory, "1.5", 2},
	} {
		got := FromList(corev1.ResourceList{tc.name: resource.MustParse(tc.q)})[tc.name]
		if got != tc.want {
			t.Errorf("%s %s: got %d, want %d", tc.name, tc.q, got, tc.want)
		}
	}
}
