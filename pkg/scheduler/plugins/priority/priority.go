// Package priority is the Priority plugin: it orders the units of a queue by
// priority (higher first), then creation time (older first), then name.
package priority

import (
	"k8s.io/apimachinery/pkg/runtime"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// Plugin sorts queues.
type Plugin struct{}

var _ framework.PriorityMajorSorter = (*Plugin)(nil)

// New builds the plugin; it takes no arguments.
func New(_ runtime.RawExtension, _ framework.Handle) (framework.Plugin, error) {
	return &Plugin{}, nil
}

// Name is Priority.
func (*Plugin) Name() string { return configv1.PluginPriority }

// Less is priority descending, creation ascending, namespace and name.
func (*Plugin) Less(a, b *queue.Unit) bool { return queue.DefaultLess(a, b) }

// PriorityMajor says Less orders by priority first.
func (*Plugin) PriorityMajor() bool { return true }
