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

package resources

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// MaxAmount bounds every amount a unit may ask for, in the units quota counts
// (milli-units for CPU, units for everything else): 2^62, so that a sum of two
// bounded amounts still fits an int64. A larger or negative request is refused,
// never wrapped or read as zero.
const MaxAmount int64 = 1 << 62

// Amount is q in the units quota counts, or an error when q is negative or
// above MaxAmount.
func Amount(name corev1.ResourceName, q resource.Quantity) (int64, error) {
	if q.Sign() < 0 {
		return 0, fmt.Errorf("%s: %s is negative", name, q.String())
	}
	bound := resource.NewQuantity(MaxAmount, resource.DecimalSI)
	if name == corev1.ResourceCPU {
		bound = resource.NewMilliQuantity(MaxAmount, resource.DecimalSI)
	}
	if q.Cmp(*bound) > 0 {
		return 0, fmt.Errorf("%s: %s is above the bound %s", name, q.String(), bound.String())
	}
	if name == corev1.ResourceCPU {
		return q.MilliValue(), nil
	}
	return q.Value(), nil
}

// Demand sums what pod sets ask of quota, refusing any amount that is
// negative or would pass MaxAmount.
type Demand map[corev1.ResourceName]int64

// Add adds count pods of perPod to d; what names the pod set in the error.
// On error d is left as it was.
func (d Demand) Add(what string, perPod corev1.ResourceList, count int64) error {
	if count < 0 {
		return fmt.Errorf("%s: count %d is negative", what, count)
	}
	next := make(map[corev1.ResourceName]int64, len(perPod))
	for name, q := range perPod {
		v, err := Amount(name, q)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if count > 0 && v > (MaxAmount-d[name])/count {
			return fmt.Errorf("%s: %s: %d x %s makes more than the bound %d", what, name, count, q.String(), MaxAmount)
		}
		next[name] = d[name] + v*count
	}
	for name, v := range next {
		d[name] = v
	}
	return nil
}

// AddSat is a + b held within int64. Amounts are at most MaxAmount, but a
// usage beside a request, or a running sum of them, may pass 2^63 - 1, and
// wrapping would turn "far too much" into a negative amount that fits
// anything.
func AddSat(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// SubSat is a - b held within int64.
func SubSat(a, b int64) int64 {
	if b == math.MinInt64 {
		return AddSat(AddSat(a, math.MaxInt64), 1)
	}
	return AddSat(a, -b)
}
