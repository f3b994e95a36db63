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
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// A new leader decides nothing until its cache holds what the API holds:
// a unit the cache knows at an older version, or not at all, holds it back.
func TestCatchUpWaitsForTheCache(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).Build()
	for _, name := range []string{"a", "b"} {
		u := &schedv1alpha1.QueueUnit{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		if err := c.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	fresh := map[string]*schedv1alpha1.QueueUnit{}
	for _, name := range []string{"a", "b"} {
		u := &schedv1alpha1.QueueUnit{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: name}, u); err != nil {
			t.Fatal(err)
		}
		fresh[name] = u
	}
	cache, _ := newTestCache()
	// The cache saw a before its last change, and b not at all.
	stale := fresh["a"].DeepCopy()
	stale.ResourceVersion = "0"
	cache.observe(keyOf(stale), stale, "q", "team-a")

	lag, err := newCacheLag(ctx, c, cache)
	if err != nil {
		t.Fatal(err)
	}
	if n := lag.behind(); n != 2 {
		t.Fatalf("behind = %d with a stale and a missing unit, want 2", n)
	}
	cache.observe(keyOf(fresh["a"]), fresh["a"], "q", "team-a")
	if n := lag.behind(); n != 1 {
		t.Fatalf("behind = %d with b missing, want 1", n)
	}
	cache.observe(keyOf(fresh["b"]), fresh["b"], "q", "team-a")
	if n := lag.behind(); n != 0 {
		t.Fatalf("behind = %d with both seen, want 0", n)
	}
	// Caught up, catchUp returns at its first look.
	if err := catchUp(ctx, c, cache, time.Minute); err != nil {
		t.Fatal(err)
	}
}

// A cache that does not catch up holds the leader back, however long: it
// is judged against a new list each period, so a unit deleted since the
// last list no longer holds it, and a cache that reaches the list lets it
// go.
func TestCatchUpWaitsUntilTheCacheHasCaughtUp(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(
		&schedv1alpha1.QueueUnit{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}},
		&schedv1alpha1.QueueUnit{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gone"}},
	).Build()
	lists := &countingReader{Reader: c}
	cache, _ := newTestCache()
	done := make(chan error, 1)
	go func() { done <- catchUp(ctx, lists, cache, 10*time.Millisecond) }()
	waitLists := func(n int64) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			return lists.n.Load() >= n, nil
		}); err != nil {
			t.Fatalf("catchUp listed %d times, want at least %d", lists.n.Load(), n)
		}
	}
	notDone := func(why string) {
		t.Helper()
		select {
		case err := <-done:
			t.Fatalf("catchUp returned %v %s", err, why)
		default:
		}
	}
	waitLists(3)
	notDone("with neither unit in the cache")
	a := &schedv1alpha1.QueueUnit{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, a); err != nil {
		t.Fatal(err)
	}
	cache.observe(keyOf(a), a, "q", "team-a")
	seen := lists.n.Load()
	waitLists(seen + 2)
	notDone("with unit gone listed and not in the cache")
	// Deleted: the next list no longer has it.
	if err := c.Delete(ctx, &schedv1alpha1.QueueUnit{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gone"}}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("catchUp = %v once the cache holds what the API holds", err)
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := catchUp(canceled, c, cache, time.Minute); err == nil {
		t.Fatal("catchUp with a canceled context returned nil")
	}
}

// countingReader counts the lists read through it.
type countingReader struct {
	client.Reader
	n atomic.Int64
}

func (r *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.n.Add(1)
	return r.Reader.List(ctx, list, opts...)
}

func TestOlderVersion(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"9", "10", true}, {"10", "9", false}, {"10", "10", false}, {"x", "x", false}, {"x", "10", true},
	} {
		if got := olderVersion(tc.a, tc.b); got != tc.want {
			t.Errorf("olderVersion(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
