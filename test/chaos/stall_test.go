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

package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

// The stall fault makes what no other fault does: a replica that wins
// koord-queue's Lease while its QueueUnit watch lags behind the API.
const (
	// unitsResource is the resource whose watches the fault stalls.
	unitsResource = "queueunits"
	// stallHold is how long the new leader's watch stays stalled after it
	// took the Lease: the fault's length, ample for a leader that does not
	// catch up to decide on its stale cache.
	stallHold = 5 * time.Second
)

// stallLeaves take the fault's own jobs, one each, of priority 3: leaves
// where such a job preempts nothing and waits for no admission check.
var stallLeaves = []string{"a2-x", "a2-y", "a3-x", "b2-x", "b2-y", "b3-x"}

// stallFollowerKillLeader makes a new leader whose unit cache is stale:
//  1. the leader's unit watch stalls and the fault creates its jobs: their
//     units wait, seen by the follower (its debug API) and not the leader;
//  2. the follower's unit watch stalls and the leader's resumes: the
//     leader admits them, which the follower does not see;
//  3. the leader is killed, the follower takes the Lease with a cache in
//     which those units still wait, and its watch stays stalled for
//     stallHold after.
//
// A correct new leader decides nothing until its cache holds the versions
// of a list from the API, so it waits for the stall's end; one that does
// not decides on the stale cache (decided-on-stale-cache).
func (r *run) stallFollowerKillLeader(ctx context.Context, maker *jobMaker) error {
	leader, err := r.leader(ctx, cluster.QueueBinary, "")
	if err != nil {
		return err
	}
	var follower string
	for _, name := range r.c.Replicas(cluster.QueueBinary) {
		if name != leader {
			follower = name
		}
	}
	r.checker.RecordFault("stall follower's unit watch, kill leader", follower+", "+leader)
	stalled := map[string]bool{}
	stall := func(name string, on bool) error {
		stalled[name] = on
		if on {
			return r.c.StallWatch(name, unitsResource)
		}
		return r.c.ResumeWatch(name, unitsResource)
	}
	defer func() {
		for name, on := range stalled {
			if on {
				_ = r.c.ResumeWatch(name, unitsResource)
			}
		}
	}()

	if err := stall(leader, true); err != nil {
		return err
	}
	jobs := map[string]bool{}
	for _, leaf := range stallLeaves {
		j := maker.named(leaf, 1, 3, 2*time.Second)
		if err := createJob(ctx, r.c.Client, j); err != nil {
			return err
		}
		r.created.Add(1)
		jobs[j.Name] = true
	}
	units, err := r.waitFollowerSees(ctx, follower, jobs)
	if err != nil {
		return err
	}

	if err := stall(follower, true); err != nil {
		return err
	}
	if err := stall(leader, false); err != nil {
		return err
	}
	admitted, err := r.waitAdmitted(ctx, units, (len(units)+1)/2)
	if err != nil {
		return err
	}

	if err := r.c.Kill(leader); err != nil {
		return err
	}
	next, err := r.leader(ctx, cluster.QueueBinary, leader)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(stallHold):
	}
	if err := stall(follower, false); err != nil {
		return err
	}
	r.t.Logf("%s admitted %d of the %d units %s saw waiting, behind its stalled watch; %s killed, %s leads, its watch resumed %s after",
		leader, admitted, len(units), follower, leader, next, stallHold)
	return r.c.Restart(ctx, leader)
}

// waitFollowerSees waits until the units of jobs wait in the queues of
// replica's cache, as its debug API shows them, and returns their keys.
func (r *run) waitFollowerSees(ctx context.Context, replica string, jobs map[string]bool) ([]client.ObjectKey, error) {
	base, ok := r.c.DebugURL(replica)
	if !ok {
		return nil, fmt.Errorf("%s serves no debug API", replica)
	}
	var units []client.ObjectKey
	var seen int
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &schedv1alpha1.QueueUnitList{}
		if err := r.c.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return false, nil
		}
		units = units[:0]
		for i := range list.Items {
			if ref := list.Items[i].Spec.ConsumerRef; ref != nil && jobs[ref.Name] {
				units = append(units, client.ObjectKeyFromObject(&list.Items[i]))
			}
		}
		if len(units) < len(jobs) {
			return false, nil
		}
		pending, err := debugPending(ctx, base)
		if err != nil {
			return false, nil
		}
		seen = 0
		for _, u := range units {
			if pending[u] {
				seen++
			}
		}
		return seen == len(units), nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s saw %d of the units of %d jobs waiting (%d units found): %w", replica, seen, len(jobs), len(units), err)
	}
	return units, nil
}

// waitAdmitted waits until at least n of units have been admitted (their
// lastAllocateTime set), and returns how many were.
func (r *run) waitAdmitted(ctx context.Context, units []client.ObjectKey, n int) (int, error) {
	admitted := 0
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		admitted = 0
		for _, key := range units {
			u := &schedv1alpha1.QueueUnit{}
			if err := r.c.Client.Get(ctx, key, u); err != nil {
				return false, nil
			}
			if u.Status.LastAllocateTime != nil {
				admitted++
			}
		}
		return admitted >= n, nil
	})
	if err != nil {
		return admitted, fmt.Errorf("%d of %d units admitted, waited for %d: %w", admitted, len(units), n, err)
	}
	return admitted, nil
}

// debugPending reads the units waiting in every queue of the replica whose
// debug API is at base.
func debugPending(ctx context.Context, base string) (map[client.ObjectKey]bool, error) {
	var all struct {
		Queues []struct {
			Name         string `json:"name"`
			PendingCount int    `json:"pendingCount"`
		} `json:"queues"`
	}
	if err := getJSON(ctx, base+"/debug/queues", &all); err != nil {
		return nil, err
	}
	pending := map[client.ObjectKey]bool{}
	for _, q := range all.Queues {
		if q.PendingCount == 0 {
			continue
		}
		var one struct {
			Pending []struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"pending"`
		}
		if err := getJSON(ctx, base+"/debug/queues/"+url.PathEscape(q.Name), &one); err != nil {
			return nil, err
		}
		for _, u := range one.Pending {
			pending[client.ObjectKey{Namespace: u.Namespace, Name: u.Name}] = true
		}
	}
	return pending, nil
}

// getJSON decodes the JSON body at addr into v.
func getJSON(ctx context.Context, addr string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, addr, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", addr, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
