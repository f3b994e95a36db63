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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// Where a Snapshot's queue order came from.
const (
	SourceVisibility = "visibility"
	SourceObjects    = "objects"
)

// Entry is one pending unit in its queue's order.
type Entry struct {
	Namespace, Name string
	Quota           string
	Priority        int32
	// Position counts from 1 over the whole queue.
	Position int32
	Message  string
}

// Snapshot is everything a command shows, read once.
type Snapshot struct {
	// Units are the QueueUnits of the asked namespace (or of all).
	Units []schedv1alpha1.QueueUnit
	// Charged are the units the quota usage was computed from: every
	// namespace's when the user may list them, else Units.
	Charged []schedv1alpha1.QueueUnit
	// Queues are the Queues koord-queue serves, by name.
	Queues map[string]*schedv1alpha1.Queue
	// Tree holds every ElasticQuota with the usage of the admitted units.
	Tree *quota.Tree
	// Order lists each queue's pending units in order, by queue name. With
	// the visibility API a tenant sees only its namespaces' units, with the
	// positions of the whole queue.
	Order map[string][]Entry
	// Source is SourceVisibility or SourceObjects.
	Source string
	// QuotaUsage is the visibility API's quotas, by name: the scheduler's
	// own usage, which `queues` prints instead of Tree's; nil when not read.
	QuotaUsage map[string]*visibilityv1alpha1.Quota
	// Gates are the scheduler's feature gates; nil when unknown.
	Gates map[string]bool
	// VisibilityDown says that the visibility API is registered but does
	// not answer; empty otherwise.
	VisibilityDown string
	// Notes say what could not be read, so the answer may be partial.
	Notes []string
	Now   time.Time
}

// Reader is what Gather reads the cluster with.
type Reader struct {
	Client client.Client
	// Visibility calls the aggregated API; nil reads the objects only.
	Visibility rest.Interface
}

// Gather reads a Snapshot of namespace ns ("" for all namespaces).
func (r *Reader) Gather(ctx context.Context, ns string, now time.Time) (*Snapshot, error) {
	s := &Snapshot{Queues: map[string]*schedv1alpha1.Queue{}, Order: map[string][]Entry{}, Tree: quota.New(1), Now: now, Source: SourceObjects}
	units := &schedv1alpha1.QueueUnitList{}
	if err := r.Client.List(ctx, units, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list queueunits: %w", err)
	}
	s.Units = units.Items
	r.readQuotas(ctx, s, ns)
	queues := &schedv1alpha1.QueueList{}
	if err := r.Client.List(ctx, queues, client.InNamespace(schedv1alpha1.QueueNamespace)); err != nil {
		s.note("queues in namespace %s not readable (%v): policies and counts are missing", schedv1alpha1.QueueNamespace, reason(err))
	}
	for i := range queues.Items {
		s.Queues[queues.Items[i].Name] = &queues.Items[i]
	}
	if r.Visibility != nil && r.readVisibility(ctx, s) {
		s.Source = SourceVisibility
		return s, nil
	}
	s.orderFromObjects()
	return s, nil
}

// readQuotas builds the quota tree and charges it with the admitted units
// (all namespaces when the user may list them).
func (r *Reader) readQuotas(ctx context.Context, s *Snapshot, ns string) {
	quotas := &eqv1alpha1.ElasticQuotaList{}
	if err := r.Client.List(ctx, quotas); err != nil {
		if ns == "" || r.Client.List(ctx, quotas, client.InNamespace(ns)) != nil {
			s.note("elasticquotas not readable (%v): no quota limits shown", reason(err))
		} else {
			s.note("elasticquotas of other namespaces not readable (%v): quotas outside namespace %s show no limits", reason(err), ns)
		}
	}
	for _, q := range quotas.Items {
		_ = s.Tree.Upsert(quota.Spec{Name: schedtypes.QuotaName(q.Name), Parent: schedtypes.QuotaName(q.Labels[eqv1alpha1.ParentLabel]),
			Min: schedtypes.FromList(q.Spec.Min), Max: schedtypes.FromList(q.Spec.Max)})
	}
	charged := s.Units
	if ns != "" {
		all := &schedv1alpha1.QueueUnitList{}
		if err := r.Client.List(ctx, all); err != nil {
			s.note("queueunits of other namespaces not readable (%v): usage counts namespace %s only", reason(err), ns)
		} else {
			charged = all.Items
		}
	}
	s.Charged = charged
	for i := range charged {
		if name := schedtypes.QuotaName(queueunit.ChargedQuota(&charged[i])); name != "" && s.Tree.Exists(name) {
			s.Tree.Charge(name, queueunit.Usage(&charged[i]))
		}
	}
}

// readVisibility fills the order of every queue from the visibility API and
// reads the feature gates; false when the API is not served.
func (r *Reader) readVisibility(ctx context.Context, s *Snapshot) bool {
	base := "/apis/" + visibilityv1alpha1.GroupName + "/v1alpha1"
	raw, err := r.Visibility.Get().AbsPath(base, visibilityv1alpha1.ResourceFeatureGates).Do(ctx).Raw()
	switch {
	case err == nil:
	case apierrors.IsNotFound(err):
		return false // not registered: the cluster does not serve it
	case notAnswering(err):
		s.VisibilityDown = fmt.Sprintf("the visibility API is registered (APIService %s) but not answering (%v): "+
			"koord-queue's visibility server is down or unreachable, and until it answers or the APIService is deleted, "+
			"namespace deletion hangs cluster-wide; see kubectl get apiservice %s", visibilityAPIService, reason(err), visibilityAPIService)
		s.note("%s; positions from the Queue objects", s.VisibilityDown)
		return false
	default:
		s.note("visibility API not usable (%v): positions from the Queue objects", reason(err))
		return false
	}
	gates := &visibilityv1alpha1.FeatureGates{}
	if err := json.Unmarshal(raw, gates); err == nil {
		s.Gates = gates.Gates
	}
	r.readQuotaUsage(ctx, s, base)
	for _, name := range s.queueNames() {
		raw, err := r.Visibility.Get().AbsPath(base, visibilityv1alpha1.ResourceQueues, name, visibilityv1alpha1.SubresourceQueueUnits).
			Param("limit", "0").Do(ctx).Raw()
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			s.note("visibility API: queue %s: %v", name, reason(err))
			continue
		}
		sum := &visibilityv1alpha1.QueueUnitsSummary{}
		if err := json.Unmarshal(raw, sum); err != nil {
			s.note("visibility API: queue %s: %v", name, err)
			continue
		}
		for _, it := range sum.Items {
			s.Order[name] = append(s.Order[name], Entry{Namespace: it.Namespace, Name: it.Name, Quota: it.Quota,
				Priority: it.Priority, Position: it.PositionInQueue, Message: it.Message})
		}
	}
	return true
}

// readQuotaUsage reads the scheduler's quota usage; a server without the
// quotas resource (older) or a caller not allowed to list it leaves
// QuotaUsage nil, silently, and the usage is counted from the objects.
func (r *Reader) readQuotaUsage(ctx context.Context, s *Snapshot, base string) {
	raw, err := r.Visibility.Get().AbsPath(base, visibilityv1alpha1.ResourceQuotas).Do(ctx).Raw()
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return
	}
	list := &visibilityv1alpha1.QuotaList{}
	if err == nil {
		err = json.Unmarshal(raw, list)
	}
	if err != nil {
		s.note("visibility API: quotas not readable (%v): usage counted from the objects", reason(err))
		return
	}
	s.QuotaUsage = make(map[string]*visibilityv1alpha1.Quota, len(list.Items))
	for i := range list.Items {
		s.QuotaUsage[list.Items[i].Name] = &list.Items[i]
	}
}

// orderFromObjects takes each queue's order from its status.queueItemDetails,
// which the scheduler refreshes periodically; a queue without it (or a unit
// not in it yet) is ordered as the scheduler orders: priority, then age, then
// name.
func (s *Snapshot) orderFromObjects() {
	messages := map[string]*schedv1alpha1.QueueUnit{}
	for i := range s.Units {
		u := &s.Units[i]
		messages[u.Namespace+"/"+u.Name] = u
	}
	for _, name := range s.queueNames() {
		if q := s.Queues[name]; q != nil && len(q.Status.QueueItemDetails) > 0 {
			for _, d := range q.Status.QueueItemDetails {
				e := Entry{Namespace: d.Namespace, Name: d.Name, Priority: d.Priority, Position: d.Position}
				if u := messages[d.Namespace+"/"+d.Name]; u != nil {
					if !queueunit.IsPending(u.Status.Phase) {
						continue // admitted since the status was written
					}
					e.Message, e.Quota = u.Status.Message, queueunit.WaitingQuota(u)
				}
				s.Order[name] = append(s.Order[name], e)
			}
			continue
		}
		var pending []*schedv1alpha1.QueueUnit
		for i := range s.Units {
			if u := &s.Units[i]; queueunit.IsPending(u.Status.Phase) && queueunit.QueueOf(u) == name {
				pending = append(pending, u)
			}
		}
		slices.SortFunc(pending, func(a, b *schedv1alpha1.QueueUnit) int {
			if pa, pb := queueunit.Priority(a), queueunit.Priority(b); pa != pb {
				return int(pb - pa)
			}
			if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
				return c
			}
			return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
		})
		for i, u := range pending {
			s.Order[name] = append(s.Order[name], Entry{Namespace: u.Namespace, Name: u.Name, Quota: queueunit.WaitingQuota(u),
				Priority: queueunit.Priority(u), Position: int32(i + 1), Message: u.Status.Message})
		}
	}
}

// queueNames are the queues known from Queue objects and from the units.
func (s *Snapshot) queueNames() []string {
	seen := map[string]bool{}
	for name := range s.Queues {
		seen[name] = true
	}
	for i := range s.Units {
		if q := queueunit.QueueOf(&s.Units[i]); q != "" {
			seen[q] = true
		}
	}
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Position returns a unit's entry in its queue's order.
func (s *Snapshot) Position(u *schedv1alpha1.QueueUnit) (Entry, bool) {
	for _, e := range s.Order[queueunit.QueueOf(u)] {
		if e.Namespace == u.Namespace && e.Name == u.Name {
			return e, true
		}
	}
	return Entry{}, false
}

func (s *Snapshot) note(format string, args ...any) {
	s.Notes = append(s.Notes, fmt.Sprintf(format, args...))
}

// visibilityAPIService names the APIService of the visibility API.
const visibilityAPIService = "v1alpha1." + visibilityv1alpha1.GroupName

// notAnswering is true for the errors kube-apiserver gives for a registered
// aggregated API whose server it cannot reach or that does not reply.
func notAnswering(err error) bool {
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}

// reason shortens an API error to its reason, for notes.
func reason(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Reason != "" {
		return strings.ToLower(string(st.Status().Reason))
	}
	return err.Error()
}
