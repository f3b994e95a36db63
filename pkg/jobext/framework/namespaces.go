package framework

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
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
	excluded := []string{KubeSystemNamespace}
	if releaseNamespace != "" && releaseNamespace != KubeSystemNamespace {
		excluded = append(excluded, releaseNamespace)
	}
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
