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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/columns"
)

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
// Each row carries the unit (includeObject=Object); the server trims it to
// its metadata (the default) or drops it as the request asks.
func toTable(s *visibilityv1alpha1.QueueUnitsSummary, now time.Time) *metav1.Table {
	t := &metav1.Table{
		ColumnDefinitions: tableColumns,
		Rows:              make([]metav1.TableRow, 0, len(s.Items)),
	}
	for i := range s.Items {
		it := &s.Items[i]
		row := metav1.TableRow{Cells: []any{
			it.Namespace, it.Name, int64(it.PositionInQueue), int64(it.Priority), it.Phase, it.Queue, it.Quota,
			columns.Resources(it.Request), columns.Age(it.CreationTimestamp, now), it.Message,
		}}
		row.Object = runtime.RawExtension{Object: &unitObject{
			TypeMeta: metav1.TypeMeta{Kind: "QueueUnitSummary", APIVersion: gv.String()}, QueueUnitSummary: *it.DeepCopy(),
		}}
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
