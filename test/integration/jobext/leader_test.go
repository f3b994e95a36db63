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
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
)

// TestControllersLeaderReleasesItsLease: with leader election on, the
// controllers' leader (its reconcilers write through the fenced client)
// creates a job's unit, and when it stops it releases its Lease, so the
// next replica takes over at once instead of after a lease duration.
func TestControllersLeaderReleasesItsLease(t *testing.T) {
	c := k8s(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "jobext-leader-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	const leaseName = "controllers-lease"
	stop := runManager(t, env.Config, ns.Name, []string{job.Name}, func(o *app.Options) {
		o.LeaderElect = true
		o.LeaderElectResourceNamespace, o.LeaderElectResourceName = ns.Name, leaseName
		o.LeaseDuration = time.Minute
	})
	t.Cleanup(stop)
	holder := func() string {
		l := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: leaseName}, l); err != nil {
			return ""
		}
		return ptr.Deref(l.Spec.HolderIdentity, "")
	}
	eventually(t, "the leader's lease", func(context.Context) (bool, error) { return holder() != "", nil })
	if h := holder(); !strings.Contains(h, "_") {
		t.Errorf("holder %q is not a replica identity (pod_uuid)", h)
	}
	if err := c.Create(ctx, batchJob(ns.Name, "led", true, quotaLabels())); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns.Name, "led", "the unit the leader creates", anyUnit)
	stop()
	if h := holder(); h != "" {
		t.Fatalf("lease still held by %q after the leader stopped: the next replica would wait a lease duration", h)
	}
}
