package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of koord-queue's own objects.
const GroupName = "scheduling.x-k8s.io"

var (
	// SchemeGroupVersion is the group and version of this package.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}
	// GroupVersion is an alias of SchemeGroupVersion, as controller-runtime names it.
	GroupVersion = SchemeGroupVersion

	// SchemeBuilder registers this package's types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns a GroupResource of this group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Queue{}, &QueueList{},
		&QueueUnit{}, &QueueUnitList{},
		&AdmissionCheck{}, &AdmissionCheckList{},
		&ProvisioningRequestConfig{}, &ProvisioningRequestConfigList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
