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

package kubectlplugin

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"
)

// PrintList writes the table of `list`. The NAMESPACE column shows with
// allNamespaces, JOB and REQUEST with wide (-o wide).
func PrintList(w io.Writer, rows []UnitRow, wide, allNamespaces bool) error {
	tw := printers.GetNewTabWriter(w)
	p := &printer{w: tw}
	header := []string{"NAME", "QUEUE", "QUOTA", "PHASE", "POSITION", "PRIORITY", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	if wide {
		header = append(header, "JOB", "REQUEST")
	}
	header = append(header, "REASON")
	p.println(strings.Join(header, "\t"))
	for _, r := range rows {
		cells := []string{r.Name, r.Queue, dash(r.Quota), r.Phase, position(r.Position), strconv.Itoa(int(r.Priority)), r.Age}
		if allNamespaces {
			cells = append([]string{r.Namespace}, cells...)
		}
		if wide {
			cells = append(cells, dash(r.Job), dash(r.Request))
		}
		cells = append(cells, oneLine(r.Reason))
		p.println(strings.Join(cells, "\t"))
	}
	return p.flush(tw)
}

// PrintQueues writes the table of `queues`.
func PrintQueues(w io.Writer, rows []QueueRow) error {
	tw := printers.GetNewTabWriter(w)
	p := &printer{w: tw}
	p.println("NAME\tPOLICY\tPRIORITY\tPENDING\tADMITTED\tUSED/MIN/MAX")
	for _, r := range rows {
		prio := "-"
		if r.Priority != nil {
			prio = strconv.Itoa(int(*r.Priority))
		}
		p.printf("%s\t%s\t%s\t%d\t%d\t%s\n", r.Name, dash(r.Policy), prio, r.Pending, r.Admitted, usage(r.Usage))
	}
	return p.flush(tw)
}

// usage writes "cpu 4/4/8, memory 8Gi/-/16Gi": used/min/max, "-" for no limit.
func usage(levels []ResourceLevel) string {
	if len(levels) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(levels))
	for _, l := range levels {
		parts = append(parts, fmt.Sprintf("%s %s/%s/%s", l.Resource, l.Used, dash(l.Min), dash(l.Max)))
	}
	return strings.Join(parts, ", ")
}

// PrintExplanation writes the answer of `why` for people.
func PrintExplanation(w io.Writer, x Explanation) error {
	tw := printers.GetNewTabWriter(w)
	p, out := &printer{w: tw}, &printer{w: w}
	unit := x.Namespace + "/" + x.Name
	if x.Job != "" {
		unit += " (" + x.Job + ")"
	}
	p.printf("QueueUnit:\t%s\n", unit)
	phase := x.Phase
	if !x.Active {
		phase += " (inactive: spec.active is false)"
	}
	p.printf("Phase:\t%s\n", phase)
	p.printf("Priority:\t%d\n", x.Priority)
	if x.Request != "" {
		p.printf("Request:\t%s\n", x.Request)
	}
	queue := dash(x.Queue)
	if x.Policy != "" {
		queue += " (policy " + x.Policy + ")"
	}
	p.printf("Queue:\t%s\n", queue)
	switch {
	case x.Position > 0:
		p.printf("Position:\t%d\n", x.Position)
	case x.Phase == "Enqueued" || x.Phase == "<new>":
		p.printf("Position:\tnot known yet\n")
	}
	p.printf("Quota:\t%s\n", dash(x.Quota))
	p.printf("Reason:\t%s\n", dash(x.Reason))
	if err := p.flush(tw); err != nil {
		return err
	}
	if len(x.QuotaPath) > 0 {
		out.println("\nQuota path (leaf to root):")
		tw = printers.GetNewTabWriter(w)
		p = &printer{w: tw}
		p.println("  QUOTA\tRESOURCE\tUSED\tMIN\tMAX\tSHORT")
		for _, lvl := range x.QuotaPath {
			name := lvl.Name
			if !lvl.Exists {
				name += " (missing)"
			}
			if len(lvl.Resources) == 0 {
				p.printf("  %s\t-\t-\t-\t-\t\n", name)
			}
			for _, r := range lvl.Resources {
				p.printf("  %s\t%s\t%s\t%s\t%s\t%s\n", name, r.Resource, r.Used, dash(r.Min), dash(r.Max), r.Short)
			}
		}
		if err := p.flush(tw); err != nil {
			return err
		}
	}
	if x.Position > 1 {
		out.printf("\nAhead in queue %s:\n", x.Queue)
		tw = printers.GetNewTabWriter(w)
		p = &printer{w: tw}
		p.println("  POSITION\tUNIT\tPRIORITY\tQUOTA\tREASON")
		for _, e := range x.Ahead {
			p.printf("  %d\t%s/%s\t%d\t%s\t%s\n", e.Position, e.Namespace, e.Name, e.Priority, dash(e.Quota), oneLine(e.Message))
		}
		if err := p.flush(tw); err != nil {
			return err
		}
		if shown := int32(len(x.Ahead)); x.Position-1 > shown+x.HiddenAhead {
			out.printf("  ... and %d more\n", x.Position-1-shown-x.HiddenAhead)
		}
		if x.HiddenAhead > 0 {
			out.printf("  (%d more in namespaces you may not list)\n", x.HiddenAhead)
		}
	}
	for _, n := range x.Notes {
		out.printf("\nNote: %s", n)
	}
	if len(x.Notes) > 0 {
		out.println("")
	}
	return out.err
}

func position(p int32) string {
	if p == 0 {
		return "-"
	}
	return strconv.Itoa(int(p))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// PrintNotes writes what the answer could not read, one warning a line.
func PrintNotes(w io.Writer, notes []string) error {
	p := &printer{w: w}
	for _, n := range notes {
		p.printf("Warning: %s\n", n)
	}
	return p.err
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// printer writes lines and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) println(s string) { p.printf("%s\n", s) }

// flush flushes a tab writer after the lines written through p.
func (p *printer) flush(f interface{ Flush() error }) error {
	if p.err != nil {
		return p.err
	}
	return f.Flush()
}
