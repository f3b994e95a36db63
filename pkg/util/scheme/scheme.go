// Package scheme builds the runtime.Scheme shared by both binaries and the
// tests: Kubernetes' built-in types, koord-queue's API and the ElasticQuota type.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
)

// New returns a scheme with every type koord-queue reads or writes.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(schedv1alpha1.AddToScheme(s))
	utilruntime.Must(eqv1alpha1.AddToScheme(s))
	return s
}
