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

package harness

import (
	"fmt"
	"os"
	"sort"
	"strconv"

	"sigs.k8s.io/yaml"
)

// Ranges are the accepted bounds of summary figures, keyed by their dotted
// path in summary.yaml (for example wallToIdealRatio or
// admissionWait.small.p95Seconds). A bound left out is not checked.
type Ranges struct {
	// Source names the run a range file was calibrated from; Sources the
	// runs, when there were several.
	Source  string           `json:"source,omitempty"`
	Sources []string         `json:"sources,omitempty"`
	Figures map[string]Range `json:"figures"`
	// Ungated are the regression figures calibration left out, and why
	// (their runs spread wider than the margin).
	Ungated map[string]string `json:"ungated,omitempty"`
}

// Range bounds one figure (inclusive).
type Range struct {
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// Why says where the bound comes from.
	Why string `json:"why,omitempty"`
}

// LoadRanges reads a range file.
func LoadRanges(path string) (*Ranges, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Ranges{}
	if err := yaml.UnmarshalStrict(data, r); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if len(r.Figures) == 0 {
		return nil, fmt.Errorf("%s names no figures", path)
	}
	return r, nil
}

// Figures flattens a summary.yaml into dotted paths and numbers (booleans
// count as 0 and 1; strings and lists are left out).
func Figures(summaryYAML []byte) (map[string]float64, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(summaryYAML, &doc); err != nil {
		return nil, err
	}
	out := map[string]float64{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, e)
			}
		case float64:
			out[prefix] = x
		case int64:
			out[prefix] = float64(x)
		case bool:
			out[prefix] = 0
			if x {
				out[prefix] = 1
			}
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				out[prefix] = f
			}
		}
	}
	walk("", doc)
	return out, nil
}

// Check compares figures with ranges and returns one line per figure out of
// range or missing, sorted by figure.
func Check(figures map[string]float64, r *Ranges) []string {
	var bad []string
	for name, rg := range r.Figures {
		v, ok := figures[name]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: missing from the summary", name))
		case rg.Min != nil && v < *rg.Min:
			bad = append(bad, fmt.Sprintf("%s = %g, below the minimum %g%s", name, v, *rg.Min, why(rg)))
		case rg.Max != nil && v > *rg.Max:
			bad = append(bad, fmt.Sprintf("%s = %g, above the maximum %g%s", name, v, *rg.Max, why(rg)))
		}
	}
	sort.Strings(bad)
	return bad
}

func why(r Range) string {
	if r.Why == "" {
		return ""
	}
	return " (" + r.Why + ")"
}
