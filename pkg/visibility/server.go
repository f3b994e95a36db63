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
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	unionauthn "k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authorization/path"
	"k8s.io/apiserver/pkg/authorization/union"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/compatibility"
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"
	"k8s.io/kube-openapi/pkg/common"
	openapiutil "k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	generatedopenapi "github.com/koordinator-sh/koord-queue/apis/visibility/openapi"
	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
)

// DefaultMaxRequestsInFlight bounds the requests served at once when Options
// give no bound; kube-apiserver's default for reads.
const DefaultMaxRequestsInFlight = 400

// Options configure a Server.
type Options struct {
	// BindAddress is host:port to listen on (":8443").
	BindAddress string
	// CertDir holds tls.crt and tls.key, read again whenever they change;
	// empty means a self-signed certificate made at start (the APIService
	// then needs insecureSkipTLSVerify, or a caBundle the chart gets
	// elsewhere).
	CertDir string
	// Listener, when set, is used instead of BindAddress (tests).
	Listener net.Listener
	// Gates are the scheduler's feature gates, published at .../featuregates.
	Gates features.Gates
	// MaxRequestsInFlight is the concurrency API Priority and Fairness
	// shares among the priority levels; 0 means DefaultMaxRequestsInFlight.
	MaxRequestsInFlight int
	// NoPriorityAndFairness replaces API Priority and Fairness (which reads
	// the cluster's FlowSchemas and PriorityLevelConfigurations) with a plain
	// bound of MaxRequestsInFlight, beyond which requests are answered 429.
	NoPriorityAndFairness bool
	// UI, when set, is served under .../ui/ (the web view, pkg/visibility/ui);
	// nil leaves it off.
	UI http.Handler
}

// Server is the aggregated API server, a manager.Runnable that runs on every
// replica (see the package documentation on consistency).
type Server struct {
	opts    Options
	src     Source
	clients kubernetes.Interface
}

var (
	_ manager.Runnable               = (*Server)(nil)
	_ manager.LeaderElectionRunnable = (*Server)(nil)
)

var (
	scheme         = runtime.NewScheme()
	codecs         = serializer.NewCodecFactory(scheme)
	parameterCodec = runtime.NewParameterCodec(scheme)
)

func init() {
	utilruntime.Must(visibilityv1alpha1.AddToScheme(scheme))
	// A Table row's whole object (includeObject=Object) is one unit.
	scheme.AddKnownTypeWithName(gv.WithKind("QueueUnitSummary"), &unitObject{})
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
}

// NewServer serves src; cs answers TokenReviews and SubjectAccessReviews,
// gives the extension-apiserver-authentication ConfigMap and the
// FlowSchemas and PriorityLevelConfigurations.
func NewServer(opts Options, src Source, cs kubernetes.Interface) *Server {
	if opts.MaxRequestsInFlight <= 0 {
		opts.MaxRequestsInFlight = DefaultMaxRequestsInFlight
	}
	return &Server{opts: opts, src: src, clients: cs}
}

// NeedLeaderElection is false: followers serve the same informer-fed state.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	log := klog.FromContext(ctx).WithName("visibility")
	auth, err := NewDelegated(ctx, s.clients)
	if err != nil {
		return fmt.Errorf("visibility server: %w", err)
	}
	auth.Run(ctx)
	c := newConfig(s.opts.MaxRequestsInFlight)
	if err := s.serving(c); err != nil {
		return fmt.Errorf("visibility server: %w", err)
	}
	if err := c.Authentication.ApplyClientCert(auth.ClientCA, c.SecureServing); err != nil {
		return fmt.Errorf("visibility server: %w", err)
	}
	if !s.opts.NoPriorityAndFairness {
		c.SharedInformerFactory = informers.NewSharedInformerFactory(s.clients, 0)
		c.FlowControl = utilflowcontrol.New(c.SharedInformerFactory, s.clients.FlowcontrolV1(), c.MaxRequestsInFlight+c.MaxMutatingRequestsInFlight)
	}
	srv, err := newGenericServer(c, s.src, handlerOptions{
		gates: s.opts.Gates, ui: s.opts.UI, now: nowFunc(), authn: auth.Authenticator, authz: auth.Authorizer,
	})
	if err != nil {
		return fmt.Errorf("visibility server: %w", err)
	}
	log.Info("Serving the visibility API", "address", c.SecureServing.Listener.Addr().String(), "priorityAndFairness", c.FlowControl != nil)
	if err := srv.PrepareRun().RunWithContext(ctx); err != nil {
		return fmt.Errorf("visibility server: %w", err)
	}
	return nil
}

// newConfig is the generic server's configuration without serving,
// authentication or authorization: no storage (no etcd), profiling and
// metrics off (the scheduler serves its own), OpenAPI v2 and v3 from the
// generated definitions.
func newConfig(maxInFlight int) *genericapiserver.RecommendedConfig {
	c := genericapiserver.NewRecommendedConfig(codecs)
	c.Serializer = jsonOnly{codecs}
	c.EffectiveVersion = compatibility.NewEffectiveVersionFromString(version.DefaultKubeBinaryVersion, "", "")
	namer := openapinamer.NewDefinitionNamer(scheme)
	c.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	c.OpenAPIConfig.Info.Title = "koord-queue visibility API"
	c.OpenAPIConfig.GetOperationIDAndTagsFromRoute = operationID
	c.OpenAPIConfig.GetDefinitionName = definitionName(namer)
	c.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	c.OpenAPIV3Config.Info.Title = "koord-queue visibility API"
	c.OpenAPIV3Config.GetOperationIDAndTagsFromRoute = operationID
	c.OpenAPIV3Config.GetDefinitionName = definitionName(namer)
	// Built before with the namer's names: again, with ours.
	c.OpenAPIV3Config.Definitions = generatedopenapi.GetOpenAPIDefinitions(func(name string) spec.Ref {
		defName, _ := c.OpenAPIV3Config.GetDefinitionName(name)
		return spec.MustCreateRef("#/components/schemas/" + common.EscapeJsonPointer(defName))
	})
	c.EnableProfiling = false
	c.EnableMetrics = false
	c.MaxRequestsInFlight = maxInFlight
	c.MaxMutatingRequestsInFlight = 0
	// Only the loopback client, which nothing here uses, needs it.
	c.LoopbackClientConfig = &rest.Config{}
	return c
}

// definitionName names our definitions as the scheme names their kinds
// (com.github.koordinator-sh.koord-queue.apis.visibility.v1alpha1.Quota), so
// that they carry x-kubernetes-group-version-kind, which `kubectl explain`
// looks for; openapi-gen keys them by Go package path. The apimachinery
// types name themselves (io.k8s...) and pass as they are.
func definitionName(namer *openapinamer.DefinitionNamer) func(string) (string, spec.Extensions) {
	return func(name string) (string, spec.Extensions) {
		if strings.Contains(name, "/") {
			name = openapiutil.ToRESTFriendlyName(name)
		}
		return namer.GetDefinitionName(name)
	}
}

// jsonOnly offers the codecs without protobuf, which the types have no
// encoding for: a client that prefers it gets JSON.
type jsonOnly struct{ serializer.CodecFactory }

func (j jsonOnly) SupportedMediaTypes() []runtime.SerializerInfo {
	var out []runtime.SerializerInfo
	for _, info := range j.CodecFactory.SupportedMediaTypes() {
		if info.MediaType != runtime.ContentTypeProtobuf {
			out = append(out, info)
		}
	}
	return out
}

// operationID names an OpenAPI operation after its action (read, list) and
// path, since the queues and the elasticquotas answer the same kind (the
// generic server's default names operations after action and kind alone).
func operationID(r common.Route) (string, []string, error) {
	name := r.OperationName()
	id := strings.TrimRightFunc(name[:strings.IndexFunc(name+"X", unicode.IsUpper)], unicode.IsUpper)
	for _, part := range strings.Split(strings.TrimPrefix(r.Path(), versionURL), "/") {
		if part == "" || strings.HasPrefix(part, "{") {
			continue
		}
		id += strings.ToUpper(part[:1]) + part[1:]
	}
	return id, []string{gv.Group + "_" + gv.Version}, nil
}

// serving listens on the bind address (or the Listener) with tls.crt and
// tls.key from CertDir, served anew whenever the files change, or with a
// self-signed pair made in memory.
func (s *Server) serving(c *genericapiserver.RecommendedConfig) error {
	o := genericoptions.NewSecureServingOptions()
	o.ServerCert.CertDirectory, o.ServerCert.PairName = "", ""
	if s.opts.Listener != nil {
		o.Listener = s.opts.Listener
		if addr, ok := s.opts.Listener.Addr().(*net.TCPAddr); ok {
			o.BindAddress, o.BindPort = addr.IP, addr.Port
		}
	} else {
		host, port, err := net.SplitHostPort(s.opts.BindAddress)
		if err != nil {
			return fmt.Errorf("bind address %q: %w", s.opts.BindAddress, err)
		}
		if o.BindPort, err = strconv.Atoi(port); err != nil {
			return fmt.Errorf("bind address %q: port: %w", s.opts.BindAddress, err)
		}
		o.BindAddress = net.ParseIP(host)
		if host == "" {
			o.BindAddress = net.IPv4zero
		}
		if o.BindAddress == nil {
			return fmt.Errorf("bind address %q: host must be an IP address", s.opts.BindAddress)
		}
	}
	if s.opts.CertDir != "" {
		o.ServerCert.CertKey.CertFile = filepath.Join(s.opts.CertDir, "tls.crt")
		o.ServerCert.CertKey.KeyFile = filepath.Join(s.opts.CertDir, "tls.key")
	} else {
		host, _ := os.Hostname()
		if err := o.MaybeDefaultWithSelfSignedCerts("koord-queue-visibility-server",
			[]string{"localhost", host, "koord-queue-visibility-server", "koord-queue-visibility-server.koord-queue.svc"},
			[]net.IP{net.ParseIP("127.0.0.1")}); err != nil {
			return fmt.Errorf("self-signed certificate: %w", err)
		}
	}
	return o.ApplyTo(&c.SecureServing)
}

// newGenericServer installs the API group and the web view on a completed
// configuration.
func newGenericServer(c *genericapiserver.RecommendedConfig, src Source, o handlerOptions) (*genericapiserver.GenericAPIServer, error) {
	if o.authn != nil {
		// Requests with no credentials are anonymous, so that the health
		// paths answer kubelet's probes.
		c.Authentication.Authenticator = unionauthn.New(o.authn, anonymous.NewAuthenticator(nil))
	}
	if o.authz != nil {
		health, err := path.NewAuthorizer(alwaysAllowPaths)
		if err != nil {
			return nil, err
		}
		if c.Authorization.Authorizer, err = union.New(
			union.NamedAuthorizer{AuthorizerName: "health", Authorizer: health},
			union.NamedAuthorizer{AuthorizerName: "delegated", Authorizer: o.authz}); err != nil {
			return nil, err
		}
	}
	if o.ui != nil {
		c.BuildHandlerChainFunc = func(api http.Handler, gc *genericapiserver.Config) http.Handler {
			return genericapiserver.DefaultBuildHandlerChain(withUI(api, o.ui), gc)
		}
	}
	srv, err := c.Complete().New("koord-queue-visibility", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(gv.Group, scheme, parameterCodec, codecs)
	group.NegotiatedSerializer = jsonOnly{codecs}
	group.VersionedResourcesStorageMap[gv.Version] = newStorage(src, o)
	if err := srv.InstallAPIGroup(&group); err != nil {
		return nil, fmt.Errorf("install %s: %w", gv, err)
	}
	return srv, nil
}

// withUI serves the web view under .../ui/ behind the handler chain, which
// has authorized it as kube-apiserver names it (list ui for .../ui/, get for
// a file below it), before the API's routes, which would claim the path.
func withUI(api, ui http.Handler) http.Handler {
	prefix := versionURL + "/" + ResourceUI
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == prefix && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			// Relative, so that it holds behind a proxy's path prefix.
			http.Redirect(w, r, ResourceUI+"/", http.StatusMovedPermanently)
		case strings.HasPrefix(r.URL.Path, prefix+"/") && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			ui.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	})
}

// NewHandler is the server's whole handler chain without a listener, with
// neither authentication nor authorization unless WithAuth gives them, and a
// plain in-flight bound instead of API Priority and Fairness (tests).
func NewHandler(src Source, opts ...Option) (http.Handler, error) {
	o := handlerOptions{now: nowFunc()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxInFlight <= 0 {
		o.maxInFlight = DefaultMaxRequestsInFlight
	}
	c := newConfig(o.maxInFlight)
	// Nothing listens; the address only completes the configuration.
	c.ExternalAddress = "localhost:443"
	srv, err := newGenericServer(c, src, o)
	if err != nil {
		return nil, err
	}
	// Installs the OpenAPI documents and the health checks.
	srv.PrepareRun()
	return srv.Handler, nil
}
