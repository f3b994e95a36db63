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

// Package priority is the Priority plugin: it orders the units of a queue by
// priority (higher first), then creation time (older first), then name.
package priority

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
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

// Less is priority descending, creation ascending, namespace and name: the
// queues' default order (queue.DefaultLess), which the tests hold it to.
func (*Plugin) Less(a, b framework.SortUnit) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c < 0
	}
	return a.Name < b.Name
}

// PriorityMajor says Less orders by priority first.
func (*Plugin) PriorityMajor() bool { return true }
