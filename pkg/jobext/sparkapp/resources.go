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

package sparkapp

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Spark's defaults for a pod's memory and its overhead.
const (
	defaultMemory          = "1g"
	minMemoryOverheadBytes = 384 << 20
	jvmOverheadFactor      = 0.1
	nonJVMOverheadFactor   = 0.4
)

// ParseMemory reads Spark's memory strings ("512m", "2g", "1024k", "1t", with
// an optional "b") as binary units; anything else is read as a Kubernetes
// quantity ("512Mi").
func ParseMemory(s string) (resource.Quantity, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	v = strings.TrimSuffix(v, "b")
	shift := map[byte]uint{'k': 10, 'm': 20, 'g': 30, 't': 40, 'p': 50}
	if n := len(v); n > 1 {
		if sh, ok := shift[v[n-1]]; ok {
			num, err := strconv.ParseInt(v[:n-1], 10, 64)
			if err == nil && num >= 0 {
				return *resource.NewQuantity(num<<sh, resource.BinarySI), nil
			}
		}
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("memory %q is neither a Spark size nor a quantity: %w", s, err)
	}
	return q, nil
}

// podMemory is memory plus overhead: the overhead field if set, else
// max(384Mi, factor x memory).
func podMemory(memory, overhead *string, factor float64) (resource.Quantity, error) {
	memStr := defaultMemory
	if memory != nil {
		memStr = *memory
	}
	mem, err := ParseMemory(memStr)
	if err != nil {
		return resource.Quantity{}, err
	}
	var extra resource.Quantity
	if overhead != nil {
		if extra, err = ParseMemory(*overhead); err != nil {
			return resource.Quantity{}, err
		}
	} else {
		b := int64(math.Ceil(float64(mem.Value()) * factor))
		extra = *resource.NewQuantity(max(b, minMemoryOverheadBytes), resource.BinarySI)
	}
	mem.Add(extra)
	return mem, nil
}

// podCPU is coreRequest, else cores, else coreLimit, else one core.
func podCPU(coreRequest *string, cores *int32, coreLimit *string) (resource.Quantity, error) {
	switch {
	case coreRequest != nil:
		return parseCPU(*coreRequest)
	case cores != nil:
		return *resource.NewQuantity(int64(*cores), resource.DecimalSI), nil
	case coreLimit != nil:
		return parseCPU(*coreLimit)
	}
	return resource.MustParse("1"), nil
}

func parseCPU(s string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("cpu %q: %w", s, err)
	}
	return q, nil
}
