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

package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/koordinator-sh/koord-queue/pkg/util/certrotation"
)

// retryDelay is how soon a failed sync is tried again.
const retryDelay = 5 * time.Second

// Configurer keeps the serving certificate renewed (when the binary manages
// it) and the MutatingWebhookConfiguration's CA bundle and namespace
// selector in step, checking again every interval: a chart upgrade or a hand
// edit that resets them is undone within one interval.
type Configurer struct {
	client   client.Client
	reader   client.Reader
	clock    clock.Clock
	rotator  *certrotation.Rotator
	name     string
	selector *metav1.LabelSelector
	interval time.Duration

	synced  atomic.Bool
	missing atomic.Bool
}

var _ manager.LeaderElectionRunnable = (*Configurer)(nil)

// NewConfigurer keeps the configuration called name. rotator is nil when
// the certificate comes from elsewhere (cert-manager): then the CA bundle is
// left to whoever supplies it.
func NewConfigurer(c client.Client, reader client.Reader, clk clock.Clock, rotator *certrotation.Rotator, name string, selector *metav1.LabelSelector, interval time.Duration) *Configurer {
	return &Configurer{client: c, reader: reader, clock: clk, rotator: rotator, name: name, selector: selector, interval: interval}
}

// NeedLeaderElection is false: every replica serves, so every replica keeps
// its certificate loaded; their writes are idempotent and optimistic.
func (c *Configurer) NeedLeaderElection() bool { return false }

// Ready is a readiness check: the certificate is loaded and the
// configuration was brought in step once (or found missing: then nothing
// calls the webhook).
func (c *Configurer) Ready(*http.Request) error {
	if !c.synced.Load() {
		return fmt.Errorf("webhook configuration %s not in step yet", c.name)
	}
	return nil
}

// Start syncs until ctx ends.
func (c *Configurer) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("webhook-configurer")
	ctx = ctrl.LoggerInto(ctx, log)
	for {
		wait, err := c.Sync(ctx)
		if err != nil {
			log.Error(err, "Keeping the webhook's certificate and configuration")
			wait = retryDelay
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.clock.After(wait):
		}
	}
}

// Sync renews the certificate if due, then writes the configuration's CA
// bundle and namespace selector where they differ. It returns how long until
// the next check.
func (c *Configurer) Sync(ctx context.Context) (time.Duration, error) {
	wait := c.interval
	var bundle []byte
	if c.rotator != nil {
		left, err := c.rotator.Ensure(ctx)
		if err != nil {
			return 0, fmt.Errorf("serving certificate: %w", err)
		}
		wait = min(wait, max(left, time.Second))
		bundle = c.rotator.Bundle()
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.reader.Get(ctx, client.ObjectKey{Name: c.name}, cfg); err != nil {
		if !apierrors.IsNotFound(err) {
			return 0, fmt.Errorf("get MutatingWebhookConfiguration %s: %w", c.name, err)
		}
		// Nothing calls the webhook; serving is harmless. Said once.
		if !c.missing.Swap(true) {
			ctrl.LoggerFrom(ctx).Info("No webhook configuration to keep: the API server does not call the webhook", "name", c.name)
		}
		c.synced.Store(true)
		return wait, nil
	}
	c.missing.Store(false)
	if len(cfg.Webhooks) == 0 {
		return 0, errors.New("MutatingWebhookConfiguration " + c.name + " has no webhooks")
	}
	desired := cfg.DeepCopy()
	for i := range desired.Webhooks {
		w := &desired.Webhooks[i]
		if bundle != nil && !bytes.Equal(w.ClientConfig.CABundle, bundle) {
			w.ClientConfig.CABundle = bundle
		}
		w.NamespaceSelector = c.selector.DeepCopy()
	}
	if !equality.Semantic.DeepEqual(cfg.Webhooks, desired.Webhooks) {
		if err := c.client.Patch(ctx, desired, client.MergeFromWithOptions(cfg, client.MergeFromWithOptimisticLock{})); err != nil {
			return 0, fmt.Errorf("update MutatingWebhookConfiguration %s: %w", c.name, err)
		}
		ctrl.LoggerFrom(ctx).V(2).Info("Updated the webhook configuration", "name", c.name)
	}
	c.synced.Store(true)
	return wait, nil
}
