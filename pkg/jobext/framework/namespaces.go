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

package framework

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// KubeSystemNamespace is never managed by --manage-all-jobs under the default
// selector: the cluster's own workloads run there.
const KubeSystemNamespace = "kube-system"

// NamespaceSelector says in which namespaces --manage-all-jobs takes jobs
// over. It selects on the Namespace's labels; every namespace carries the
// label kubernetes.io/metadata.name with its own name. The zero value
// selects every namespace.
type NamespaceSelector struct {
	sel labels.Selector
}

// DefaultNamespaceSelector leaves out kube-system and the namespace
// koord-queue itself runs in.
func DefaultNamespaceSelector(releaseNamespace string) NamespaceSelector {
	excluded := neverIntercepted(releaseNamespace)
	// Built from valid names, so the parse cannot fail on them.
	sel, err := labels.Parse(fmt.Sprintf("%s notin (%s)", corev1.LabelMetadataName, strings.Join(excluded, ",")))
	if err != nil {
		return NamespaceSelector{sel: labels.Nothing()}
	}
	return NamespaceSelector{sel: sel}
}

// ParseNamespaceSelector reads a label selector in kubectl syntax
// ("team=a,env notin (prod)"). An empty expression means the default, which
// leaves out kube-system and releaseNamespace.
func ParseNamespaceSelector(expr, releaseNamespace string) (NamespaceSelector, error) {
	if strings.TrimSpace(expr) == "" {
		return DefaultNamespaceSelector(releaseNamespace), nil
	}
	sel, err := labels.Parse(expr)
	if err != nil {
		return NamespaceSelector{}, fmt.Errorf("parse namespace selector %q: %w", expr, err)
	}
	return NamespaceSelector{sel: sel}, nil
}

// Matches reports whether jobs in ns may be taken over. A namespace read
// without its kubernetes.io/metadata.name label (an old API server, a fake
// client) is matched as if it had it.
func (s NamespaceSelector) Matches(ns *corev1.Namespace) bool {
	if s.sel == nil {
		return true
	}
	set := labels.Set{corev1.LabelMetadataName: ns.Name}
	for k, v := range ns.Labels {
		set[k] = v
	}
	return s.sel.Matches(set)
}

// String renders the selector for logs; the zero value renders empty.
func (s NamespaceSelector) String() string {
	if s.sel == nil {
		return ""
	}
	return s.sel.String()
}

// neverIntercepted are the namespaces whose jobs the admission webhook never
// sees, whatever the selector says.
func neverIntercepted(releaseNamespace string) []string {
	excluded := []string{KubeSystemNamespace}
	if releaseNamespace != "" && releaseNamespace != KubeSystemNamespace {
		excluded = append(excluded, releaseNamespace)
	}
	return excluded
}

// WebhookSelector is the admission webhook's namespaceSelector: the
// namespaces s selects, less kube-system and releaseNamespace, which are never
// intercepted. A selector with an operator a LabelSelector cannot express
// (gt, lt) is an error.
func (s NamespaceSelector) WebhookSelector(releaseNamespace string) (*metav1.LabelSelector, error) {
	exclusion := metav1.LabelSelectorRequirement{
		Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: neverIntercepted(releaseNamespace),
	}
	slices.Sort(exclusion.Values) // as the converted requirements, to spot the default's own

	out := &metav1.LabelSelector{}
	if s.sel != nil {
		reqs, _ := s.sel.Requirements()
		for _, r := range reqs {
			req, err := labelSelectorRequirement(r)
			if err != nil {
				return nil, err
			}
			out.MatchExpressions = append(out.MatchExpressions, req)
		}
	}
	for _, r := range out.MatchExpressions {
		if r.Key == exclusion.Key && r.Operator == exclusion.Operator && slices.Equal(r.Values, exclusion.Values) {
			return out, nil
		}
	}
	out.MatchExpressions = append(out.MatchExpressions, exclusion)
	return out, nil
}

func labelSelectorRequirement(r labels.Requirement) (metav1.LabelSelectorRequirement, error) {
	req := metav1.LabelSelectorRequirement{Key: r.Key(), Values: r.ValuesUnsorted()}
	slices.Sort(req.Values)
	switch r.Operator() {
	case selection.In, selection.Equals, selection.DoubleEquals:
		req.Operator = metav1.LabelSelectorOpIn
	case selection.NotIn, selection.NotEquals:
		req.Operator = metav1.LabelSelectorOpNotIn
	case selection.Exists:
		req.Operator = metav1.LabelSelectorOpExists
	case selection.DoesNotExist:
		req.Operator = metav1.LabelSelectorOpDoesNotExist
	default:
		return req, fmt.Errorf("namespace selector: operator %q of %q has no webhook namespaceSelector form (use in, notin, =, !=, exists or !)", r.Operator(), r.Key())
	}
	return req, nil
}
