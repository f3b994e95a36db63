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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/util/columns"
)

// UnitRow is one line of `list` (and its -o json|yaml item).
type UnitRow struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Job       string `json:"job,omitempty"`
	Queue     string `json:"queue"`
	Quota     string `json:"quota"`
	Phase     string `json:"phase"`
	// Position in the queue, from 1; 0 when admitted or not known.
	Position int32  `json:"position"`
	Priority int32  `json:"priority"`
	Age      string `json:"age"`
	Request  string `json:"request,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// ListView builds the rows of `list`: every unit that is not finished,
// pending ones first in queue order, then admitted ones by name.
func ListView(s *Snapshot) []UnitRow {
	var rows []UnitRow
	for i := range s.Units {
		u := &s.Units[i]
		if queueunit.IsFinished(u.Status.Phase) {
			continue
		}
		row := UnitRow{
			Namespace: u.Namespace, Name: u.Name, Job: jobRef(u), Queue: queueunit.QueueOf(u), Quota: queueunit.QuotaOf(u),
			Phase: phaseOf(u), Priority: queueunit.Priority(u), Age: columns.Age(u.CreationTimestamp, s.Now),
			Request: columns.Resources(queueunit.Request(u).ToList()), Reason: u.Status.Message,
		}
		if e, ok := s.Position(u); ok && queueunit.IsPending(u.Status.Phase) {
			row.Position = e.Position
		}
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(a, b UnitRow) int {
		if pa, pb := a.Position == 0, b.Position == 0; pa != pb {
			if pb {
				return -1
			}
			return 1
		}
		if c := strings.Compare(a.Queue, b.Queue); c != 0 {
			return c
		}
		if a.Position != b.Position {
			return int(a.Position - b.Position)
		}
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return rows
}

// ResourceLevel is one resource of one quota.
type ResourceLevel struct {
	Resource string `json:"resource"`
	Used     string `json:"used"`
	Min      string `json:"min,omitempty"`
	// Max is empty when the quota does not limit the resource.
	Max string `json:"max,omitempty"`
	// Short is set when the unit's request does not fit under Max.
	Short string `json:"short,omitempty"`
}

// QuotaLevel is one quota on the path from a unit's quota to the root.
type QuotaLevel struct {
	Name      string          `json:"name"`
	Exists    bool            `json:"exists"`
	Resources []ResourceLevel `json:"resources"`
}

// Explanation is the answer of `why`.
type Explanation struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Job       string `json:"job,omitempty"`
	Phase     string `json:"phase"`
	Active    bool   `json:"active"`
	Priority  int32  `json:"priority"`
	Queue     string `json:"queue"`
	Policy    string `json:"policy,omitempty"`
	Quota     string `json:"quota"`
	Request   string `json:"request,omitempty"`
	// Position from 1; 0 when admitted or not known.
	Position int32 `json:"position"`
	// QueueLength is the last position the caller may see in the queue (a
	// tenant may not see units behind it).
	QueueLength int32        `json:"queueLength,omitempty"`
	Reason      string       `json:"reason,omitempty"`
	QuotaPath   []QuotaLevel `json:"quotaPath"`
	// Ahead are the units before this one in its queue that the caller may
	// see, nearest first; HiddenAhead counts the others.
	Ahead       []Entry  `json:"ahead,omitempty"`
	HiddenAhead int32    `json:"hiddenAhead,omitempty"`
	Source      string   `json:"source"`
	Notes       []string `json:"notes,omitempty"`
}

// maxAhead bounds the units `why` lists ahead of a unit.
const maxAhead = 10

// Explain builds the answer of `why` for u.
func Explain(s *Snapshot, u *schedv1alpha1.QueueUnit) Explanation {
	x := Explanation{
		Namespace: u.Namespace, Name: u.Name, Job: jobRef(u), Phase: phaseOf(u), Active: queueunit.IsActive(u),
		Priority: queueunit.Priority(u), Queue: queueunit.QueueOf(u), Quota: queueunit.QuotaOf(u), Reason: u.Status.Message,
		Request: columns.Resources(queueunit.Request(u).ToList()), Source: s.Source, Notes: s.Notes,
	}
	if q := s.Queues[x.Queue]; q != nil {
		x.Policy = string(q.Spec.QueuePolicy)
	}
	order := s.Order[x.Queue]
	if n := len(order); n > 0 {
		x.QueueLength = order[n-1].Position
	}
	if e, ok := s.Position(u); ok && queueunit.IsPending(u.Status.Phase) {
		x.Position = e.Position
		var ahead []Entry
		for _, o := range order {
			if o.Position < e.Position {
				ahead = append(ahead, o)
			}
		}
		x.HiddenAhead = e.Position - 1 - int32(len(ahead))
		slices.Reverse(ahead)
		if len(ahead) > maxAhead {
			ahead = ahead[:maxAhead]
		}
		x.Ahead = ahead
	}
	var req schedtypes.Resources
	if queueunit.IsPending(u.Status.Phase) {
		req = queueunit.Request(u)
	}
	for _, name := range s.Tree.Path(schedtypes.QuotaName(x.Quota)) {
		info, _ := s.Tree.Get(name)
		x.QuotaPath = append(x.QuotaPath, quotaLevel(info, req))
	}
	return x
}

// quotaLevel lists a quota's resources: those it limits, uses or is asked.
func quotaLevel(info schedtypes.Info, req schedtypes.Resources) QuotaLevel {
	names := map[corev1.ResourceName]bool{}
	for _, r := range []schedtypes.Resources{info.Min, info.Max, info.Used, req} {
		for n := range r {
			names[n] = true
		}
	}
	sorted := make([]corev1.ResourceName, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	lvl := QuotaLevel{Name: string(info.Name), Exists: info.Exists, Resources: []ResourceLevel{}}
	for _, n := range sorted {
		r := ResourceLevel{Resource: string(n), Used: schedtypes.Format(n, info.Used[n])}
		if v, ok := info.Min[n]; ok {
			r.Min = schedtypes.Format(n, v)
		}
		if v, ok := info.Max[n]; ok {
			r.Max = schedtypes.Format(n, v)
			if missing := info.Used[n] + req[n] - v; req[n] > 0 && missing > 0 {
				r.Short = schedtypes.Format(n, missing)
			}
		}
		lvl.Resources = append(lvl.Resources, r)
	}
	return lvl
}

// QueueRow is one line of `queues`.
type QueueRow struct {
	Name     string `json:"name"`
	Policy   string `json:"policy,omitempty"`
	Priority *int32 `json:"priority,omitempty"`
	Pending  int32  `json:"pending"`
	Admitted int32  `json:"admitted"`
	// Usage is the queue's quota (the ElasticQuota of its name).
	Usage []ResourceLevel `json:"usage,omitempty"`
}

// QueuesView builds the rows of `queues`, by name.
func QueuesView(s *Snapshot) []QueueRow {
	charged := s.Charged
	var rows []QueueRow
	for _, name := range s.queueNames() {
		row := QueueRow{Name: name}
		if q := s.Queues[name]; q != nil {
			row.Policy, row.Priority = string(q.Spec.QueuePolicy), q.Spec.Priority
		}
		// The last position counts the units the caller may not see too.
		if order := s.Order[name]; len(order) > 0 {
			row.Pending = max(int32(len(order)), order[len(order)-1].Position)
		}
		for i := range charged {
			if queueunit.HoldsQuota(charged[i].Status.Phase) && queueunit.QueueOf(&charged[i]) == name {
				row.Admitted++
			}
		}
		if q, ok := s.QuotaUsage[name]; ok {
			row.Usage = usageOf(q)
		} else if info, ok := s.Tree.Get(schedtypes.QuotaName(name)); ok && info.Exists {
			row.Usage = quotaLevel(info, nil).Resources
		}
		rows = append(rows, row)
	}
	return rows
}

// usageOf is a quota's usage as the scheduler counts it, for the resources
// the quota limits or uses (not those only asked for).
func usageOf(q *visibilityv1alpha1.Quota) []ResourceLevel {
	out := []ResourceLevel{}
	for _, r := range q.Resources {
		if r.Min.IsZero() && r.Max == nil && r.Used.IsZero() {
			continue
		}
		l := ResourceLevel{Resource: string(r.Name), Used: r.Used.String()}
		if !r.Min.IsZero() {
			l.Min = r.Min.String()
		}
		if r.Max != nil {
			l.Max = r.Max.String()
		}
		out = append(out, l)
	}
	return out
}

func jobRef(u *schedv1alpha1.QueueUnit) string {
	if ref := u.Spec.ConsumerRef; ref != nil {
		return strings.ToLower(ref.Kind) + "/" + ref.Name
	}
	return ""
}

func phaseOf(u *schedv1alpha1.QueueUnit) string {
	if u.Status.Phase == "" {
		return "<new>"
	}
	return string(u.Status.Phase)
}
