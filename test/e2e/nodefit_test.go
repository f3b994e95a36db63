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

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// TestJobLargerThanEveryNodeWaits: the local cluster's kwok nodes have 32 CPU
// each. A job whose pod asks for 64 CPU fits its quota but no node: its unit
// is not admitted, it says so, and its job stays suspended.
func TestJobLargerThanEveryNodeWaits(t *testing.T) {
	elasticQuota(t, "e2e-nodefit", "200", "400Gi", nil)
	j := suspendedJob("e2e-nodefit-huge", "e2e-nodefit", "64", 2*time.Second)
	create(t, j)
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &batchv1.Job{ObjectMeta: j.ObjectMeta})
	})
	want := "can never fit on any node: largest node has 32 cpu, a pod of pod set"
	eventually(t, "the unit says no node fits its pod", func(ctx context.Context) (bool, error) {
		u, err := queueUnit(ctx, "default", j.Name)
		if err != nil {
			return false, err
		}
		if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued && u.Status.Phase != "" {
			return false, fmt.Errorf("unit is %s: admitted a job no node can run", u.Status.Phase)
		}
		return strings.Contains(u.Status.Message, want), nil
	})
	if suspended, err := jobSuspended(ctx(t), "default", j.Name); err != nil || !suspended {
		t.Errorf("job not suspended (%v)", err)
	}
	// The alert's metric, scraped from the suite's one replica, counts it.
	sample := `koord_queue_pending_units_by_reason{queue="e2e-nodefit",quota="e2e-nodefit",reason="NoNodeFits"} 1`
	eventually(t, "the unit counted under NoNodeFits", func(ctx context.Context) (bool, error) {
		body, err := scrape(ctx, env.Options().Ports.QueueMetrics)
		return slices.Contains(strings.Split(body, "\n"), sample), err
	})
}

// scrape reads the metrics of the koord-queue replica serving on port.
func scrape(ctx context.Context, port int) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", port), nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return string(body), err
}
