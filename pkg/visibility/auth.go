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
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
)

// The ConfigMap kube-apiserver publishes for extension API servers: the CA
// that signs client certificates, and the front proxy's CA, names and headers.
const (
	authConfigMapNamespace = "kube-system"
	authConfigMapName      = "extension-apiserver-authentication"
)

// alwaysAllowPaths answer anyone, anonymous included: kubelet probes.
var alwaysAllowPaths = []string{"/healthz", "/healthz/*", "/readyz", "/readyz/*", "/livez", "/livez/*"}

// Delegated is authentication and authorization delegated to kube-apiserver.
type Delegated struct {
	// Authenticator recognises front-proxy requests, client certificates and
	// bearer tokens.
	Authenticator authenticator.Request
	// Authorizer asks kube-apiserver (SubjectAccessReview).
	Authorizer authorizer.Authorizer
	// ClientCA are the CAs a client certificate may be signed by: the
	// cluster's client CA and the front proxy's.
	ClientCA dynamiccertificates.CAContentProvider
	// run keeps the front-proxy settings in step with the ConfigMap.
	run []func(ctx context.Context, workers int)
}

// NewDelegated builds the authenticator (front-proxy client certificate with
// X-Remote-* headers, client certificates, bearer tokens by TokenReview) and
// the authorizer (SubjectAccessReview) from the extension-apiserver-authentication
// ConfigMap in kube-system. It reads the ConfigMap once; Run keeps following it.
func NewDelegated(ctx context.Context, cs kubernetes.Interface) (*Delegated, error) {
	clientCA, err := dynamiccertificates.NewDynamicCAFromConfigMapController(
		"client-ca", authConfigMapNamespace, authConfigMapName, "client-ca-file", cs)
	if err != nil {
		return nil, fmt.Errorf("client CA: %w", err)
	}
	proxyCA, err := dynamiccertificates.NewDynamicCAFromConfigMapController(
		"requestheader-client-ca", authConfigMapNamespace, authConfigMapName, "requestheader-client-ca-file", cs)
	if err != nil {
		return nil, fmt.Errorf("front-proxy CA: %w", err)
	}
	headers := headerrequest.NewRequestHeaderAuthRequestController(authConfigMapName, authConfigMapNamespace, cs,
		"requestheader-username-headers", "requestheader-uid-headers", "requestheader-group-headers",
		"requestheader-extra-headers-prefix", "requestheader-allowed-names")
	for _, once := range []func(context.Context) error{clientCA.RunOnce, proxyCA.RunOnce, headers.RunOnce} {
		if err := once(ctx); err != nil {
			return nil, fmt.Errorf("read %s/%s: %w", authConfigMapNamespace, authConfigMapName, err)
		}
	}
	backoff := &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		TokenAccessReviewClient:            cs.AuthenticationV1(),
		TokenAccessReviewTimeout:           10 * time.Second,
		WebhookRetryBackoff:                backoff,
		CacheTTL:                           10 * time.Second,
		ClientCertificateCAContentProvider: clientCA,
		RequestHeaderConfig: &authenticatorfactory.RequestHeaderConfig{
			UsernameHeaders:     headerrequest.StringSliceProviderFunc(headers.UsernameHeaders),
			UIDHeaders:          headerrequest.StringSliceProviderFunc(headers.UIDHeaders),
			GroupHeaders:        headerrequest.StringSliceProviderFunc(headers.GroupHeaders),
			ExtraHeaderPrefixes: headerrequest.StringSliceProviderFunc(headers.ExtraHeaderPrefixes),
			AllowedClientNames:  headerrequest.StringSliceProviderFunc(headers.AllowedClientNames),
			CAContentProvider:   proxyCA,
		},
	}.New()
	if err != nil {
		return nil, fmt.Errorf("authenticator: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: cs.AuthorizationV1(),
		AllowCacheTTL:             10 * time.Second,
		DenyCacheTTL:              5 * time.Second,
		WebhookRetryBackoff:       backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("authorizer: %w", err)
	}
	return &Delegated{
		Authenticator: authn, Authorizer: authz,
		ClientCA: dynamiccertificates.NewUnionCAContentProvider(clientCA, proxyCA),
		// The serving machinery runs the CA controllers (ClientCA), once
		// it listens to them.
		run: []func(context.Context, int){headers.Run},
	}, nil
}

// Run follows the ConfigMap's front-proxy settings until ctx ends; the CAs
// follow it once served as ClientCA (the generic server runs them).
func (d *Delegated) Run(ctx context.Context) {
	for _, run := range d.run {
		go run(ctx, 1)
	}
}

// namespaceFilter says whether the caller may see the units of a namespace.
type namespaceFilter func(ctx context.Context, namespace string) (bool, error)

// listFilter asks the authorizer whether u may list QueueUnits
// (scheduling.x-k8s.io), the question kube-apiserver answers for `kubectl get
// queueunits`: first in every namespace, then, if not, in each namespace
// asked about.
func listFilter(authz authorizer.UnconditionalAuthorizer, u user.Info) namespaceFilter {
	may := func(ctx context.Context, ns string) (bool, error) {
		decision, _, err := authz.Authorize(ctx, authorizer.AttributesRecord{
			User: u, Verb: "list", Namespace: ns, ResourceRequest: true,
			APIGroup: schedv1alpha1.GroupVersion.Group, APIVersion: schedv1alpha1.GroupVersion.Version, Resource: "queueunits",
		})
		if decision == authorizer.DecisionAllow {
			return true, nil
		}
		return false, err
	}
	var everywhere *bool
	return func(ctx context.Context, ns string) (bool, error) {
		if everywhere == nil {
			all, err := may(ctx, metav1.NamespaceAll)
			if err != nil {
				return false, err
			}
			everywhere = &all
		}
		if *everywhere {
			return true, nil
		}
		return may(ctx, ns)
	}
}

// visibleTo keeps the items f lets through, in order.
func visibleTo(ctx context.Context, items []visibilityv1alpha1.QueueUnitSummary, f namespaceFilter) ([]visibilityv1alpha1.QueueUnitSummary, error) {
	allowed := map[string]bool{}
	out := items[:0:0]
	for _, it := range items {
		may, seen := allowed[it.Namespace]
		if !seen {
			var err error
			if may, err = f(ctx, it.Namespace); err != nil {
				return nil, fmt.Errorf("may list queueunits in %s: %w", it.Namespace, err)
			}
			allowed[it.Namespace] = may
		}
		if may {
			out = append(out, it)
		}
	}
	return out, nil
}
