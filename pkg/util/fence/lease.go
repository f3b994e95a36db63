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

package fence

import (
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
)

// RenewDeadline is how long a leader keeps trying to renew a lease of this
// duration, and how long after a renewal began it may write: two thirds of
// the lease, so writes stop a third of a lease before another replica may
// take over.
func RenewDeadline(lease time.Duration) time.Duration { return lease * 2 / 3 }

// RetryPeriod is how often leader election tries to renew or acquire.
func RetryPeriod(lease time.Duration) time.Duration { return lease * 2 / 15 }

// Identity names this replica in its lease: its pod's name ($POD_NAME, else
// the host name, which is the pod's name inside a pod), "_" and a new UUID,
// so a restarted replica is not taken for its former self. The API server's
// fence (the chart's policy koord-queue-leader-fence) reads the pod's name
// back from it.
func Identity() (string, error) {
	name := os.Getenv("POD_NAME")
	if name == "" {
		host, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("identity: %w", err)
		}
		name = host
	}
	return name + "_" + string(uuid.NewUUID()), nil
}

// LeaseOptions name the Lease and the replica.
type LeaseOptions struct {
	Namespace, Name string
	// Identity is the replica's (see Identity).
	Identity string
	// UserAgent of the lease's own client.
	UserAgent string
	// Duration of the lease.
	Duration time.Duration
}

// NewLeaseLock is the Lease lock leader election renews through, fenced:
// writes are allowed for RenewDeadline after each renewal began. Its client
// is built from cfg unfenced, so that it can acquire the lease.
func NewLeaseLock(cfg *rest.Config, o LeaseOptions, clk clock.PassiveClock) (*Lock, error) {
	lcfg := rest.CopyConfig(cfg)
	lcfg.UserAgent = o.UserAgent
	// One hung request must not outlive the renew deadline.
	lcfg.Timeout = max(RenewDeadline(o.Duration)/2, time.Second)
	core, err := corev1client.NewForConfig(lcfg)
	if err != nil {
		return nil, fmt.Errorf("leader election client: %w", err)
	}
	coord, err := coordinationv1client.NewForConfig(lcfg)
	if err != nil {
		return nil, fmt.Errorf("leader election client: %w", err)
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, o.Namespace, o.Name,
		core, coord, resourcelock.ResourceLockConfig{Identity: o.Identity})
	if err != nil {
		return nil, fmt.Errorf("leader election lock: %w", err)
	}
	return New(lock, RenewDeadline(o.Duration), clk), nil
}
