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
	"encoding/json"
	"fmt"
	"net/http"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// Path is where the webhook is served; one path for every kind.
const Path = "/mutate-jobs"

// Handler suspends managed jobs at creation and stamps when their creation
// was accepted (koord-queue/created-at, to the nanosecond), so that jobs
// created within one second keep their order in the queue. Every answer
// allows the request: a job it cannot read goes through unchanged (the
// reconciler's backstop holds it later if it is managed), so the webhook
// never blocks an apply.
type Handler struct {
	kinds map[schema.GroupVersionKind]*framework.Extension
	// holders are the kinds whose pods are held by the scheduling gate.
	holders    []*framework.Extension
	namespaces client.Reader
	manageAll  bool
	selector   framework.NamespaceSelector
	clock      clock.PassiveClock
	// defaultQuota is --default-quota, for jobs without a quota label.
	defaultQuota string
}

// HandlerOption configures NewHandler.
type HandlerOption func(*Handler)

// WithDefaultQuota labels the pods of managed jobs without a quota label
// with quota (--default-quota).
func WithDefaultQuota(quota string) HandlerOption {
	return func(h *Handler) { h.defaultQuota = quota }
}

var _ admission.Handler = (*Handler)(nil)

// NewHandler serves exts. namespaces reads Namespaces, for --manage-all-jobs;
// clk stamps creations.
func NewHandler(exts []framework.Extension, namespaces client.Reader, manageAll bool, selector framework.NamespaceSelector, clk clock.PassiveClock, opts ...HandlerOption) *Handler {
	h := &Handler{kinds: map[schema.GroupVersionKind]*framework.Extension{}, namespaces: namespaces, manageAll: manageAll, selector: selector, clock: clk}
	for _, o := range opts {
		o(h)
	}
	for i := range exts {
		h.kinds[exts[i].GVK] = &exts[i]
		if exts[i].HoldsPod != nil {
			h.holders = append(h.holders, &exts[i])
		}
	}
	return h
}

// Handle suspends a job being created when koord-queue will manage it, and
// refuses one with more pod sets than a unit takes.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	gvk := schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
	log := ctrl.LoggerFrom(ctx).WithValues("kind", gvk.String(), "job", klog.KRef(req.Namespace, req.Name), "uid", req.UID)
	if req.Operation != admissionv1.Create {
		return admission.Allowed("only creations are changed")
	}
	if gvk == corev1.SchemeGroupVersion.WithKind("Pod") && len(h.holders) > 0 {
		if resp, ok := h.holdPod(ctx, req); ok {
			return resp
		}
	}
	ext := h.kinds[gvk]
	if ext == nil {
		log.V(2).Info("Webhook call for a kind no enabled extension serves")
		return admission.Allowed("kind not served")
	}
	obj := ext.NewObject()
	if err := json.Unmarshal(req.Object.Raw, obj); err != nil {
		log.Info("Letting through a job the webhook cannot decode", "err", err.Error())
		return admission.Allowed("not decodable; left unchanged")
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(req.Namespace)
	}
	gj, err := ext.Wrap(obj)
	if err != nil {
		log.Info("Letting through a job the webhook cannot read", "err", err.Error())
		return admission.Allowed("not readable; left unchanged")
	}
	managed, err := h.managed(ctx, gj)
	if err != nil {
		log.Info("Letting through a job whose namespace cannot be read", "err", err.Error())
		return admission.Allowed("namespace not readable; left unchanged")
	}
	if !managed {
		return admission.Allowed("not managed by koord-queue")
	}
	if sets, err := gj.PodSets(); err == nil {
		if err := framework.CheckPodSetCount(sets); err != nil {
			log.V(2).Info("Refusing a job koord-queue cannot queue", "podSets", len(sets))
			return admission.Denied(err.Error())
		}
	}
	patched, err := held(ext, gj, req.Object.Raw, queueunit.FormatCreated(h.clock.Now()), h.podLabels(ext, gj))
	if err != nil {
		log.Info("Letting through a job the webhook cannot suspend", "err", err.Error())
		return admission.Allowed("cannot suspend; left unchanged")
	}
	resp := admission.PatchResponseFromRaw(req.Object.Raw, patched)
	if len(resp.Patches) > 0 {
		log.V(2).Info("Holding a new job until its queue unit is admitted")
	}
	return resp
}

// holdPod gates a pod of a kind that has no suspension field (the kind's
// HoldsPod says so); ok is false for any other pod.
func (h *Handler) holdPod(ctx context.Context, req admission.Request) (admission.Response, bool) {
	pod := &corev1.Pod{}
	if err := json.Unmarshal(req.Object.Raw, pod); err != nil {
		return admission.Response{}, false
	}
	for _, ext := range h.holders {
		if !ext.HoldsPod(pod) {
			continue
		}
		before, err := json.Marshal(pod)
		if err != nil {
			return admission.Response{}, false
		}
		framework.Gate(pod)
		after, err := json.Marshal(pod)
		if err != nil {
			return admission.Response{}, false
		}
		patched, err := mergeInto(req.Object.Raw, before, after)
		if err != nil {
			ctrl.LoggerFrom(ctx).Info("Letting through a pod the webhook cannot gate", "kind", ext.GVK.Kind, "err", err.Error())
			return admission.Allowed("cannot gate; left unchanged"), true
		}
		ctrl.LoggerFrom(ctx).V(2).Info("Holding a new pod until its queue unit is admitted", "kind", ext.GVK.Kind, "pod", klog.KRef(req.Namespace, pod.Name))
		return admission.PatchResponseFromRaw(req.Object.Raw, patched), true
	}
	return admission.Response{}, false
}

// mergeInto applies to raw the change from before to after, so fields the
// typed object does not know survive.
func mergeInto(raw, before, after []byte) ([]byte, error) {
	change, err := jsonpatch.CreateMergePatch(before, after)
	if err != nil {
		return nil, err
	}
	return jsonpatch.MergePatch(raw, change)
}

// podLabels are the labels the job's pods carry: its unit's quota (the job's
// quota label, else --default-quota) and its unit's name. A job created by
// generateName has no name yet; its unit's name is put on the templates
// before it is resumed.
func (h *Handler) podLabels(ext *framework.Extension, gj framework.GenericJob) map[string]string {
	obj := gj.Object()
	quota := obj.GetLabels()[schedv1alpha1.QuotaNameLabel]
	if quota == "" && h.manageAll {
		quota = h.defaultQuota
	}
	unit := ""
	if obj.GetName() != "" {
		unit = framework.UnitName(ext, obj.GetName())
	}
	return framework.PodLabels(quota, unit)
}

func (h *Handler) managed(ctx context.Context, gj framework.GenericJob) (bool, error) {
	if !h.manageAll || framework.AskedForQueue(gj) {
		// Without --manage-all-jobs only a job that asked is managed.
		return framework.AskedForQueue(gj), nil
	}
	ns := &corev1.Namespace{}
	if err := h.namespaces.Get(ctx, client.ObjectKey{Name: gj.Object().GetNamespace()}, ns); err != nil {
		return false, fmt.Errorf("get namespace: %w", err)
	}
	return framework.ManagedAtCreation(gj, h.manageAll, h.selector, ns), nil
}

// held returns raw with the job suspended, its pod templates labelled with
// podLabels and stamped with createdAt: only the fields the kind's Suspend
// and SetPodLabels change, and the stamp, are written into raw, so fields the
// typed object does not know survive. A stamp the job came with is replaced:
// it is the webhook's to write. A pod template label naming another quota is
// left to the reconciler, which overwrites it before resuming and says so.
func held(ext *framework.Extension, gj framework.GenericJob, raw []byte, createdAt string, podLabels map[string]string) ([]byte, error) {
	before, err := json.Marshal(gj.Object())
	if err != nil {
		return nil, fmt.Errorf("encode job: %w", err)
	}
	gj.Suspend()
	gj.SetPodLabels(keptLabels(ext, gj, podLabels))
	obj := gj.Object()
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[schedv1alpha1.CreatedAtAnnotation] = createdAt
	obj.SetAnnotations(annotations)
	after, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode suspended job: %w", err)
	}
	change, err := jsonpatch.CreateMergePatch(before, after)
	if err != nil {
		return nil, fmt.Errorf("%s suspension: %w", ext.Name, err)
	}
	out, err := jsonpatch.MergePatch(raw, change)
	if err != nil {
		return nil, fmt.Errorf("%s suspension: %w", ext.Name, err)
	}
	return out, nil
}

// keptLabels leaves out of labels those a pod template already sets to
// another value: the reconciler overwrites them before resuming, with an
// event on the job.
func keptLabels(ext *framework.Extension, gj framework.GenericJob, labels map[string]string) map[string]string {
	cp, ok := gj.Object().DeepCopyObject().(client.Object)
	if !ok {
		return labels
	}
	probe, err := ext.Wrap(cp)
	if err != nil {
		return labels
	}
	out := map[string]string{}
	for k, v := range labels {
		out[k] = v
	}
	for _, r := range probe.SetPodLabels(labels) {
		delete(out, r.Key)
	}
	return out
}

// Webhook wraps the handler for the webhook server.
func (h *Handler) Webhook() http.Handler {
	return &admission.Webhook{Handler: h}
}
