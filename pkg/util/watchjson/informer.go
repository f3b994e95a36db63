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

package watchjson

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Watcher watches one resource of kind in every namespace, decoding its
// events here.
type Watcher struct {
	client   *rest.RESTClient
	resource string
}

// NewWatcher returns a watcher of resource, the plural name of kind, served
// at cfg; httpClient may be nil (one is made for cfg). scheme knows kind
// and what else a watch may carry (metav1.Status).
func NewWatcher(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme, kind Kind, resource string) (*Watcher, error) {
	c, err := newCodecs(scheme, kind)
	if err != nil {
		return nil, err
	}
	gv := kind.GroupVersionKind.GroupVersion()
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion, cfg.APIPath = &gv, "/apis"
	cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	cfg.NegotiatedSerializer = c
	if httpClient == nil {
		if httpClient, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, fmt.Errorf("watch %s: %w", resource, err)
		}
	}
	client, err := rest.RESTClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", resource, err)
	}
	return &Watcher{client: client, resource: resource}, nil
}

// Watch starts a watch with opts (Watch is set).
func (w *Watcher) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return w.client.Get().Resource(w.resource).VersionedParams(&opts, metav1.ParameterCodec).Watch(ctx)
}

// NewInformer is a constructor of informers for controller-runtime's cache
// (cache.Options.NewInformer): the informer of example's type lists as
// given and watches with w, asking for bookmarks; any other is client-go's.
//
// The watch is of every namespace and leaves out what the given list-watch
// would have added to its options (controller-runtime's cache adds a label
// or field selector of the type): so the type must be cached in every
// namespace, with no selector.
func NewInformer(w *Watcher, example runtime.Object) func(cache.ListerWatcher, runtime.Object, time.Duration, cache.Indexers) cache.SharedIndexInformer {
	typ := reflect.TypeOf(example)
	return func(lw cache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers cache.Indexers) cache.SharedIndexInformer {
		if reflect.TypeOf(obj) == typ {
			list := cache.ToListerWatcherWithContext(lw)
			lw = &cache.ListWatch{
				ListWithContextFunc: list.ListWithContext,
				WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
					opts.AllowWatchBookmarks = true
					return w.Watch(ctx, opts)
				},
			}
		}
		return cache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
}
