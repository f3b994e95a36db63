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

// Invalidate makes every waiting unit worth trying again.
func (h *pluginHandle) Invalidate() {
	if h.queues != nil {
		h.queues.Invalidate()
	}
}

// Clock is the scheduler's clock.
func (h *pluginHandle) Clock() clock.Clock { return h.clock }
