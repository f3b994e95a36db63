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
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// OutputGroupVersion is the apiVersion of the objects `queues` and `why`
// print with -o: documents of the plugin, never served by an API server.
// Within v1alpha1 fields are only added. `list` prints the visibility API's
// QueueUnitsSummary instead.
const OutputGroupVersion = "kubectl.koord-queue.x-k8s.io/v1alpha1"

// Kinds of the plugin's own output objects.
const (
	KindQueueList   = "QueueList"
	KindExplanation = "Explanation"
)

// outputFlags are kubectl's printing flags (cli-runtime): -o json, yaml,
// jsonpath=..., go-template=... and their companions print the command's
// object; no -o, or -o wide, prints the plugin's table.
type outputFlags struct {
	print *genericclioptions.PrintFlags
}

func newOutputFlags() *outputFlags {
	f := genericclioptions.NewPrintFlags("")
	// An answer is one object, not a list of named objects: no -o name.
	f.NamePrintFlags = nil
	return &outputFlags{print: f}
}

func (f *outputFlags) addFlags(cmd *cobra.Command) {
	f.print.AddFlags(cmd)
	cmd.Flags().Lookup("output").Usage = fmt.Sprintf("Output format: wide, or one of (%s); default a table.",
		strings.Join(f.print.AllowedFormats(), ", "))
}

// wide is -o wide.
func (f *outputFlags) wide() bool { return *f.print.OutputFormat == "wide" }

// table is true when the table is printed, not an object.
func (f *outputFlags) table() bool {
	switch *f.print.OutputFormat {
	case "", "wide":
		t := f.print.TemplatePrinterFlags.TemplateArgument
		return t == nil || *t == ""
	}
	return false
}

// validate fails on a format kubectl's printers do not know.
func (f *outputFlags) validate() error {
	if f.table() {
		return nil
	}
	_, err := f.print.ToPrinter()
	return err
}

// printObject writes obj in the format of -o.
func (f *outputFlags) printObject(w io.Writer, obj runtime.Object) error {
	p, err := f.print.ToPrinter()
	if err != nil {
		return err
	}
	return p.PrintObj(obj, w)
}

// ListObject is what `list -o` prints: the visibility API's
// QueueUnitsSummary, one item per row (every phase; phase is the --phase
// filter, empty without it).
func ListObject(s *Snapshot, rows []UnitRow, phase string) *visibilityv1alpha1.QueueUnitsSummary {
	units := map[string]*schedv1alpha1.QueueUnit{}
	for i := range s.Units {
		units[s.Units[i].Namespace+"/"+s.Units[i].Name] = &s.Units[i]
	}
	out := &visibilityv1alpha1.QueueUnitsSummary{
		TypeMeta: metav1.TypeMeta{APIVersion: visibilityv1alpha1.SchemeGroupVersion.String(), Kind: "QueueUnitsSummary"},
		Phase:    phase, Total: int32(len(rows)), Items: []visibilityv1alpha1.QueueUnitSummary{},
	}
	for _, r := range rows {
		it := visibilityv1alpha1.QueueUnitSummary{
			ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name},
			Phase:      r.Phase, Queue: r.Queue, Quota: r.Quota, Priority: r.Priority, PositionInQueue: r.Position, Message: r.Reason,
		}
		if u := units[r.Namespace+"/"+r.Name]; u != nil {
			it.CreationTimestamp = u.CreationTimestamp
			it.Request = queueunit.Request(u).ToList()
			it.Reason = queueunit.WaitReason(u)
		}
		out.Items = append(out.Items, it)
	}
	return out
}

// QueuesObject is what `queues -o` prints: kind QueueList, the rows as items.
func QueuesObject(rows []QueueRow) (runtime.Object, error) {
	return document(KindQueueList, map[string]any{"items": nonNil(rows)})
}

// ExplanationObject is what `why -o` prints: kind Explanation, the fields
// of Explanation at the top.
func ExplanationObject(x Explanation) (runtime.Object, error) {
	return document(KindExplanation, x)
}

// document turns v into an object of the plugin's output group.
func document(kind string, v any) (runtime.Object, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	obj := map[string]any{}
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(OutputGroupVersion)
	u.SetKind(kind)
	return u, nil
}
