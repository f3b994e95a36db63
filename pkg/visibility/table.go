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

package visibility

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/columns"
)

// format is the answer's shape chosen from the Accept header and the
// includeObject query parameter.
type format struct {
	table bool
	// tableVersion is meta.k8s.io's v1 or v1beta1.
	tableVersion string
	// include is None, Metadata (the default) or Object: what each row carries.
	include metav1.IncludeObjectPolicy
}

// negotiate reads Accept the way kube-apiserver does for Table output: the
// first acceptable media type wins; application/json;as=Table;g=meta.k8s.io;
// v=v1 (or v1beta1) asks for a Table, plain JSON or a wildcard for the object.
func negotiate(r *http.Request) (format, error) {
	f := format{include: metav1.IncludeMetadata}
	switch p := metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject")); p {
	case "":
	case metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
		f.include = p
	default:
		return f, fmt.Errorf("includeObject must be None, Metadata or Object, got %q", p)
	}
	accept := r.Header.Get("Accept")
	if strings.TrimSpace(accept) == "" {
		return f, nil
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/json", "application/*", "*/*":
		default:
			continue
		}
		switch params["as"] {
		case "":
			return f, nil
		case "Table":
			if params["g"] == metav1.GroupName && (params["v"] == "v1" || params["v"] == "v1beta1") {
				f.table, f.tableVersion = true, params["v"]
				return f, nil
			}
		}
	}
	return f, fmt.Errorf("none of the media types in Accept %q is served: use application/json, optionally with as=Table;g=meta.k8s.io;v=v1", accept)
}

// tableColumns are the columns of the Table answer. Priority 1 columns show
// only with kubectl -o wide.
var tableColumns = []metav1.TableColumnDefinition{
	{Name: "Namespace", Type: "string", Description: "Namespace of the QueueUnit."},
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the QueueUnit."},
	{Name: "Position", Type: "integer", Description: "Position in its queue, counted from 1 over every unit of the queue; 0 once admitted."},
	{Name: "Priority", Type: "integer", Description: "Priority inside the queue."},
	{Name: "Phase", Type: "string", Description: "The unit's phase."},
	{Name: "Queue", Type: "string", Description: "The queue the unit waits in."},
	{Name: "Quota", Type: "string", Priority: 1, Description: "The ElasticQuota the unit is charged to."},
	{Name: "Request", Type: "string", Priority: 1, Description: "What the unit asks for in all."},
	{Name: "Age", Type: "string", Description: "Time since the unit was created."},
	{Name: "Message", Type: "string", Description: "Why the unit waits."},
}

// toTable renders a summary as a meta.k8s.io Table, one row per unit.
func toTable(s *visibilityv1alpha1.QueueUnitsSummary, f format, now time.Time) *metav1.Table {
	t := &metav1.Table{
		TypeMeta:          metav1.TypeMeta{Kind: "Table", APIVersion: metav1.GroupName + "/" + f.tableVersion},
		ColumnDefinitions: tableColumns,
		Rows:              make([]metav1.TableRow, 0, len(s.Items)),
	}
	for i := range s.Items {
		it := &s.Items[i]
		row := metav1.TableRow{Cells: []any{
			it.Namespace, it.Name, int64(it.PositionInQueue), int64(it.Priority), it.Phase, it.Queue, it.Quota,
			columns.Resources(it.Request), columns.Age(it.CreationTimestamp, now), it.Message,
		}}
		switch f.include {
		case metav1.IncludeObject:
			obj := it.DeepCopy()
			row.Object = runtime.RawExtension{Object: &unitObject{
				TypeMeta: metav1.TypeMeta{Kind: "QueueUnitSummary", APIVersion: gv.String()}, QueueUnitSummary: *obj,
			}}
		case metav1.IncludeMetadata:
			row.Object = runtime.RawExtension{Object: &metav1.PartialObjectMetadata{
				TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: metav1.GroupName + "/" + f.tableVersion},
				ObjectMeta: metav1.ObjectMeta{Name: it.Name, Namespace: it.Namespace, CreationTimestamp: it.CreationTimestamp},
			}}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// unitObject is a row's whole object (includeObject=Object): the summary of
// one unit with a kind, so that clients can decode it.
type unitObject struct {
	metav1.TypeMeta `json:",inline"`
	visibilityv1alpha1.QueueUnitSummary
}

func (u *unitObject) DeepCopyObject() runtime.Object {
	return &unitObject{TypeMeta: u.TypeMeta, QueueUnitSummary: *u.DeepCopy()}
}
