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
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// Resources maps a resource name to an amount: milli-units for CPU, units for
// everything else.
type Resources map[corev1.ResourceName]int64

// FromList converts a ResourceList. Negative amounts are kept as given; the
// API refuses them for QueueUnits.
func FromList(l corev1.ResourceList) Resources {
	if len(l) == 0 {
		return nil
	}
	r := make(Resources, len(l))
	for name, q := range l {
		r[name] = amount(name, q)
	}
	return r
}

// FromListChecked converts a ResourceList a unit asks for, refusing negative
// amounts and amounts beyond resources.MaxAmount instead of wrapping them.
func FromListChecked(l corev1.ResourceList) (Resources, error) {
	if len(l) == 0 {
		return nil, nil
	}
	r := make(Resources, len(l))
	for name, q := range l {
		v, err := resources.Amount(name, q)
		if err != nil {
			return nil, err
		}
		r[name] = v
	}
	return r, nil
}

// amount is q in the units quota counts. A quota's amount beyond
// resources.MaxAmount (max: 100P CPU, 1e1000 bytes) is read as MaxAmount, in
// effect unlimited, instead of wrapping to zero or a negative number.
func amount(name corev1.ResourceName, q resource.Quantity) int64 {
	bound := resource.NewQuantity(resources.MaxAmount, resource.DecimalSI)
	if name == corev1.ResourceCPU {
		bound = resource.NewMilliQuantity(resources.MaxAmount, resource.DecimalSI)
	}
	if q.Cmp(*bound) > 0 {
		return resources.MaxAmount
	}
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// ToList converts back to a ResourceList.
func (r Resources) ToList() corev1.ResourceList {
	if len(r) == 0 {
		return nil
	}
	l := make(corev1.ResourceList, len(r))
	for name, v := range r {
		l[name] = Quantity(name, v)
	}
	return l
}

// Quantity renders one amount as a Quantity.
func Quantity(name corev1.ResourceName, v int64) resource.Quantity {
	if name == corev1.ResourceCPU {
		return *resource.NewMilliQuantity(v, resource.DecimalSI)
	}
	if name == corev1.ResourceMemory || strings.Contains(string(name), "storage") || strings.HasPrefix(string(name), "hugepages-") {
		return *resource.NewQuantity(v, resource.BinarySI)
	}
	return *resource.NewQuantity(v, resource.DecimalSI)
}

// Format renders one amount as a human-readable quantity.
func Format(name corev1.ResourceName, v int64) string {
	q := Quantity(name, v)
	return q.String()
}

// Clone copies r.
func (r Resources) Clone() Resources {
	if r == nil {
		return nil
	}
	return maps.Clone(r)
}

// Add adds o to r in place, allocating r if needed, and returns it.
func (r Resources) Add(o Resources) Resources {
	if len(o) == 0 {
		return r
	}
	if r == nil {
		r = make(Resources, len(o))
	}
	for k, v := range o {
		r[k] += v
	}
	return r
}

// Sub subtracts o from r in place and drops entries that reach zero.
func (r Resources) Sub(o Resources) Resources {
	for k, v := range o {
		if r == nil {
			r = Resources{}
		}
		r[k] -= v
		if r[k] == 0 {
			delete(r, k)
		}
	}
	return r
}

// Scale returns r multiplied by n.
func (r Resources) Scale(n int64) Resources {
	if r == nil {
		return nil
	}
	out := make(Resources, len(r))
	for k, v := range r {
		out[k] = v * n
	}
	return out
}

// Equal reports whether r and o hold the same non-zero amounts.
func (r Resources) Equal(o Resources) bool {
	for k, v := range r {
		if o[k] != v {
			return false
		}
	}
	for k, v := range o {
		if r[k] != v {
			return false
		}
	}
	return true
}

// Covers reports whether r asks at least as much as o of every resource o names.
func (r Resources) Covers(o Resources) bool {
	for k, v := range o {
		if r[k] < v {
			return false
		}
	}
	return true
}

// IsZero reports whether every amount is zero.
func (r Resources) IsZero() bool {
	for _, v := range r {
		if v != 0 {
			return false
		}
	}
	return true
}

// Names returns the resource names in a stable order.
func (r Resources) Names() []corev1.ResourceName {
	names := slices.Collect(maps.Keys(r))
	slices.Sort(names)
	return names
}

// String renders r as "cpu=4,memory=8Gi" in a stable order.
func (r Resources) String() string {
	parts := make([]string, 0, len(r))
	for _, name := range r.Names() {
		parts = append(parts, fmt.Sprintf("%s=%s", name, Format(name, r[name])))
	}
	return strings.Join(parts, ",")
}
