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
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// pluginHandle is what the plugins get of the scheduler (framework.Handle).
type pluginHandle struct {
	*env
	informers cache.Cache
}

var _ framework.Handle = (*pluginHandle)(nil)

// Client returns the cached client.
func (h *pluginHandle) Client() client.Client { return h.client }

// Cache returns the informer cache.
func (h *pluginHandle) Cache() cache.Cache { return h.informers }

// Recorder returns the event recorder.
func (h *pluginHandle) Recorder() record.EventRecorder { return h.recorder }

// Freed makes the waiting units of a cohort worth trying again.
func (h *pluginHandle) Freed(cohort schedtypes.CohortName) {
	if h.queues != nil {
		h.queues.Freed(cohort)
	}
}

// FreedRoom makes the waiting units of a cohort worth trying again, those
// refused for want of room once it has given back what they lacked.
func (h *pluginHandle) FreedRoom(cohort schedtypes.CohortName, amount schedtypes.Resources) {
	if h.queues != nil {
		h.queues.FreedRoom(cohort, amount)
	}
}

// HoldingsChanged tells the queues what units of a quota hold changed.
func (h *pluginHandle) HoldingsChanged(quota schedtypes.QuotaName, priority int32, released bool) {
	if h.queues != nil {
		h.queues.HoldingsChanged(quota, priority, released)
	}
}

// Invalidate makes every waiting unit worth trying again.
func (h *pluginHandle) Invalidate() {
	if h.queues != nil {
		h.queues.Invalidate()
	}
}

// Clock is the scheduler's clock.
func (h *pluginHandle) Clock() clock.Clock { return h.clock }
