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
	"strconv"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// stream lists and watches one resource and hands every change to its
// handler in the watch's order, on the watch's goroutine, before it moves
// progress. So progress is a resourceVersion up to which every change has
// been handed over: the frontier of the checker. (An informer's
// LastSyncResourceVersion is not: its handlers run later, on other
// goroutines, so a frontier taken from it can pass events still queued.)
type stream struct {
	resource string
	list     func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watch    func(context.Context, metav1.ListOptions) (watch.Interface, error)
	// handle gets each change: obj is nil for a deletion.
	handle func(key string, obj runtime.Object, rv int64)
	// relisted tells that changes in (from, to] were not seen one by one:
	// the stream listed again at to after its watch expired.
	relisted func(from, to int64)

	known    map[string]int64 // key -> resourceVersion handed over
	progress atomic.Int64
	synced   chan struct{}
	relists  atomic.Int64
}

func newStream(resource string, list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	w func(context.Context, metav1.ListOptions) (watch.Interface, error)) *stream {
	return &stream{resource: resource, list: list, watch: w, known: map[string]int64{}, synced: make(chan struct{})}
}

// run lists, then watches from the list's version, again from where it
// stopped when a watch ends, and lists again when that version expired;
// until ctx ends.
func (s *stream) run(ctx context.Context) {
	const minBackoff, maxBackoff = 100 * time.Millisecond, 2 * time.Second
	backoff := minBackoff
	rv := int64(0)
	needList := true
	for ctx.Err() == nil {
		var err error
		if needList {
			rv, err = s.relist(ctx)
			if err == nil {
				needList = false
			}
		}
		if err == nil {
			var expired bool
			rv, expired, err = s.watchFrom(ctx, rv)
			needList = expired
			if err == nil || expired {
				backoff = minBackoff
				continue
			}
		}
		klog.V(2).InfoS("invariants: watch failed, retrying", "resource", s.resource, "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// relist lists the resource, hands over what changed since the last list
// or watch event (deletions at the list's version), and returns that
// version.
func (s *stream) relist(ctx context.Context) (int64, error) {
	obj, err := s.list(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", s.resource, err)
	}
	lm, err := meta.ListAccessor(obj)
	if err != nil {
		return 0, err
	}
	at, err := strconv.ParseInt(lm.GetResourceVersion(), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("list %s: resourceVersion %q: %w", s.resource, lm.GetResourceVersion(), err)
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		return 0, err
	}
	from := s.progress.Load()
	listed := make(map[string]bool, len(items))
	for _, item := range items {
		key, rv, err := keyOf(item)
		if err != nil {
			return 0, err
		}
		listed[key] = true
		if s.known[key] == rv {
			continue
		}
		s.known[key] = rv
		s.handle(key, item, rv)
	}
	for key := range s.known {
		if !listed[key] {
			delete(s.known, key)
			s.handle(key, nil, at)
		}
	}
	select {
	case <-s.synced:
		s.relists.Add(1)
	default:
	}
	if s.relisted != nil {
		s.relisted(from, at)
	}
	s.progress.Store(max(from, at))
	select {
	case <-s.synced:
	default:
		close(s.synced)
	}
	return at, nil
}

// watchFrom watches from rv until the watch ends; it returns the version
// reached and whether rv expired (a list is needed).
func (s *stream) watchFrom(ctx context.Context, rv int64) (int64, bool, error) {
	timeout := int64(300)
	w, err := s.watch(ctx, metav1.ListOptions{
		ResourceVersion: strconv.FormatInt(rv, 10), AllowWatchBookmarks: true, TimeoutSeconds: &timeout,
	})
	if err != nil {
		return rv, apierrors.IsResourceExpired(err) || apierrors.IsGone(err), fmt.Errorf("watch %s: %w", s.resource, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return rv, false, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, false, nil
			}
			switch ev.Type {
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				return rv, apierrors.IsResourceExpired(err) || apierrors.IsGone(err), fmt.Errorf("watch %s: %w", s.resource, err)
			case watch.Bookmark:
				m, err := meta.Accessor(ev.Object)
				if err != nil {
					return rv, false, err
				}
				if n, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64); err == nil && n > rv {
					rv = n
					s.progress.Store(rv)
				}
			case watch.Added, watch.Modified, watch.Deleted:
				key, n, err := keyOf(ev.Object)
				if err != nil {
					return rv, false, err
				}
				if ev.Type == watch.Deleted {
					delete(s.known, key)
					s.handle(key, nil, n)
				} else {
					s.known[key] = n
					s.handle(key, ev.Object, n)
				}
				rv = max(rv, n)
				s.progress.Store(rv)
			}
		}
	}
}

func keyOf(obj runtime.Object) (string, int64, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", 0, err
	}
	rv, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("%s/%s: resourceVersion %q: %w", m.GetNamespace(), m.GetName(), m.GetResourceVersion(), err)
	}
	return m.GetNamespace() + "/" + m.GetName(), rv, nil
}
