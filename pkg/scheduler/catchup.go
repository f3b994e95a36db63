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

package scheduler

import (
	"context"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/util/mutation"
)

// catchUpRelist is how long a new leader waits for its cache to reach one
// list of the API before it says so and lists again (catchUp).
const catchUpRelist = 15 * time.Second

// catchUp waits until the unit cache holds every QueueUnit the API holds at
// the moment of a list, at that version or a later one. A replica that
// takes the lease over may have followed with a stale watch (paused, or cut
// off while kube-apiserver restarted); its caches said "synced" long ago.
// Deciding on that view would charge quota to units that finished, and miss
// admissions the last leader made. The list is read from the API, not the
// cache. A cache still behind after relist is logged, with how many units
// it lacks, and judged against a new list (a unit deleted since the last
// list is no longer waited for); the leader decides nothing until the cache
// has caught up or ctx ends.
func catchUp(ctx context.Context, reader client.Reader, cache *unitCache, relist time.Duration) error {
	if mutation.On(mutation.NoCatchUp) {
		return nil
	}
	for round := 1; ; round++ {
		lag, err := newCacheLag(ctx, reader, cache)
		if err != nil {
			return err
		}
		left := 0
		err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, relist, true, func(context.Context) (bool, error) {
			left = lag.behind()
			return left == 0, nil
		})
		if err == nil || ctx.Err() != nil {
			return ctx.Err()
		}
		klog.FromContext(ctx).Info("The unit cache has not caught up with the API; deciding nothing until it has, listing again",
			"unitsBehind", left, "waited", time.Duration(round)*relist)
	}
}

// cacheLag is what the unit cache has yet to see of one list of the API.
type cacheLag struct {
	cache *unitCache
	want  map[schedtypes.UnitKey]string // unit -> resourceVersion listed
}

func newCacheLag(ctx context.Context, reader client.Reader, cache *unitCache) (*cacheLag, error) {
	list := &schedv1alpha1.QueueUnitList{}
	if err := reader.List(ctx, list); err != nil {
		return nil, err
	}
	want := make(map[schedtypes.UnitKey]string, len(list.Items))
	for i := range list.Items {
		want[keyOf(&list.Items[i])] = list.Items[i].ResourceVersion
	}
	return &cacheLag{cache: cache, want: want}, nil
}

// behind counts the listed units the cache does not hold yet at their
// listed version or later; those it holds are not looked at again.
func (l *cacheLag) behind() int {
	n := 0
	for key, rv := range l.want {
		obj, _ := l.cache.object(key)
		if obj == nil || olderVersion(obj.ResourceVersion, rv) {
			n++
			continue
		}
		delete(l.want, key)
	}
	return n
}

// olderVersion reports whether resourceVersion a is older than b. They are
// compared as numbers, as etcd issues them; versions that are not numbers
// count as older unless equal.
func olderVersion(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return a != b
	}
	return x < y
}
