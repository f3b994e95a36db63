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
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// quotaCounts is what the units of one quota add up to.
type quotaCounts struct {
	pending, admitted int32
	request           schedtypes.Resources
}

// Quotas implements Source: every quota of the tree with its usage, and the
// pending and admitted units of it and of the quotas below it.
func (a *schedulerSource) Quotas(ctx context.Context) ([]visibilityv1alpha1.Quota, error) {
	infos := a.s.Quotas()
	if len(infos) == 0 {
		// No quota plugin, or no quota yet: nothing to read.
		return []visibilityv1alpha1.Quota{}, nil
	}
	own := map[schedtypes.QuotaName]*quotaCounts{}
	counts := func(name schedtypes.QuotaName) *quotaCounts {
		if own[name] == nil {
			own[name] = &quotaCounts{request: schedtypes.Resources{}}
		}
		return own[name]
	}
	for _, name := range a.s.QueueNames() {
		units, _ := a.s.Pending(name)
		for _, p := range units {
			c := counts(p.Quota)
			c.pending++
			c.request = c.request.Add(p.Request)
		}
	}
	units := &schedv1alpha1.QueueUnitList{}
	if err := a.s.Objects().List(ctx, units, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range units.Items {
		u := &units.Items[i]
		if !queueunit.HoldsQuota(u.Status.Phase) {
			continue
		}
		// Charged where it was admitted, even if relabelled since.
		qt := schedtypes.QuotaName(u.Status.Quota)
		if qt == "" {
			_, qt = a.s.Map(u)
		}
		counts(qt).admitted++
	}
	namespaces, err := a.quotaNamespaces(ctx)
	if err != nil {
		return nil, err
	}
	children := childrenOf(infos)
	out := make([]visibilityv1alpha1.Quota, 0, len(infos))
	for _, info := range infos {
		total := quotaCounts{request: schedtypes.Resources{}}
		for name := range subtree(children, info.Name) {
			if c := own[name]; c != nil {
				total.pending += c.pending
				total.admitted += c.admitted
				total.request = total.request.Add(c.request)
			}
		}
		out = append(out, quotaOf(info, namespaces[string(info.Name)], total))
	}
	return out, nil
}

// quotaNamespaces maps each ElasticQuota's name to its namespace, from the
// informer cache.
func (a *schedulerSource) quotaNamespaces(ctx context.Context) (map[string]string, error) {
	list := &eqv1alpha1.ElasticQuotaList{}
	if err := a.s.Objects().List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].Name] = list.Items[i].Namespace
	}
	return out, nil
}

// quotaOf renders one quota: borrowed is used above min, lent the min not
// used (none when the quota does not lend).
func quotaOf(info schedtypes.Info, namespace string, c quotaCounts) visibilityv1alpha1.Quota {
	q := visibilityv1alpha1.Quota{
		TypeMeta:   metav1.TypeMeta{Kind: "Quota", APIVersion: gv.String()},
		ObjectMeta: metav1.ObjectMeta{Name: string(info.Name)},
		Parent:     string(info.Parent), IsParent: info.IsParent, QuotaNamespace: namespace,
		Resources:    []visibilityv1alpha1.QuotaResource{},
		PendingUnits: c.pending, AdmittedUnits: c.admitted,
	}
	names := map[corev1.ResourceName]bool{}
	for _, r := range []schedtypes.Resources{info.Min, info.Max, info.Used, c.request} {
		for n := range r {
			names[n] = true
		}
	}
	sorted := make([]corev1.ResourceName, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	for _, n := range sorted {
		minimum, used := info.Min[n], info.Used[n]
		r := visibilityv1alpha1.QuotaResource{
			Name: n, Min: schedtypes.Quantity(n, minimum), Used: schedtypes.Quantity(n, used),
			Borrowed: schedtypes.Quantity(n, max(0, used-minimum)), Lent: schedtypes.Quantity(n, 0),
			Pending: schedtypes.Quantity(n, c.request[n]),
		}
		if !info.NoLend {
			r.Lent = schedtypes.Quantity(n, max(0, minimum-used))
		}
		if v, ok := info.Max[n]; ok {
			r.Max = ptr.To(schedtypes.Quantity(n, v))
		}
		q.Resources = append(q.Resources, r)
	}
	return q
}
