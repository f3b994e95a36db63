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

// Package features parses --feature-gates for both binaries into a Gates
// value that is read once at start and passed down; nothing reads gates from
// global state.
package features

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Names of the feature gates.
const (
	QueueUnitActive       = "QueueUnitActive"
	MaximumExecutionTime  = "MaximumExecutionTime"
	QueueUnitRequeueState = "QueueUnitRequeueState"
)

// Known lists every gate, in a stable order.
var Known = []string{MaximumExecutionTime, QueueUnitActive, QueueUnitRequeueState}

// Gates are the feature gates in force. All default to off.
type Gates struct {
	QueueUnitActive       bool
	MaximumExecutionTime  bool
	QueueUnitRequeueState bool
}

// Parse reads "Name=true,Other=false". An unknown name or a value that is not
// a boolean is an error that names it.
func Parse(s string) (Gates, error) {
	var g Gates
	s = strings.TrimSpace(s)
	if s == "" {
		return g, nil
	}
	for _, kv := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return g, fmt.Errorf("--feature-gates: %q is not Name=true|false", kv)
		}
		on, err := strconv.ParseBool(value)
		if err != nil {
			return g, fmt.Errorf("--feature-gates: %s=%q is not a boolean", name, value)
		}
		switch name {
		case QueueUnitActive:
			g.QueueUnitActive = on
		case MaximumExecutionTime:
			g.MaximumExecutionTime = on
		case QueueUnitRequeueState:
			g.QueueUnitRequeueState = on
		default:
			return g, fmt.Errorf("--feature-gates: unknown gate %q (known: %s)", name, strings.Join(slices.Clone(Known), ", "))
		}
	}
	return g, nil
}
