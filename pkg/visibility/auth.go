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
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// alwaysAllowPaths answer anyone: kubelet probes.
var alwaysAllowPaths = map[string]bool{"/healthz": true, "/readyz": true, "/livez": true}

// Delegated is authentication and authorization delegated to kube-apiserver.
type Delegated struct {
	Authenticator authenticator.Request
	Authorizer    authorizer.UnconditionalAuthorizer
	// run keeps the CAs and front-proxy settings in step with the ConfigMap.
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
		run: []func(context.Context, int){clientCA.Run, proxyCA.Run, headers.Run},
	}, nil
}

// Run follows the ConfigMap until ctx ends.
func (d *Delegated) Run(ctx context.Context) {
	for _, run := range d.run {
		go run(ctx, 1)
	}
}

// WithAuth authenticates and authorizes every request before next sees it:
// 401 when nobody is recognised, 403 when the user may not get the resource
// (or, for discovery and OpenAPI, the path), as kube-apiserver decided before
// proxying. Health paths are open. Whoever may get a queue's or a quota's
// units sees those of the namespaces where it may list QueueUnits
// (scheduling.x-k8s.io):
// all of them when it may list them cluster-wide, else one
// SubjectAccessReview per namespace (cached by the authorizer).
func WithAuth(next http.Handler, authn authenticator.Request, authz authorizer.UnconditionalAuthorizer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if alwaysAllowPaths[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		resp, ok, err := authn.AuthenticateRequest(r)
		if err != nil || !ok {
			writeStatus(w, apierrors.NewUnauthorized("Unauthorized"))
			return
		}
		attrs := attributesOf(r, resp)
		decision, reason, err := authz.Authorize(r.Context(), attrs)
		if decision == authorizer.DecisionAllow {
			if attrs.ResourceRequest && (attrs.Resource == visibilityv1alpha1.ResourceQueues || attrs.Resource == visibilityv1alpha1.ResourceElasticQuotas) {
				r = r.WithContext(withNamespaceFilter(r.Context(), listFilter(authz, resp.User)))
			}
			next.ServeHTTP(w, r)
			return
		}
		if err != nil {
			writeStatus(w, apierrors.NewInternalError(fmt.Errorf("authorization: %w", err)))
			return
		}
		writeStatus(w, forbidden(attrs, reason))
	})
}

// namespaceFilter says whether the caller may see the units of a namespace.
type namespaceFilter func(ctx context.Context, namespace string) (bool, error)

type filterKey struct{}

func withNamespaceFilter(ctx context.Context, f namespaceFilter) context.Context {
	return context.WithValue(ctx, filterKey{}, f)
}

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

// visibleTo keeps the items the request's namespace filter lets through, in
// order; without a filter (no authorization configured: tests) it keeps all.
func visibleTo(ctx context.Context, items []visibilityv1alpha1.QueueUnitSummary) ([]visibilityv1alpha1.QueueUnitSummary, error) {
	f, ok := ctx.Value(filterKey{}).(namespaceFilter)
	if !ok {
		return items, nil
	}
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

// attributesOf describes a request for the authorizer: a resource request
// (get {resource}/queueunits of a name, get a quota or list the quotas,
// cluster scope) or a non-resource path.
func attributesOf(r *http.Request, resp *authenticator.Response) authorizer.AttributesRecord {
	attrs := authorizer.AttributesRecord{User: resp.User, Verb: "get", Path: r.URL.Path}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		attrs.Verb = strings.ToLower(r.Method)
	}
	parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, versionURL), "/"), "/")
	if strings.HasPrefix(r.URL.Path, versionURL+"/") && len(parts) >= 1 && parts[0] != "" {
		attrs.ResourceRequest = true
		attrs.APIGroup, attrs.APIVersion = gv.Group, gv.Version
		attrs.Resource = parts[0]
		if len(parts) >= 2 {
			attrs.Name = parts[1]
		} else if (attrs.Resource == visibilityv1alpha1.ResourceQuotas || attrs.Resource == ResourceUI) && attrs.Verb == "get" {
			// As kube-apiserver names a read of a collection (featuregates
			// keeps get, which its RBAC has always granted); the web view's
			// page, .../ui/, is one too.
			attrs.Verb = "list"
		}
		if len(parts) >= 3 {
			attrs.Subresource = parts[2]
		}
	}
	return attrs
}

func forbidden(a authorizer.AttributesRecord, reason string) *apierrors.StatusError {
	user := a.User.GetName()
	if reason != "" {
		reason = ": " + reason
	}
	if !a.ResourceRequest {
		return apierrors.NewForbidden(gv.WithResource("").GroupResource(), "",
			// Worded as kube-apiserver words its own refusals.
			fmt.Errorf("User %q cannot get path %q%s", user, a.Path, reason)) //nolint:staticcheck // kube-apiserver's wording

	}
	resource := a.Resource
	if a.Subresource != "" {
		resource += "/" + a.Subresource
	}
	return apierrors.NewForbidden(gv.WithResource(a.Resource).GroupResource(), a.Name,
		fmt.Errorf("User %q cannot %s resource %q in API group %q at the cluster scope%s", user, a.Verb, resource, gv.Group, reason)) //nolint:staticcheck // kube-apiserver's wording
}
