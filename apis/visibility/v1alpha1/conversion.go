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

package v1alpha1

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// DefaultLimit bounds a list of units when the request gives no limit.
const DefaultLimit = 1000

// Phases are the values of the query parameter phase, the default first.
var Phases = []string{PhaseEnqueued, PhaseReserved, PhaseDequeued, PhaseRunning}

// NewQueueUnitsOptions are the options of a request without query parameters.
func NewQueueUnitsOptions() *QueueUnitsOptions {
	return &QueueUnitsOptions{Limit: DefaultLimit, Phase: PhaseEnqueued}
}

func addConversionFuncs(scheme *runtime.Scheme) error {
	return scheme.AddConversionFunc((*url.Values)(nil), (*QueueUnitsOptions)(nil), func(a, b any, s conversion.Scope) error {
		return Convert_url_Values_To_v1alpha1_QueueUnitsOptions(a.(*url.Values), b.(*QueueUnitsOptions), s)
	})
}

// Convert_url_Values_To_v1alpha1_QueueUnitsOptions reads limit, offset and
// phase from a query into out, leaving what the query does not give as it
// is (start from NewQueueUnitsOptions); other parameters are ignored. A value
// out of range is an error naming the parameter.
//
//nolint:revive // named as apimachinery's conversion functions are
func Convert_url_Values_To_v1alpha1_QueueUnitsOptions(in *url.Values, out *QueueUnitsOptions, _ conversion.Scope) error {
	count := func(name string, into *int64) error {
		s := in.Get(name)
		if s == "" {
			return nil
		}
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("%s must be a non-negative integer, got %q", name, s)
		}
		*into = n
		return nil
	}
	if err := count("limit", &out.Limit); err != nil {
		return err
	}
	if err := count("offset", &out.Offset); err != nil {
		return err
	}
	if s := in.Get("phase"); s != "" {
		out.Phase = ""
		for _, p := range Phases {
			if strings.EqualFold(s, p) {
				out.Phase = p
			}
		}
		if out.Phase == "" {
			return fmt.Errorf("phase %q is not supported: use one of %s (Enqueued, the default, lists the pending units in scheduling order)", s, strings.Join(Phases, ", "))
		}
	}
	return nil
}
