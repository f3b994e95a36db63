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
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/warning"

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
	authn authenticator.Request
	authz authorizer.Authorizer
	// maxInFlight bounds the requests at once (NewHandler); 0 means
	// DefaultMaxRequestsInFlight.
	maxInFlight int
}

// WithGates publishes the scheduler's feature gates at .../featuregates.
func WithGates(g features.Gates) Option { return func(o *handlerOptions) { o.gates = g } }

// WithUI serves ui (the web view, pkg/visibility/ui) under .../ui/; nil
// leaves .../ui/ unserved (404).
func WithUI(ui http.Handler) Option { return func(o *handlerOptions) { o.ui = ui } }

// WithClock sets the clock the Table's AGE column is counted on (tests).
func WithClock(now func() time.Time) Option { return func(o *handlerOptions) { o.now = now } }

// WithAuth authenticates every request with authn and authorizes it with
// authz, which also decides, per namespace, whose units a caller sees.
func WithAuth(authn authenticator.Request, authz authorizer.UnconditionalAuthorizer) Option {
	return func(o *handlerOptions) { o.authn, o.authz = authn, authorizer.AuthorizerFunc(authz.Authorize) }
}

// nowFunc is the default clock; tests pass their own (WithClock).
func nowFunc() func() time.Time {
	return time.Now //nolint:forbidigo // the default clock
}

// FollowerWarning is the text of the Warning header (code 299) on the answers
// of a replica that does not lead; kubectl prints it.
const FollowerWarning = "this koord-queue replica is not the leader: positions and phases follow the leader's by one status write"

// checkReplica refuses with 503 ServiceUnavailable, naming what is not read
// yet, while src's replica has not synced its caches (an empty list would be
// a wrong answer, not a late one), and adds a warning to a follower's
// answers. Sources that are no Replica pass.
func checkReplica(ctx context.Context, src Source) error {
	rep, ok := src.(Replica)
	if !ok {
		return nil
	}
	if missing := rep.Unsynced(); len(missing) > 0 {
		err := apierrors.NewServiceUnavailable(fmt.Sprintf(
			"the scheduler has not read all of %s yet; try again shortly", strings.Join(missing, ", ")))
		err.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: 1}
		return err
	}
	if !rep.Leading() {
		warning.AddWarning(ctx, "", FollowerWarning)
	}
	return nil
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
