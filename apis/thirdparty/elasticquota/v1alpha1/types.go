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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is Koordinator's quota API group.
const GroupName = "scheduling.sigs.k8s.io"

var (
	// SchemeGroupVersion is the group and version of ElasticQuota.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}
	// SchemeBuilder registers ElasticQuota.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds ElasticQuota to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &ElasticQuota{}, &ElasticQuotaList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// Koordinator's labels and annotations on ElasticQuotas.
const (
	// ParentLabel names the parent quota; absent or empty means the root.
	ParentLabel = "quota.scheduling.koordinator.sh/parent"
	// IsParentLabel "true" marks a quota that has children.
	IsParentLabel = "quota.scheduling.koordinator.sh/is-parent"
	// AllowLentResourceLabel "false" keeps a quota's unused min from being lent.
	AllowLentResourceLabel = "quota.scheduling.koordinator.sh/allow-lent-resource"
	// NamespacesAnnotation lists, as a JSON array of names, the namespaces
	// other than its own whose units may use the quota.
	NamespacesAnnotation = "quota.scheduling.koordinator.sh/namespaces"
	// SharedWeightAnnotation weighs a quota when idle capacity is shared.
	SharedWeightAnnotation = "quota.scheduling.koordinator.sh/shared-weight"
	// RootQuotaName is the implicit root of every quota tree.
	RootQuotaName = "koordinator-root-quota"
	// SystemQuotaName and DefaultQuotaName are the other two quotas
	// koord-scheduler creates in SystemQuotaNamespace: the system quota
	// charges pods of kube-system and koordinator-system, the default quota
	// every pod no other quota claims. None of the three gets a Queue.
	SystemQuotaName  = "koordinator-system-quota"
	DefaultQuotaName = "koordinator-default-quota"
	// SystemQuotaNamespace is where koord-scheduler keeps its own quotas.
	SystemQuotaNamespace = "koordinator-system"
	// RuntimeAnnotation and RequestAnnotation are what koord-scheduler
	// writes on each quota about once a second (JSON resource lists): what
	// the quota may use now, and what its pods ask for.
	RuntimeAnnotation = "quota.scheduling.koordinator.sh/runtime"
	RequestAnnotation = "quota.scheduling.koordinator.sh/request"
)

// IsSystemQuota reports whether name is one of the quotas koord-scheduler
// makes for itself.
func IsSystemQuota(name string) bool {
	return name == RootQuotaName || name == SystemQuotaName || name == DefaultQuotaName
}

// ElasticQuotaSpec sets a quota's guarantee and limit.
type ElasticQuotaSpec struct {
	// Min is guaranteed to the quota.
	// +optional
	Min corev1.ResourceList `json:"min,omitempty"`
	// Max is the most the quota may use.
	// +optional
	Max corev1.ResourceList `json:"max,omitempty"`
}

// ElasticQuotaStatus reports usage.
type ElasticQuotaStatus struct {
	// Used is what the quota's workloads use.
	// +optional
	Used corev1.ResourceList `json:"used,omitempty"`
}

// ElasticQuota is a node of Koordinator's quota tree.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=eq;eqs
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubernetes-sigs/scheduler-plugins/pull/52"
type ElasticQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ElasticQuotaSpec   `json:"spec,omitempty"`
	Status ElasticQuotaStatus `json:"status,omitempty"`
}

// ElasticQuotaList is a list of ElasticQuotas.
//
// +kubebuilder:object:root=true
type ElasticQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ElasticQuota `json:"items"`
}
