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
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Name is the webhook's name inside its configuration.
const Name = "jobs.koord-queue.x-k8s.io"

// PodsName is the name of the second webhook, for bare pods (extension pod).
const PodsName = "pods.koord-queue.x-k8s.io"

// TimeoutSeconds bounds a call: the handler reads nothing but a cached
// Namespace, so a slow answer means the webhook is in trouble, and the API
// server should go on (failurePolicy Ignore) rather than wait.
const TimeoutSeconds = 5

// Configuration is the MutatingWebhookConfiguration for exts, reached through
// clientConfig: creations of each kind, failurePolicy Ignore (the API server
// keeps working when the webhook is down; the reconciler's backstop holds
// what slipped through). Its CA bundle and namespace selector are left to
// the binary (Configurer), which writes them at start. The chart renders the
// same object.
func Configuration(name string, exts []framework.Extension, clientConfig admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.MutatingWebhookConfiguration {
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks:   []admissionregistrationv1.MutatingWebhook{hook(Name, clientConfig, Rules(exts))},
	}
	for _, ext := range exts {
		if isPod(ext) || ext.HoldsPod != nil {
			cfg.Webhooks = append(cfg.Webhooks, PodWebhook(clientConfig))
			break
		}
	}
	return cfg
}

func hook(name string, clientConfig admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations) admissionregistrationv1.MutatingWebhook {
	return admissionregistrationv1.MutatingWebhook{
		Name:                    name,
		ClientConfig:            clientConfig,
		Rules:                   rules,
		FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
		MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
		TimeoutSeconds:          ptr.To[int32](TimeoutSeconds),
		ReinvocationPolicy:      ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
	}
}

// PodWebhook is the webhook of extension pod, and of kinds whose pods are
// held by the scheduling gate (Extension.HoldsPod): pod creations, called only for
// pods with the quota label (objectSelector), so no other pod ever waits on
// it. failurePolicy Ignore, as for jobs: the pods of Jobs carry that label
// too, and a webhook that is down must not stop them; a bare pod created
// meanwhile runs outside the queue, and the reconciler says so.
func PodWebhook(clientConfig admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.MutatingWebhook {
	w := hook(PodsName, clientConfig, []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
			Scope: ptr.To(admissionregistrationv1.NamespacedScope),
		},
	}})
	w.ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: schedv1alpha1.QuotaNameLabel, Operator: metav1.LabelSelectorOpExists,
	}}}
	return w
}

func isPod(ext framework.Extension) bool { return ext.GVK.Group == "" && ext.GVK.Kind == "Pod" }

// Rules are the creations of every kind of exts but pods (PodWebhook).
func Rules(exts []framework.Extension) []admissionregistrationv1.RuleWithOperations {
	rules := make([]admissionregistrationv1.RuleWithOperations, 0, len(exts))
	for _, ext := range exts {
		if isPod(ext) {
			continue
		}
		plural, _ := meta.UnsafeGuessKindToResource(ext.GVK)
		rules = append(rules, admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{ext.GVK.Group},
				APIVersions: []string{ext.GVK.Version},
				Resources:   []string{plural.Resource},
				Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
			},
		})
	}
	return rules
}
