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

package jobext

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
	schedapp "github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	itframework "github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// slowUnitCreates delays the creation of each QueueUnit by the delay its
// name maps to: a loaded extension whose workers finish out of order.
type slowUnitCreates struct {
	next  http.RoundTripper
	delay map[string]time.Duration
}

func (s *slowUnitCreates) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/queueunits") && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		_ = req.Body.Close()
		var meta struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		_ = json.Unmarshal(body, &meta)
		if d := s.delay[meta.Metadata.Name]; d > 0 {
			select {
			case <-time.After(d):
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
	}
	return s.next.RoundTrip(req)
}

// runScheduler runs koord-queue in-process until the test ends.
func runScheduler(t *testing.T) {
	t.Helper()
	o := schedapp.NewOptions()
	o.LeaderElect = false
	o.MetricsBindAddress = "0"
	o.MetricsRegistry = prometheus.NewRegistry()
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	itframework.RunScheduler(t, env.Config, o)
}

// TestJobsCreatedTogetherKeepTheirOrder: 20 Jobs of one priority, created
// one after the other within a second or two (as one `kubectl apply` of a
// list does), on a quota with room for one at a time. The extension runs 8
// workers and its unit creations are slowed the more the earlier the job, so
// that without ordering the last job's unit would exist first. Each job is
// dequeued in the order it was created: the first at once, each next one
// when the one before it is deleted; names are not in that order.
func TestJobsCreatedTogetherKeepTheirOrder(t *testing.T) {
	names := []string{"m3", "b7", "x1", "a9", "q2", "c5", "z4", "k8", "h6", "e0",
		"w2", "d8", "r5", "g1", "u7", "f3", "y9", "j4", "p6", "n0"}
	delays := map[string]time.Duration{}
	for i, n := range names {
		delays[n] = time.Duration(len(names)-i) * 30 * time.Millisecond
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &slowUnitCreates{next: rt, delay: delays} })
	w := startWebhookWith(t, cfg, []string{job.Name}, func(o *appOptions) { o.Workers = 8 })
	runScheduler(t)
	ctx := context.Background()
	const quotaName = "ordered"
	eq := &eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: quotaName, Namespace: w.ns},
		Spec: eqv1alpha1.ElasticQuotaSpec{
			Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		},
	}
	if err := w.c.Create(ctx, eq); err != nil {
		t.Fatalf("create quota: %v", err)
	}
	eventually(t, "the quota's queue", func(ctx context.Context) (bool, error) {
		err := w.c.Get(ctx, client.ObjectKey{Namespace: "koord-queue", Name: quotaName}, &schedv1alpha1.Queue{})
		return err == nil, client.IgnoreNotFound(err)
	})

	for _, n := range names {
		j := batchJob(w.ns, n, false, map[string]string{schedv1alpha1.QuotaNameLabel: quotaName})
		j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](1), ptr.To[int32](1)
		if err := w.c.Create(ctx, j); err != nil {
			t.Fatalf("create job %s: %v", n, err)
		}
		if j.Annotations[schedv1alpha1.CreatedAtAnnotation] == "" {
			t.Fatalf("job %s stored without %s: %v", n, schedv1alpha1.CreatedAtAnnotation, j.Annotations)
		}
	}

	var admitted []string
	for len(admitted) < len(names) {
		var running []string
		eventually(t, "one job dequeued", func(ctx context.Context) (bool, error) {
			list := &batchv1.JobList{}
			if err := w.c.List(ctx, list, client.InNamespace(w.ns)); err != nil {
				return false, err
			}
			running = running[:0]
			for i := range list.Items {
				if j := &list.Items[i]; !ptr.Deref(j.Spec.Suspend, true) && j.DeletionTimestamp == nil {
					running = append(running, j.Name)
				}
			}
			return len(running) > 0, nil
		})
		if len(running) != 1 {
			t.Fatalf("jobs %v run at once on a 1-CPU quota (after %v)", running, admitted)
		}
		admitted = append(admitted, running[0])
		if err := w.c.Delete(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: running[0]}},
			client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatalf("delete %s: %v", running[0], err)
		}
	}
	if !slices.Equal(admitted, names) {
		t.Errorf("dequeued in the order\n  %v\nwant the order of creation\n  %v", admitted, names)
	}
}
