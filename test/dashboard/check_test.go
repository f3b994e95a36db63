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

package dashboard

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// targetLabels are the labels Prometheus gives every series it scrapes.
var targetLabels = []string{"job", "instance"}

// builtins are Grafana's own variables.
var builtins = []string{"__rate_interval", "__interval", "__range"}

var (
	identifier = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	selector   = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}`)
	matcher    = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*$`)
	grouping   = regexp.MustCompile(`\b(by|without|on|ignoring)\s*\(([^)]*)\)`)
	ranges     = regexp.MustCompile(`\[[^\]]*\]`)
	reference  = regexp.MustCompile(`\$(?:\{([a-zA-Z_][a-zA-Z0-9_]*)\}|([a-zA-Z_][a-zA-Z0-9_]*))`)
	legend     = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
	values     = regexp.MustCompile(`^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)
	// Words of PromQL that are not metric names.
	promql = []string{"sum", "by", "rate", "irate", "increase", "histogram_quantile", "or", "and", "unless", "vector",
		"le", "without", "avg", "max", "min", "count", "on", "ignoring", "sort", "sort_desc", "topk", "bottomk"}
)

// query is what a PromQL expression reads.
type query struct {
	metrics []string
	// matched pairs a metric with a label it matches on.
	matched [][2]string
	// groups are the labels of by, without, on and ignoring; by those of by
	// alone, which are all an aggregation keeps.
	groups, by []string
	problems   []string
}

// parse reads expr: the metrics it names, the labels it matches and groups
// by. It knows the PromQL the dashboard uses, not all of it.
func parse(expr string) query {
	var q query
	expr = selector.ReplaceAllStringFunc(expr, func(s string) string {
		m := selector.FindStringSubmatch(s)
		if m[1] == "" {
			q.problems = append(q.problems, fmt.Sprintf("selector %s names no metric", s))
		}
		for _, part := range splitMatchers(m[2]) {
			l := matcher.FindStringSubmatch(part)
			if l == nil {
				q.problems = append(q.problems, fmt.Sprintf("matcher %q does not parse", part))
				continue
			}
			q.matched = append(q.matched, [2]string{m[1], l[1]})
		}
		return m[1]
	})
	expr = grouping.ReplaceAllStringFunc(expr, func(s string) string {
		m := grouping.FindStringSubmatch(s)
		for l := range strings.SplitSeq(m[2], ",") {
			if l = strings.TrimSpace(l); l != "" {
				q.groups = append(q.groups, l)
				if m[1] == "by" {
					q.by = append(q.by, l)
				}
			}
		}
		return ""
	})
	expr = ranges.ReplaceAllString(expr, "")
	for _, id := range identifier.FindAllString(expr, -1) {
		if !slices.Contains(promql, id) && !slices.Contains(q.metrics, id) {
			q.metrics = append(q.metrics, id)
		}
	}
	return q
}

// splitMatchers splits the inside of a selector at the commas outside
// quotes.
func splitMatchers(s string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quoted:
			i++
		case s[i] == '"':
			quoted = !quoted
		case s[i] == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// references lists the variables s refers to ($name or ${name}).
func references(s string) []string {
	var out []string
	for _, m := range reference.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1]+m[2])
	}
	return out
}

// check returns what is wrong with d, given the labels of every metric
// koord-queue exports.
func check(d dashboard, labels map[string][]string) []string {
	c := &checker{labels: labels, defined: map[string]bool{}, used: map[string]bool{}}
	for _, v := range d.Templating.List {
		c.defined[v.Name] = true
	}
	for _, v := range d.Templating.List {
		c.variable(v)
	}
	for _, p := range d.Panels {
		c.panel(p)
	}
	for _, v := range d.Templating.List {
		if !c.used[v.Name] {
			c.problemf("variable %s is not used", v.Name)
		}
	}
	return c.problems
}

type checker struct {
	labels        map[string][]string
	defined, used map[string]bool
	problems      []string
}

func (c *checker) problemf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// has reports whether metric carries label.
func (c *checker) has(metric, label string) bool {
	return slices.Contains(c.labels[metric], label) || slices.Contains(targetLabels, label)
}

// refer checks that the variables s refers to are defined, and marks them
// used.
func (c *checker) refer(where, s string) {
	for _, name := range references(s) {
		if !c.defined[name] && !slices.Contains(builtins, name) {
			c.problemf("%s refers to variable $%s, which is not defined", where, name)
		}
		c.used[name] = true
	}
}

func (c *checker) variable(v variable) {
	if v.Type != "query" {
		return
	}
	where := "variable " + v.Name
	c.refer(where, v.Query)
	m := values.FindStringSubmatch(v.Query)
	if m == nil {
		c.problemf("%s: query %q is not label_values(metric, label)", where, v.Query)
		return
	}
	q := c.query(where, m[1])
	if len(q.metrics) != 1 {
		c.problemf("%s: query %q names %d metrics, want 1", where, v.Query, len(q.metrics))
		return
	}
	if !c.has(q.metrics[0], m[2]) {
		c.problemf("%s queries label %s, which %s does not have", where, m[2], q.metrics[0])
	}
}

func (c *checker) panel(p panel) {
	where := fmt.Sprintf("panel %q", p.Title)
	c.refer(where, p.Title)
	if p.Type == "row" {
		for _, x := range p.Panels {
			c.panel(x)
		}
		return
	}
	if p.Datasource == nil {
		c.problemf("%s has no data source", where)
	} else {
		c.refer(where, p.Datasource.UID)
	}
	if p.Repeat != "" {
		c.refer(where, "$"+p.Repeat)
		if !slices.Contains(references(p.Title), p.Repeat) {
			c.problemf("%s repeats for each $%s, but its title does not name it", where, p.Repeat)
		}
	}
	if len(p.Targets) == 0 {
		c.problemf("%s queries nothing", where)
	}
	for _, target := range p.Targets {
		c.refer(where, target.Expr)
		c.refer(where, target.LegendFormat)
		q := c.query(where, target.Expr)
		if len(q.metrics) == 0 {
			c.problemf("%s: no metric in %q", where, target.Expr)
			continue
		}
		for _, m := range legend.FindAllStringSubmatch(target.LegendFormat, -1) {
			if !c.keeps(q, m[1]) {
				c.problemf("%s shows label %s, which %q does not keep", where, m[1], target.Expr)
			}
		}
	}
}

// query checks the metrics of expr and the labels it matches and groups by.
func (c *checker) query(where, expr string) query {
	q := parse(expr)
	for _, p := range q.problems {
		c.problemf("%s: %s", where, p)
	}
	for _, m := range q.metrics {
		if _, ok := c.labels[m]; !ok {
			c.problemf("%s queries %s, which koord-queue does not export", where, m)
		}
	}
	for _, m := range q.matched {
		if _, ok := c.labels[m[0]]; ok && !c.has(m[0], m[1]) {
			c.problemf("%s matches label %s, which %s does not have", where, m[1], m[0])
		}
	}
	for _, l := range q.groups {
		for _, m := range q.metrics {
			if _, ok := c.labels[m]; ok && !c.has(m, l) {
				c.problemf("%s groups by label %s, which %s does not have", where, l, m)
			}
		}
	}
	return q
}

// keeps reports whether the result of q has label l: an aggregation keeps
// the labels of its by, a query without one every label of its metrics.
func (c *checker) keeps(q query, l string) bool {
	if len(q.by) > 0 {
		return slices.Contains(q.by, l)
	}
	for _, m := range q.metrics {
		if !c.has(m, l) {
			return false
		}
	}
	return true
}
