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
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"

	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
)

// newStorage is the REST storage of every resource, by path: a queue or a
// quota answers what its queueunits subresource answers, so that `kubectl
// get queues.visibility.koord-queue.x-k8s.io NAME` and `kubectl explain`
// work without --subresource.
func newStorage(src Source, o handlerOptions) map[string]rest.Storage {
	queues := &unitsREST{resource: visibilityv1alpha1.ResourceQueues, src: src, now: o.now, authz: o.authz}
	quotas := &unitsREST{resource: visibilityv1alpha1.ResourceElasticQuotas, src: src, now: o.now, authz: o.authz}
	return map[string]rest.Storage{
		visibilityv1alpha1.ResourceQueues:                                                         queues,
		visibilityv1alpha1.ResourceQueues + "/" + visibilityv1alpha1.SubresourceQueueUnits:        queues,
		visibilityv1alpha1.ResourceElasticQuotas:                                                  quotas,
		visibilityv1alpha1.ResourceElasticQuotas + "/" + visibilityv1alpha1.SubresourceQueueUnits: quotas,
		visibilityv1alpha1.ResourceQuotas:                                                         &quotasREST{src: src},
		visibilityv1alpha1.ResourceFeatureGates:                                                   &featureGatesREST{gates: o.gates},
	}
}

// unitsREST serves GET .../{queues,elasticquotas}/{name}[/queueunits] with
// the query parameters of QueueUnitsOptions.
type unitsREST struct {
	resource string
	src      Source
	now      func() time.Time
	// authz decides whose units a caller sees; nil shows all (tests).
	authz authorizer.Authorizer
}

var (
	_ rest.Storage              = (*unitsREST)(nil)
	_ rest.Scoper               = (*unitsREST)(nil)
	_ rest.GetterWithOptions    = (*unitsREST)(nil)
	_ rest.TableConvertor       = (*unitsREST)(nil)
	_ rest.SingularNameProvider = (*unitsREST)(nil)
)

func (r *unitsREST) New() runtime.Object     { return &visibilityv1alpha1.QueueUnitsSummary{} }
func (r *unitsREST) Destroy()                {}
func (r *unitsREST) NamespaceScoped() bool   { return false }
func (r *unitsREST) GetSingularName() string { return strings.TrimSuffix(r.resource, "s") }
func (r *unitsREST) NewGetOptions() (runtime.Object, bool, string) {
	return visibilityv1alpha1.NewQueueUnitsOptions(), false, ""
}

// Get lists the units of the queue or quota name that the caller may see:
// those of the namespaces where it may list QueueUnits, at their positions
// in the whole queue.
func (r *unitsREST) Get(ctx context.Context, name string, options runtime.Object) (runtime.Object, error) {
	q, ok := options.(*visibilityv1alpha1.QueueUnitsOptions)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unexpected options %T", options))
	}
	if err := checkReplica(ctx, r.src); err != nil {
		return nil, err
	}
	scope := Scope{Resource: r.resource, Name: name}
	gr := gv.WithResource(r.resource).GroupResource()
	items, found, err := r.src.Units(ctx, scope, q.Phase)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing units failed", "resource", scope.Resource, "name", scope.Name)
		return nil, apierrors.NewInternalError(err)
	}
	if !found {
		return nil, apierrors.NewNotFound(gr, name)
	}
	if u, ok := genericapirequest.UserFrom(ctx); ok && r.authz != nil {
		if items, err = visibleTo(ctx, items, listFilter(r.authz, u)); err != nil {
			klog.FromContext(ctx).Error(err, "Checking access to namespaces failed", "resource", scope.Resource, "name", scope.Name)
			return nil, apierrors.NewInternalError(err)
		}
	}
	out := &visibilityv1alpha1.QueueUnitsSummary{
		TypeMeta: metav1.TypeMeta{Kind: "QueueUnitsSummary", APIVersion: gv.String()},
		Phase:    q.Phase, Total: int32(len(items)), Offset: int32(q.Offset),
		Items: page(items, int(q.Offset), int(q.Limit)),
	}
	r.src.Explain(ctx, out.Items)
	return out, nil
}

// ConvertToTable is one row per unit (tableColumns).
func (r *unitsREST) ConvertToTable(_ context.Context, obj runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	s, ok := obj.(*visibilityv1alpha1.QueueUnitsSummary)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("no table for %T", obj))
	}
	return toTable(s, r.now()), nil
}

// quotasREST serves GET .../quotas and .../quotas/{name}.
type quotasREST struct {
	src Source
}

var (
	_ rest.Getter               = (*quotasREST)(nil)
	_ rest.Lister               = (*quotasREST)(nil)
	_ rest.Scoper               = (*quotasREST)(nil)
	_ rest.SingularNameProvider = (*quotasREST)(nil)
)

func (r *quotasREST) New() runtime.Object     { return &visibilityv1alpha1.Quota{} }
func (r *quotasREST) NewList() runtime.Object { return &visibilityv1alpha1.QuotaList{} }
func (r *quotasREST) Destroy()                {}
func (r *quotasREST) NamespaceScoped() bool   { return false }
func (r *quotasREST) GetSingularName() string { return "quota" }

func (r *quotasREST) quotas(ctx context.Context) ([]visibilityv1alpha1.Quota, error) {
	if err := checkReplica(ctx, r.src); err != nil {
		return nil, err
	}
	quotas, err := r.src.Quotas(ctx)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing quotas failed")
		return nil, apierrors.NewInternalError(err)
	}
	return quotas, nil
}

// List answers every quota; selectors are not supported.
func (r *quotasREST) List(ctx context.Context, _ *metainternalversion.ListOptions) (runtime.Object, error) {
	quotas, err := r.quotas(ctx)
	if err != nil {
		return nil, err
	}
	if quotas == nil {
		quotas = []visibilityv1alpha1.Quota{}
	}
	return &visibilityv1alpha1.QuotaList{TypeMeta: metav1.TypeMeta{Kind: "QuotaList", APIVersion: gv.String()}, Items: quotas}, nil
}

// Get answers one quota by name.
func (r *quotasREST) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	quotas, err := r.quotas(ctx)
	if err != nil {
		return nil, err
	}
	for i := range quotas {
		if quotas[i].Name == name {
			return &quotas[i], nil
		}
	}
	return nil, apierrors.NewNotFound(gv.WithResource(visibilityv1alpha1.ResourceQuotas).GroupResource(), name)
}

// ConvertToTable is one row per quota (quotaColumns).
func (r *quotasREST) ConvertToTable(_ context.Context, obj runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	switch o := obj.(type) {
	case *visibilityv1alpha1.QuotaList:
		return quotaTable(o.Items), nil
	case *visibilityv1alpha1.Quota:
		return quotaTable([]visibilityv1alpha1.Quota{*o}), nil
	}
	return nil, apierrors.NewInternalError(fmt.Errorf("no table for %T", obj))
}

// featureGatesREST serves GET .../featuregates, a collection read, so that it
// is listed in discovery (kube-apiserver authorizes it as list featuregates).
type featureGatesREST struct {
	gates features.Gates
}

var (
	_ rest.Lister               = (*featureGatesREST)(nil)
	_ rest.Scoper               = (*featureGatesREST)(nil)
	_ rest.SingularNameProvider = (*featureGatesREST)(nil)
)

func (r *featureGatesREST) New() runtime.Object     { return &visibilityv1alpha1.FeatureGates{} }
func (r *featureGatesREST) NewList() runtime.Object { return &visibilityv1alpha1.FeatureGates{} }
func (r *featureGatesREST) Destroy()                {}
func (r *featureGatesREST) NamespaceScoped() bool   { return false }
func (r *featureGatesREST) GetSingularName() string { return "featuregate" }

// List answers every known gate with its state.
func (r *featureGatesREST) List(context.Context, *metainternalversion.ListOptions) (runtime.Object, error) {
	return featureGates(r.gates), nil
}

var gateColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the feature gate."},
	{Name: "Enabled", Type: "boolean", Description: "Whether the scheduler runs with the gate on."},
}

// ConvertToTable is one row per gate.
func (r *featureGatesREST) ConvertToTable(_ context.Context, obj runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	g, ok := obj.(*visibilityv1alpha1.FeatureGates)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("no table for %T", obj))
	}
	t := &metav1.Table{ColumnDefinitions: gateColumns}
	for _, name := range features.Known {
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells:  []any{name, g.Gates[name]},
			Object: runtime.RawExtension{Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}},
		})
	}
	return t, nil
}
