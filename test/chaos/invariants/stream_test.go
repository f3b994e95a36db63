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

package invariants

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
)

func podAt(name string, rv int64) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: fmt.Sprint(rv)}}
}

func podList(rv int64, pods ...*corev1.Pod) *corev1.PodList {
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: fmt.Sprint(rv)}}
	for _, p := range pods {
		l.Items = append(l.Items, *p)
	}
	return l
}

// fakeAPI serves scripted lists and hands out fake watches.
type fakeAPI struct {
	mu      sync.Mutex
	lists   []*corev1.PodList
	watches chan *watch.FakeWatcher
	from    []string // resourceVersion of each watch asked for
}

func (f *fakeAPI) list(context.Context, metav1.ListOptions) (runtime.Object, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.lists[0]
	if len(f.lists) > 1 {
		f.lists = f.lists[1:]
	}
	return l, nil
}

func (f *fakeAPI) watch(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	f.mu.Lock()
	f.from = append(f.from, o.ResourceVersion)
	f.mu.Unlock()
	w := watch.NewFakeWithChanSize(10, false)
	f.watches <- w
	return w, nil
}

type handed struct {
	key      string
	rv       int64
	deleted  bool
	progress int64 // the stream's progress when the change was handed over
}

// TestStreamHandsOverBeforeProgress: the frontier a stream gives never
// passes a change its handler has not had; a watch that expired is
// followed by a list whose deletions come at the list's version and which
// is told as a relisted window; bookmarks move the frontier.
func TestStreamHandsOverBeforeProgress(t *testing.T) {
	api := &fakeAPI{
		lists:   []*corev1.PodList{podList(10, podAt("a", 5), podAt("b", 7)), podList(40, podAt("a", 12), podAt("c", 33))},
		watches: make(chan *watch.FakeWatcher, 4),
	}
	s := newStream("pods", api.list, api.watch)
	var mu sync.Mutex
	var got []handed
	var windows [][2]int64
	s.handle = func(key string, obj runtime.Object, rv int64) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, handed{key: key, rv: rv, deleted: obj == nil, progress: s.progress.Load()})
	}
	s.relisted = func(from, to int64) {
		mu.Lock()
		defer mu.Unlock()
		windows = append(windows, [2]int64{from, to})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.run(ctx)

	next := func() *watch.FakeWatcher {
		select {
		case w := <-api.watches:
			return w
		case <-time.After(10 * time.Second):
			t.Fatal("no watch was started")
			return nil
		}
	}
	waitProgress := func(want int64) {
		err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			return s.progress.Load() == want, nil
		})
		if err != nil {
			t.Fatalf("progress %d, want %d: %v", s.progress.Load(), want, err)
		}
	}

	w := next()
	<-s.synced
	w.Modify(podAt("a", 12))
	w.Add(podAt("c", 15))
	w.Action(watch.Bookmark, podAt("", 20))
	waitProgress(20)
	gone := apierrors.NewResourceExpired("too old resource version: 20 (30)")
	w.Error(&gone.ErrStatus)

	w = next()
	waitProgress(40)
	w.Delete(podAt("c", 44))
	waitProgress(44)

	mu.Lock()
	defer mu.Unlock()
	want := []handed{
		{key: "ns/a", rv: 5}, {key: "ns/b", rv: 7}, // the first list
		{key: "ns/a", rv: 12, progress: 10}, {key: "ns/c", rv: 15, progress: 12},
		// the list after expiry: a is unchanged (not handed over again), c
		// changed at 33 and b is gone, at the list's version.
		{key: "ns/c", rv: 33, progress: 20}, {key: "ns/b", rv: 40, deleted: true, progress: 20},
		{key: "ns/c", rv: 44, deleted: true, progress: 40},
	}
	if len(got) != len(want) {
		t.Fatalf("handed over %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("change %d: %+v, want %+v", i, got[i], want[i])
		}
		if got[i].progress >= got[i].rv {
			t.Errorf("change %d handed over at rv %d after progress had reached %d", i, got[i].rv, got[i].progress)
		}
	}
	if len(windows) != 2 || windows[0] != [2]int64{0, 10} || windows[1] != [2]int64{20, 40} {
		t.Errorf("relisted windows %v, want [[0 10] [20 40]]", windows)
	}
	if s.relists.Load() != 1 {
		t.Errorf("relists %d, want 1", s.relists.Load())
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.from) != 2 || api.from[0] != "10" || api.from[1] != "40" {
		t.Errorf("watches from %v, want [10 40]", api.from)
	}
}
