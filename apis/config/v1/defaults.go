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

package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Plugin names known to the scheduler.
const (
	PluginPriority       = "Priority"
	PluginElasticQuotaV2 = "ElasticQuotaV2"
)

// Defaults of the scheduler configuration.
const (
	DefaultOversellRate            = 1.0
	DefaultReclaimProtectionPeriod = 5 * time.Minute
	DefaultAdmissionCheckTimeout   = 10 * time.Minute
	DefaultEvictionTimeout         = 10 * time.Minute
	DefaultQueueStatusUpdatePeriod = 10 * time.Second
	DefaultRunningTimeout          = 0
	DefaultBackoffTimeout          = 30 * time.Second
)

// SetDefaults fills what the file left out.
func (c *KoordQueueConfiguration) SetDefaults() {
	if c.APIVersion == "" {
		c.APIVersion = APIVersion
	}
	if c.Kind == "" {
		c.Kind = KindKoordQueueConfiguration
	}
	if len(c.Plugins) == 0 {
		c.Plugins = []Plugin{{Name: PluginPriority}, {Name: PluginElasticQuotaV2}}
	}
	if c.ReclaimProtectionPeriod == nil {
		c.ReclaimProtectionPeriod = &metav1.Duration{Duration: DefaultReclaimProtectionPeriod}
	}
	if c.EnablePreemption == nil {
		c.EnablePreemption = ptr.To(true)
	}
	if c.EnableReclaim == nil {
		c.EnableReclaim = ptr.To(true)
	}
	if c.AdmissionCheckTimeout == nil {
		c.AdmissionCheckTimeout = &metav1.Duration{Duration: DefaultAdmissionCheckTimeout}
	}
	if c.EvictionTimeout == nil {
		c.EvictionTimeout = &metav1.Duration{Duration: DefaultEvictionTimeout}
	}
	if c.QueueStatusUpdatePeriod == nil {
		c.QueueStatusUpdatePeriod = &metav1.Duration{Duration: DefaultQueueStatusUpdatePeriod}
	}
}

// SetDefaults fills what the arguments left out with the plugin's own
// defaults. The scheduler first fills them from its flags and top-level
// fields (see the scheduler app), so these apply only where nothing did.
func (a *ElasticQuotaArgs) SetDefaults() {
	if a.OversellRate == nil {
		a.OversellRate = ptr.To(DefaultOversellRate)
	}
	if a.ReclaimProtectionPeriod == nil {
		a.ReclaimProtectionPeriod = &metav1.Duration{Duration: DefaultReclaimProtectionPeriod}
	}
}

// SetDefaults fills what the file left out.
func (c *KoordQueueControllersConfiguration) SetDefaults() {
	if c.APIVersion == "" {
		c.APIVersion = APIVersion
	}
	if c.Kind == "" {
		c.Kind = KindKoordQueueControllersConfiguration
	}
	if c.Default.RunningTimeout == nil {
		c.Default.RunningTimeout = &metav1.Duration{Duration: DefaultRunningTimeout}
	}
	if c.Default.BackoffTimeout == nil {
		c.Default.BackoffTimeout = &metav1.Duration{Duration: DefaultBackoffTimeout}
	}
}

// TimeoutsFor returns the timeouts of one extension, falling back to Default
// field by field.
func (c *KoordQueueControllersConfiguration) TimeoutsFor(extension string) (running, backoff time.Duration) {
	t := c.Extensions[extension]
	running, backoff = c.Default.RunningTimeout.Duration, c.Default.BackoffTimeout.Duration
	if t.RunningTimeout != nil {
		running = t.RunningTimeout.Duration
	}
	if t.BackoffTimeout != nil {
		backoff = t.BackoffTimeout.Duration
	}
	return running, backoff
}
