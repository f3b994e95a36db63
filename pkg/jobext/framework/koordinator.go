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

package framework

import (
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// Beside Koordinator (docs/protocol.md, "Beside Koordinator: one book of
// quota"): what koord-scheduler, and whoever else evicts pods, does to the
// pods of an admitted unit, read from the pods its label names.

// quotaRefusalMarkers are the starts of koord-scheduler's refusals for quota.
// koord-scheduler v1.7.0's ElasticQuota plugin refuses a pod at PreFilter with
// "Insufficient quotas, quotaName: Q, runtime: ..., used: ..., pod's request:
// ..., exceedDimensions: [...]" (its quota), "Insufficient quotas,
// quotaNameTopo: [...], ..." (an ancestor, with EnableCheckParentQuota) or
// "Insufficient non-preemptible quotas, quotaName: Q, min: ..." (a pod that may
// not be preempted, beyond min): github.com/koordinator-sh/koordinator@v1.7.0
// pkg/scheduler/plugins/elasticquota/plugin.go (PreFilter) and
// plugin_helper.go (checkQuotaRecursive). The scheduling framework
// (k8s.io/kubernetes v1.28 pkg/scheduler/framework/types.go, FitError.Error)
// writes it into the pod's condition PodScheduled=False, reason
// Unschedulable, as "0/N nodes are available: <message>." and may add the
// PostFilter's message after it.
var quotaRefusalMarkers = []string{"Insufficient quotas", "Insufficient non-preemptible quotas"}

// RefusedForQuota reports whether a pod's condition PodScheduled=False, of
// reason and message, says that koord-scheduler refused the pod for quota.
func RefusedForQuota(reason, message string) bool {
	if reason != corev1.PodReasonUnschedulable {
		return false
	}
	for _, m := range quotaRefusalMarkers {
		if strings.Contains(message, m) {
			return true
		}
	}
	return false
}

// refusal is a pod of a unit that koord-scheduler refuses for quota.
type refusal struct {
	pod     string
	message string
	since   metav1.Time
}

// oldestRefusal is the pod refused for quota the longest among pods: pending,
// not being deleted, PodScheduled=False for quota.
func oldestRefusal(pods []corev1.Pod) (refusal, bool) {
	var oldest refusal
	found := false
	for i := range pods {
		pod := &pods[i]
		if pod.Status.Phase != corev1.PodPending || pod.DeletionTimestamp != nil {
			continue
		}
		c := podCondition(pod, corev1.PodScheduled)
		if c == nil || c.Status != corev1.ConditionFalse || !RefusedForQuota(c.Reason, c.Message) {
			continue
		}
		if !found || c.LastTransitionTime.Before(&oldest.since) {
			oldest = refusal{pod: pod.Name, message: c.Message, since: c.LastTransitionTime}
			found = true
		}
	}
	return oldest, found
}

func anyRunning(pods []corev1.Pod) bool {
	for i := range pods {
		if pods[i].Status.Phase == corev1.PodRunning {
			return true
		}
	}
	return false
}

// quotaRefusal tells on the unit whether koord-scheduler refuses its pods for
// quota (queueunit.MarkRefusedByQuota), and when none of its pods runs,
// enforces QuotaRefusalTimeout, counted from the start of the refusal: it
// returns the time left (0: no deadline), or, once that is over, the message
// that sends the unit to TimeoutBackoff.
func (r *Reconciler) quotaRefusal(desired *schedv1alpha1.QueueUnit, status JobStatus, pods []corev1.Pod) (time.Duration, string) {
	ref, ok := oldestRefusal(pods)
	if !ok {
		queueunit.EndRefusedByQuota(desired, r.now())
		return 0, ""
	}
	quota := queueunit.QuotaOf(desired)
	queueunit.MarkRefusedByQuota(desired, fmt.Sprintf("koord-scheduler refuses pod %s for quota %s: %s", ref.pod, quota, ref.message), ref.since)
	if r.opts.QuotaRefusalTimeout <= 0 || status.Running() > 0 || anyRunning(pods) {
		return 0, ""
	}
	since, _ := queueunit.RefusedByQuotaSince(desired)
	if left := r.opts.QuotaRefusalTimeout - r.clock.Since(since.Time); left > 0 {
		return left, ""
	}
	return 0, fmt.Sprintf("koord-scheduler refused the pods for quota %s for %s with none running (pod %s: %s): suspended, and its quota given back",
		quota, r.opts.QuotaRefusalTimeout, ref.pod, ref.message)
}

// podEvictedReason is the status.reason of a pod the kubelet evicted.
const podEvictedReason = "Evicted"

// evictionOf says whether something evicted the pod: condition
// DisruptionTarget=True (the eviction API, a scheduler's preemption, the
// taint manager, the kubelet), or phase Failed with reason Evicted (the
// kubelet, without the condition); and why.
func evictionOf(pod *corev1.Pod) (reason, message string, evicted bool) {
	if c := podCondition(pod, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue {
		return c.Reason, c.Message, true
	}
	if pod.Status.Phase == corev1.PodFailed && pod.Status.Reason == podEvictedReason {
		return pod.Status.Reason, pod.Status.Message, true
	}
	return "", "", false
}

// eviction is a pod of a unit that was evicted.
type eviction struct {
	uid             types.UID
	pod             string
	reason, message string
}

func evictions(pods []corev1.Pod) []eviction {
	var out []eviction
	for i := range pods {
		if reason, message, ok := evictionOf(&pods[i]); ok {
			out = append(out, eviction{uid: pods[i].UID, pod: pods[i].Name, reason: reason, message: message})
		}
	}
	return out
}

// toldEvictions remembers, per unit, the evicted pods already told
// (PodsEvictedElsewhere), so that each is told once however often its job is
// reconciled. It is memory, not the unit's status: the protocol gives the
// extension no status field for it, and a status write per evicted pod would
// be a write made only for an event. So a restart tells once more of the
// evicted pods still there. Its size is bounded by the cache: at each
// reconcile a unit keeps only the evicted pods still listed, and a unit that
// no longer holds quota, or whose job is gone, is forgotten. Its lock is its
// own.
type toldEvictions struct {
	mu     sync.Mutex
	byUnit map[types.NamespacedName]map[types.UID]bool
}

// untold returns those of evicted (the unit's evicted pods now) not told yet,
// and from then on remembers evicted as told.
func (s *toldEvictions) untold(unit types.NamespacedName, evicted []eviction) []eviction {
	s.mu.Lock()
	defer s.mu.Unlock()
	told := s.byUnit[unit]
	var out []eviction
	now := make(map[types.UID]bool, len(evicted))
	for _, e := range evicted {
		if !told[e.uid] {
			out = append(out, e)
		}
		now[e.uid] = true
	}
	if len(now) == 0 {
		delete(s.byUnit, unit)
		return out
	}
	if s.byUnit == nil {
		s.byUnit = map[types.NamespacedName]map[types.UID]bool{}
	}
	s.byUnit[unit] = now
	return out
}

func (s *toldEvictions) forget(unit types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byUnit, unit)
}

// tellPods records, once the unit's status is written, the events of what
// its pods showed: a new refusal for quota (once per refusal: the condition
// turned True), and each pod evicted by someone else (once per pod), each on
// the job and on the unit. Nothing is evicted or suspended for an eviction:
// koord-queue's own evictions go through the unit (Evicted=True), which the
// pods of an admitted unit never see.
func (r *Reconciler) tellPods(gj GenericJob, unit, desired *schedv1alpha1.QueueUnit, pods []corev1.Pod) {
	key := client.ObjectKeyFromObject(unit)
	if p := desired.Status.Phase; p != schedv1alpha1.QueueUnitPhaseDequeued && p != schedv1alpha1.QueueUnitPhaseRunning {
		r.evictions.forget(key)
		return
	}
	if since, ok := queueunit.RefusedByQuotaSince(desired); ok {
		if before, was := queueunit.RefusedByQuotaSince(unit); !was || !before.Equal(&since) {
			msg := meta.FindStatusCondition(desired.Status.Conditions, queueunit.ConditionPodsRefusedByQuota).Message
			r.recorder.Eventf(gj.Object(), nil, corev1.EventTypeWarning, EventPodsRefusedByQuota, "Schedule", "%s", msg)
			r.recorder.Eventf(desired, nil, corev1.EventTypeWarning, EventPodsRefusedByQuota, "Schedule", "%s", msg)
		}
	}
	for _, e := range r.evictions.untold(key, evictions(pods)) {
		msg := fmt.Sprintf("pod %s was evicted by someone other than koord-queue (%s: %s); the unit keeps its quota and the job is left to its operator",
			e.pod, e.reason, e.message)
		r.recorder.Eventf(gj.Object(), nil, corev1.EventTypeWarning, EventPodsEvictedElsewhere, "Evict", "%s", msg)
		r.recorder.Eventf(desired, nil, corev1.EventTypeWarning, EventPodsEvictedElsewhere, "Evict", "%s", msg)
	}
}
