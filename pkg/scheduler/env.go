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
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// env is what every part of the scheduler shares and none owns: the API
// client, the event recorder, the clock, the options, the plugins and the
// pending queues. It is set up by New and read-only after that, except
// leading, which Start sets once.
type env struct {
	client   client.Client
	reader   client.Reader
	recorder record.EventRecorder
	clock    Clock
	opts     Options
	fw       *framework.Framework
	queues   *queue.Manager
	// leading is true once this replica leads and its caches are complete:
	// only the leader writes statuses and records events.
	leading atomic.Bool
}

// now is the clock's time as the API stores it.
func (e *env) now() metav1.Time { return metav1.NewTime(e.clock.Now()) }

// leader reports whether this replica may write.
func (e *env) leader() bool { return e.leading.Load() }
