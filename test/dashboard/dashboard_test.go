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

// Package dashboard checks the Grafana dashboard shipped in config/grafana:
// every metric a panel queries must be one koord-queue exports.
package dashboard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/koordinator-sh/koord-queue/pkg/metrics"
)

// clientMetrics are exported by controller-runtime's registry for every
// client-go request the binary makes.
var clientMetrics = []string{"rest_client_requests_total", "rest_client_request_duration_seconds"}

var (
	identifier = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	// Words of PromQL that are not metric names.
	promql = []string{"sum", "by", "rate", "histogram_quantile", "or", "vector", "le", "without", "avg", "max", "min", "count", "on", "ignoring"}
)

func TestEveryPanelQueriesAnExportedMetric(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "config", "grafana", "koord-queue.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	if len(d.Panels) == 0 {
		t.Fatal("dashboard has no panels")
	}
	exported := append(metrics.Names(), clientMetrics...)
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, target := range p.Targets {
			found := false
			for _, name := range queried(target.Expr) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")
				if !slices.Contains(exported, base) {
					t.Errorf("panel %q queries %s, which koord-queue does not export", p.Title, name)
				}
				found = true
			}
			if !found {
				t.Errorf("panel %q: no metric in %q", p.Title, target.Expr)
			}
		}
	}
}

// queried returns the metric names of a PromQL expression: identifiers that
// are not functions, keywords, label names or label values.
func queried(expr string) []string {
	// Drop label matchers and grouping lists, which hold label names and values.
	expr = regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(expr, "")
	expr = regexp.MustCompile(`\b(by|without|on|ignoring)\s*\([^)]*\)`).ReplaceAllString(expr, "")
	expr = regexp.MustCompile(`\[[^\]]*\]`).ReplaceAllString(expr, "")
	var out []string
	for _, id := range identifier.FindAllString(expr, -1) {
		if !slices.Contains(promql, id) {
			out = append(out, id)
		}
	}
	return out
}
