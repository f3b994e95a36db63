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
	"context"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/util/certrotation"
)

// TestConfigurerSync: the configuration gets the rotator's CA bundle and the
// namespace selector, an edit is undone at the next sync, and a missing
// configuration is no error and leaves the webhook ready.
func TestConfigurerSync(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	cfg := Configuration("kq", nil, admissionregistrationv1.WebhookClientConfig{URL: new(string)})
	c := fake.NewClientBuilder().WithObjects(cfg).Build()
	rot := certrotation.New(c, c, clk, certrotation.DefaultOptions(types.NamespacedName{Namespace: "kq", Name: "cert"}, []string{"127.0.0.1"}))
	sel, err := framework.DefaultNamespaceSelector("kq").WebhookSelector("kq")
	if err != nil {
		t.Fatal(err)
	}
	conf := NewConfigurer(c, c, clk, rot, "kq", sel, time.Minute)
	if conf.Ready(nil) == nil {
		t.Fatal("ready before the first sync")
	}
	check := func() {
		t.Helper()
		if wait, err := conf.Sync(ctx); err != nil || wait != time.Minute {
			t.Fatalf("Sync: next in %s, %v", wait, err)
		}
		got := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: "kq"}, got); err != nil {
			t.Fatal(err)
		}
		w := got.Webhooks[0]
		if string(w.ClientConfig.CABundle) != string(rot.Bundle()) || len(w.ClientConfig.CABundle) == 0 {
			t.Errorf("caBundle %q, want the rotator's", w.ClientConfig.CABundle)
		}
		if w.NamespaceSelector == nil || len(w.NamespaceSelector.MatchExpressions) != 1 {
			t.Errorf("namespaceSelector %+v, want the exclusion of kube-system and kq", w.NamespaceSelector)
		}
	}
	check()
	if conf.Ready(nil) != nil {
		t.Error("not ready after a sync")
	}
	edited := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: "kq"}, edited); err != nil {
		t.Fatal(err)
	}
	edited.Webhooks[0].ClientConfig.CABundle = nil
	edited.Webhooks[0].NamespaceSelector = &metav1.LabelSelector{}
	if err := c.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	check()

	if err := c.Delete(ctx, edited); err != nil {
		t.Fatal(err)
	}
	missing := NewConfigurer(c, c, clk, rot, "kq", sel, time.Minute)
	if _, err := missing.Sync(ctx); err != nil || missing.Ready(nil) != nil {
		t.Errorf("missing configuration: Sync error %v, ready %v", err, missing.Ready(nil))
	}
}
