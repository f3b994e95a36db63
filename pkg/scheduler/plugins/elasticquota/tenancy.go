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

package elasticquota

import (
	"encoding/json"
	"fmt"
	"slices"

	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// tenancyLocked refuses a unit whose namespace may not use p's quota: only
// the quota's own namespace and the namespaces its annotation
// quota.scheduling.koordinator.sh/namespaces lists may, unless the plugin's
// sharedQuotas argument opens every quota to everyone. It runs under p.mu.
func tenancyLocked(p *Plugin, u *framework.UnitInfo) *framework.Status {
	if p.shared || u.Unit == nil {
		return nil
	}
	eq := p.quotas[u.Quota]
	if eq == nil {
		// A quota nobody defined: the tree refuses it.
		return nil
	}
	ns := u.Unit.Namespace
	if eq.Namespace == ns || slices.Contains(allowedNamespaces(eq), ns) {
		return nil
	}
	// Not for want of room: no victim search, no shared refusal for the queue.
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, schedtypes.Reason{Kind: schedtypes.WaitQuotaNotAllowed, Subject: string(u.Quota), Detail: ns}, fmt.Sprintf(
		"namespace %s may not use quota %s (in namespace %s): list %s in the quota's annotation %s, or set sharedQuotas in the %s plugin's arguments",
		ns, u.Quota, eq.Namespace, ns, eqv1alpha1.NamespacesAnnotation, "ElasticQuotaV2"))
}

// allowedNamespaces reads the namespaces annotation: a JSON array of names.
// A malformed value allows nobody more (report says so).
func allowedNamespaces(eq *eqv1alpha1.ElasticQuota) []string {
	names, _ := namespacesOf(eq)
	return names
}

func namespacesOf(eq *eqv1alpha1.ElasticQuota) ([]string, error) {
	v, ok := eq.Annotations[eqv1alpha1.NamespacesAnnotation]
	if !ok || v == "" {
		return nil, nil
	}
	var names []string
	if err := json.Unmarshal([]byte(v), &names); err != nil {
		return nil, fmt.Errorf("annotation %s=%q on ElasticQuota %s/%s is not a JSON array of namespace names such as [\"team-b\"]: %w",
			eqv1alpha1.NamespacesAnnotation, v, eq.Namespace, eq.Name, err)
	}
	return names, nil
}
