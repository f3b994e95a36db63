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

package columns

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestResources(t *testing.T) {
	rl := corev1.ResourceList{"memory": resource.MustParse("8Gi"), "cpu": resource.MustParse("500m"), "nvidia.com/gpu": resource.MustParse("1")}
	if got, want := Resources(rl), "cpu=500m,memory=8Gi,nvidia.com/gpu=1"; got != want {
		t.Errorf("Resources = %q, want %q", got, want)
	}
	if got := Resources(nil); got != "" {
		t.Errorf("Resources(nil) = %q, want empty", got)
	}
}

func TestAge(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ago  time.Duration
		want string
	}{{30 * time.Second, "30s"}, {5 * time.Minute, "5m"}, {3*time.Hour + 2*time.Minute, "3h2m"}, {50 * time.Hour, "2d2h"}} {
		if got := Age(metav1.NewTime(now.Add(-tc.ago)), now); got != tc.want {
			t.Errorf("Age(%s) = %q, want %q", tc.ago, got, tc.want)
		}
	}
	if got := Age(metav1.Time{}, now); got != "<unknown>" {
		t.Errorf("Age(zero) = %q", got)
	}
}
