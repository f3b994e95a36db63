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

package quotaqueues

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

const (
	// DefaultQueuePriority is the priority of a Queue made for an ElasticQuota.
	DefaultQueuePriority int32 = 1000
	// CreatedByLabel marks a Queue made for an ElasticQuota; its value is the
	// quota's namespace.
	CreatedByLabel = "scheduling.x-k8s.io/created-by-elasticquota"
	// CopiedAnnotationsAnnotation lists, comma-separated and sorted, the
	// koord-queue/* annotations of a Queue that were copied from its
	// ElasticQuota: those go when the quota drops them; the others were
	// written on the Queue by hand and stay.
	CopiedAnnotationsAnnotation = "scheduling.x-k8s.io/copied-annotations"
)

// alreadyExistsRetry is how soon a Queue that another writer created first
// is synced again.
const alreadyExistsRetry = 100 * time.Millisecond

// Reconcile makes the Queue named like an ElasticQuota match it: made when
// missing, its policy and copied annotations kept in step, deleted with its
// quota. Koordinator's own quotas get no Queue.
func (c *Controller) Reconcile(ctx context.Context, name string) error {
	eq := c.counting(name)
	q, err := c.getQueue(ctx, name)
	if err != nil {
		return err
	}
	if eq == nil || quota.IsSystem(schedtypes.QuotaName(name)) {
		return c.deleteMade(ctx, q)
	}
	policy := c.policy(eq)
	if q == nil {
		return c.create(ctx, name, eq, policy)
	}
	if q.Labels[CreatedByLabel] == "" {
		// A Queue written by hand keeps its own settings.
		return nil
	}
	return c.update(ctx, q, eq, policy)
}

// getQueue reads the Queue of name; nil when there is none.
func (c *Controller) getQueue(ctx context.Context, name string) (*schedv1alpha1.Queue, error) {
	q := &schedv1alpha1.Queue{}
	err := c.client.Get(ctx, client.ObjectKey{Namespace: schedv1alpha1.QueueNamespace, Name: name}, q)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get queue: %w", err)
	}
	return q, nil
}

// deleteMade deletes q when it was made for a quota: there is no quota of
// its name any more, or it is one of Koordinator's own (a Queue made
// before that rule goes). A Queue written by hand stays.
func (c *Controller) deleteMade(ctx context.Context, q *schedv1alpha1.Queue) error {
	if q == nil || q.Labels[CreatedByLabel] == "" {
		return nil
	}
	if err := c.client.Delete(ctx, q); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete queue of deleted quota: %w", err)
	}
	return nil
}

// policy is the Queue policy eq asks for: its label, Priority without one,
// "" (keep the Queue's) when the label is no policy, which is reported.
func (c *Controller) policy(eq *eqv1alpha1.ElasticQuota) schedv1alpha1.QueuePolicy {
	policy, err := policyOf(eq)
	switch {
	case err != nil:
		c.recorder.Eventf(eq, corev1.EventTypeWarning, "InvalidQueuePolicy", "%v", err)
	case policy == "":
		// No label: the default, also when a label was removed.
		policy = schedv1alpha1.QueuePolicyPriority
	}
	return policy
}

// create makes the Queue of eq, and its namespace.
func (c *Controller) create(ctx context.Context, name string, eq *eqv1alpha1.ElasticQuota, policy schedv1alpha1.QueuePolicy) error {
	if err := c.ensureNamespace(ctx); err != nil {
		return err
	}
	if policy == "" {
		policy = schedv1alpha1.QueuePolicyPriority
	}
	q := &schedv1alpha1.Queue{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: schedv1alpha1.QueueNamespace,
			Labels:      map[string]string{CreatedByLabel: eq.Namespace},
			Annotations: queueAnnotations(nil, eq),
		},
		Spec: schedv1alpha1.QueueSpec{QueuePolicy: policy, Priority: ptr.To(DefaultQueuePriority)},
	}
	if err := c.client.Create(ctx, q); err != nil {
		if apierrors.IsAlreadyExists(err) {
			c.queue.AddAfter(name, alreadyExistsRetry)
			return nil
		}
		return fmt.Errorf("create queue: %w", err)
	}
	return nil
}

// update patches the policy and the copied annotations of q, made for eq,
// when they differ from what eq asks.
func (c *Controller) update(ctx context.Context, q *schedv1alpha1.Queue, eq *eqv1alpha1.ElasticQuota, policy schedv1alpha1.QueuePolicy) error {
	want := q.DeepCopy()
	if policy != "" {
		want.Spec.QueuePolicy = policy
	}
	want.Annotations = queueAnnotations(q.Annotations, eq)
	if want.Spec.QueuePolicy == q.Spec.QueuePolicy && maps.Equal(want.Annotations, q.Annotations) {
		return nil
	}
	if err := c.client.Patch(ctx, want, client.MergeFromWithOptions(q, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("update queue: %w", err)
	}
	return nil
}

func (c *Controller) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: schedv1alpha1.QueueNamespace}}
	if err := c.client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", schedv1alpha1.QueueNamespace, err)
	}
	return nil
}

// policyOf reads the koord-queue/queue-policy label: "" when absent.
func policyOf(eq *eqv1alpha1.ElasticQuota) (schedv1alpha1.QueuePolicy, error) {
	v, ok := eq.Labels[schedv1alpha1.QueuePolicyLabel]
	if !ok || v == "" {
		return "", nil
	}
	switch p := schedv1alpha1.QueuePolicy(v); p {
	case schedv1alpha1.QueuePolicyPriority, schedv1alpha1.QueuePolicyBlock, schedv1alpha1.QueuePolicyIntelligent:
		return p, nil
	}
	return "", fmt.Errorf("label %s=%q on ElasticQuota %s/%s is not a queue policy (Priority, Block or Intelligent); the Queue keeps its policy",
		schedv1alpha1.QueuePolicyLabel, v, eq.Namespace, eq.Name)
}

// queueAnnotations is what the annotations of a Queue made for eq should be,
// given its current ones: the quota's koord-queue/* annotations win; a
// koord-queue/* key the quota copied before and dropped since goes; any
// other key stays (a koord-queue/* one written on the Queue by hand too).
// CopiedAnnotationsAnnotation records the copied keys. A Queue without that
// record predates it, when every koord-queue/* key came from the quota.
func queueAnnotations(current map[string]string, eq *eqv1alpha1.ElasticQuota) map[string]string {
	copied := copiedAnnotations(eq)
	out := maps.Clone(current)
	if out == nil {
		out = map[string]string{}
	}
	before, recorded := current[CopiedAnnotationsAnnotation]
	for k := range current {
		if !strings.HasPrefix(k, schedv1alpha1.AnnotationPrefix) {
			continue
		}
		if _, still := copied[k]; !still && (!recorded || slices.Contains(strings.Split(before, ","), k)) {
			delete(out, k)
		}
	}
	maps.Copy(out, copied)
	keys := slices.Sorted(maps.Keys(copied))
	out[CopiedAnnotationsAnnotation] = strings.Join(keys, ",")
	return out
}

func copiedAnnotations(eq *eqv1alpha1.ElasticQuota) map[string]string {
	var out map[string]string
	for k, v := range eq.Annotations {
		if strings.HasPrefix(k, schedv1alpha1.AnnotationPrefix) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}
