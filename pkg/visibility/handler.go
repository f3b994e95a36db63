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
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
)

// ResourceUI is the path element, and so the resource kube-apiserver
// authorizes, of the web view.
const ResourceUI = "ui"

// DefaultLimit bounds an answer when the request gives no limit.
const DefaultLimit = visibilityv1alpha1.DefaultLimit

var (
	gv       = visibilityv1alpha1.SchemeGroupVersion
	groupURL = "/apis/" + gv.Group
	// versionURL is the prefix of every resource path.
	versionURL = groupURL + "/" + gv.Version
)

// SupportedPhases are the values of the phase query parameter.
var SupportedPhases = visibilityv1alpha1.Phases

// Option configures NewHandler.
type Option func(*handlerOptions)

type handlerOptions struct {
	gates features.Gates
	now   func() time.Time
	ui    http.Handler
}

// WithGates publishes the scheduler's feature gates at .../featuregates.
func WithGates(g features.Gates) Option { return func(o *handlerOptions) { o.gates = g } }

// WithUI serves ui (the web view, pkg/visibility/ui) under .../ui/; nil
// leaves .../ui/ unserved (404).
func WithUI(ui http.Handler) Option { return func(o *handlerOptions) { o.ui = ui } }

// WithClock sets the clock the Table's AGE column is counted on (tests).
func WithClock(now func() time.Time) Option { return func(o *handlerOptions) { o.now = now } }

// NewHandler serves the discovery documents, the OpenAPI documents, the two
// queueunits endpoints and the quotas from src, and the feature gates. It does no
// authentication: see WithAuth.
func NewHandler(src Source, opts ...Option) http.Handler {
	o := handlerOptions{now: time.Now} //nolint:forbidigo // the default clock; tests pass their own (Option)
	for _, opt := range opts {
		opt(&o)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /apis", serveGroupList)
	mux.HandleFunc("GET "+groupURL, serveGroup)
	mux.HandleFunc("GET "+versionURL, serveResourceList)
	mux.HandleFunc("GET "+versionURL+"/"+visibilityv1alpha1.ResourceFeatureGates, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, featureGates(o.gates))
	})
	registerOpenAPI(mux)
	h := guard(&unitsHandler{src: src, now: o.now}, src)
	for _, r := range []string{visibilityv1alpha1.ResourceQueues, visibilityv1alpha1.ResourceElasticQuotas} {
		mux.Handle("GET "+versionURL+"/"+r+"/{name}/"+visibilityv1alpha1.SubresourceQueueUnits, h)
		// The parent answers the same, so that `kubectl get
		// queues.visibility.koord-queue.x-k8s.io NAME` and `kubectl explain`
		// work without --subresource.
		mux.Handle("GET "+versionURL+"/"+r+"/{name}", h)
	}
	qh := guard(&quotasHandler{src: src}, src)
	mux.Handle("GET "+versionURL+"/"+visibilityv1alpha1.ResourceQuotas, qh)
	mux.Handle("GET "+versionURL+"/"+visibilityv1alpha1.ResourceQuotas+"/{name}", qh)
	if o.ui != nil {
		// Authorized as resource ui (WithAuth), as kube-apiserver names it.
		mux.Handle("GET "+versionURL+"/"+ResourceUI+"/", o.ui)
		mux.HandleFunc("GET "+versionURL+"/"+ResourceUI, func(w http.ResponseWriter, r *http.Request) {
			// Relative, so that it holds behind a proxy's path prefix.
			http.Redirect(w, r, ResourceUI+"/", http.StatusMovedPermanently)
		})
	}
	for path := range alwaysAllowPaths {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
	})
	return mux
}

func groupDoc() metav1.APIGroup {
	version := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
	return metav1.APIGroup{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
		Name:     gv.Group, Versions: []metav1.GroupVersionForDiscovery{version}, PreferredVersion: version,
	}
}

func serveGroupList(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, &metav1.APIGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups:   []metav1.APIGroup{groupDoc()},
	})
}

func serveGroup(w http.ResponseWriter, _ *http.Request) {
	g := groupDoc()
	writeJSON(w, http.StatusOK, &g)
}

func serveResourceList(w http.ResponseWriter, _ *http.Request) {
	parent := func(name string) metav1.APIResource {
		// GET of a queue or quota answers what its queueunits subresource
		// answers (its pending units), so both have that kind.
		return metav1.APIResource{Name: name, Kind: "QueueUnitsSummary", Verbs: metav1.Verbs{"get"}}
	}
	sub := func(name string) metav1.APIResource {
		return metav1.APIResource{
			Name: name + "/" + visibilityv1alpha1.SubresourceQueueUnits, Kind: "QueueUnitsSummary", Verbs: metav1.Verbs{"get"},
		}
	}
	writeJSON(w, http.StatusOK, &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(),
		APIResources: []metav1.APIResource{
			parent(visibilityv1alpha1.ResourceElasticQuotas),
			sub(visibilityv1alpha1.ResourceElasticQuotas),
			{Name: visibilityv1alpha1.ResourceFeatureGates, Kind: "FeatureGates", Verbs: metav1.Verbs{"get"}},
			parent(visibilityv1alpha1.ResourceQueues),
			sub(visibilityv1alpha1.ResourceQueues),
			{Name: visibilityv1alpha1.ResourceQuotas, Kind: "Quota", Verbs: metav1.Verbs{"get", "list"}},
		},
	})
}

// FollowerWarning is the text of the Warning header (code 299) on the answers
// of a replica that does not lead; kubectl prints it.
const FollowerWarning = "this koord-queue replica is not the leader: positions and phases follow the leader's by one status write"

// guard answers 503 ServiceUnavailable, naming what is not read yet, while
// src's replica has not synced its caches (an empty list would be a wrong
// answer, not a late one), and marks a follower's answers with a Warning
// header. Sources that are no Replica are served as they are.
func guard(next http.Handler, src Source) http.Handler {
	rep, ok := src.(Replica)
	if !ok {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if missing := rep.Unsynced(); len(missing) > 0 {
			w.Header().Set("Retry-After", "1")
			writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf(
				"the scheduler has not read all of %s yet; try again shortly", strings.Join(missing, ", "))))
			return
		}
		if !rep.Leading() {
			w.Header().Add("Warning", `299 - "`+FollowerWarning+`"`)
		}
		next.ServeHTTP(w, r)
	})
}

type unitsHandler struct {
	src Source
	now func() time.Time
}

func (h *unitsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	scope := Scope{Resource: resourceOf(r.URL.Path), Name: r.PathValue("name")}
	gr := gv.WithResource(scope.Resource).GroupResource()
	q, err := parseQuery(r)
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	format, err := negotiate(r)
	if err != nil {
		writeStatus(w, apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "get", gr, scope.Name, err.Error(), 0, false))
		return
	}
	items, found, err := h.src.Units(r.Context(), scope, q.Phase)
	if err != nil {
		klog.FromContext(r.Context()).Error(err, "Listing units failed", "resource", scope.Resource, "name", scope.Name)
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	if !found {
		writeStatus(w, apierrors.NewNotFound(gr, scope.Name))
		return
	}
	// A tenant sees the units of the namespaces it may list QueueUnits in;
	// positions stay those of the whole queue.
	if items, err = visibleTo(r.Context(), items); err != nil {
		klog.FromContext(r.Context()).Error(err, "Checking access to namespaces failed", "resource", scope.Resource, "name", scope.Name)
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	out := &visibilityv1alpha1.QueueUnitsSummary{
		TypeMeta: metav1.TypeMeta{Kind: "QueueUnitsSummary", APIVersion: gv.String()},
		Phase:    q.Phase, Total: int32(len(items)), Offset: int32(q.Offset),
		Items: page(items, int(q.Offset), int(q.Limit)),
	}
	h.src.Explain(r.Context(), out.Items)
	if format.table {
		writeJSON(w, http.StatusOK, toTable(out, format, h.now()))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// resourceOf reads the resource from a path the mux matched.
func resourceOf(path string) string {
	rest := strings.TrimPrefix(path, versionURL+"/")
	resource, _, _ := strings.Cut(rest, "/")
	return resource
}

// parameters decodes query parameters the way k8s.io/apiserver's handlers
// do for a GetterWithOptions: through the scheme's conversion from url.Values.
var parameters = func() runtime.ParameterCodec {
	scheme := runtime.NewScheme()
	utilruntime.Must(visibilityv1alpha1.AddToScheme(scheme))
	return runtime.NewParameterCodec(scheme)
}()

func parseQuery(r *http.Request) (*visibilityv1alpha1.QueueUnitsOptions, error) {
	opts := visibilityv1alpha1.NewQueueUnitsOptions()
	if err := parameters.DecodeParameters(r.URL.Query(), gv, opts); err != nil {
		return nil, err
	}
	return opts, nil
}

// page returns items[offset:offset+limit], never nil; limit 0 means no limit.
func page(items []visibilityv1alpha1.QueueUnitSummary, offset, limit int) []visibilityv1alpha1.QueueUnitSummary {
	if offset >= len(items) {
		return []visibilityv1alpha1.QueueUnitSummary{}
	}
	items = items[offset:]
	if limit > 0 && limit < len(items) {
		items = items[:limit]
	}
	return items
}

func writeStatus(w http.ResponseWriter, err apierrors.APIStatus) {
	st := err.Status()
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	writeJSON(w, int(st.Code), &st)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// featureGates lists every known gate with its state.
func featureGates(g features.Gates) *visibilityv1alpha1.FeatureGates {
	on := map[string]bool{
		features.QueueUnitActive:       g.QueueUnitActive,
		features.MaximumExecutionTime:  g.MaximumExecutionTime,
		features.QueueUnitRequeueState: g.QueueUnitRequeueState,
	}
	out := &visibilityv1alpha1.FeatureGates{
		TypeMeta: metav1.TypeMeta{Kind: "FeatureGates", APIVersion: gv.String()},
		Gates:    map[string]bool{},
	}
	for _, name := range features.Known {
		out.Gates[name] = on[name]
	}
	return out
}
