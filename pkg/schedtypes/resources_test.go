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
