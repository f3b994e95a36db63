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
	"fmt"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// KnownPlugins lists the scheduler plugins this build has.
var KnownPlugins = []string{PluginPriority, PluginElasticQuotaV2}

// Validate reports every problem of a defaulted configuration, each naming its
// field.
func (c *KoordQueueConfiguration) Validate() error {
	var errs field.ErrorList
	if c.APIVersion != APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), c.APIVersion, []string{APIVersion}))
	}
	if c.Kind != KindKoordQueueConfiguration {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), c.Kind, []string{KindKoordQueueConfiguration}))
	}
	seen := map[string]bool{}
	for i, p := range c.Plugins {
		path := field.NewPath("plugins").Index(i).Child("name")
		switch {
		case !slices.Contains(KnownPlugins, p.Name):
			errs = append(errs, field.NotSupported(path, p.Name, KnownPlugins))
		case seen[p.Name]:
			errs = append(errs, field.Duplicate(path, p.Name))
		}
		seen[p.Name] = true
	}
	if !seen[PluginElasticQuotaV2] {
		errs = append(errs, field.Required(field.NewPath("plugins"), "ElasticQuotaV2 must be enabled: it is the only quota mode"))
	}
	for i, pc := range c.PluginConfigs {
		if !seen[pc.Name] {
			errs = append(errs, field.Invalid(field.NewPath("pluginConfigs").Index(i).Child("name"), pc.Name, "names no enabled plugin"))
		}
	}
	durations := map[string]float64{
		"reclaimProtectionPeriod": c.ReclaimProtectionPeriod.Seconds(),
		"admissionCheckTimeout":   c.AdmissionCheckTimeout.Seconds(),
		"evictionTimeout":         c.EvictionTimeout.Seconds(),
	}
	for _, name := range []string{"reclaimProtectionPeriod", "admissionCheckTimeout", "evictionTimeout"} {
		if durations[name] < 0 {
			errs = append(errs, field.Invalid(field.NewPath(name), durations[name], "must not be negative"))
		}
	}
	if c.QueueStatusUpdatePeriod.Duration <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("queueStatusUpdatePeriod"), c.QueueStatusUpdatePeriod.String(), "must be positive"))
	}
	return errs.ToAggregate()
}

// Validate reports every problem of a defaulted controllers configuration.
func (c *KoordQueueControllersConfiguration) Validate(knownExtensions []string) error {
	var errs field.ErrorList
	if c.APIVersion != APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), c.APIVersion, []string{APIVersion}))
	}
	if c.Kind != KindKoordQueueControllersConfiguration {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), c.Kind, []string{KindKoordQueueControllersConfiguration}))
	}
	check := func(path *field.Path, t ExtensionTimeouts) {
		if t.RunningTimeout != nil && t.RunningTimeout.Duration < 0 {
			errs = append(errs, field.Invalid(path.Child("runningTimeout"), t.RunningTimeout.String(), "must not be negative"))
		}
		if t.BackoffTimeout != nil && t.BackoffTimeout.Duration < 0 {
			errs = append(errs, field.Invalid(path.Child("backoffTimeout"), t.BackoffTimeout.String(), "must not be negative"))
		}
	}
	check(field.NewPath("default"), c.Default)
	for name, t := range c.Extensions {
		path := field.NewPath("extensions").Key(name)
		if !slices.Contains(knownExtensions, name) {
			errs = append(errs, field.NotSupported(path, name, knownExtensions))
		}
		check(path, t)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid %s: %w", KindKoordQueueControllersConfiguration, errs.ToAggregate())
}

// Validate reports every problem of the ElasticQuotaV2 plugin's arguments,
// each naming its field; unset fields are not checked.
func (a *ElasticQuotaArgs) Validate() error {
	var errs field.ErrorList
	if r := a.OversellRate; r != nil && (math.IsNaN(*r) || math.IsInf(*r, 0) || *r < 1) {
		errs = append(errs, field.Invalid(field.NewPath("oversellRate"), *r, "must be a number of at least 1 (1: no overselling)"))
	}
	if p := a.ReclaimProtectionPeriod; p != nil && p.Duration < 0 {
		errs = append(errs, field.Invalid(field.NewPath("reclaimProtectionPeriod"), p.String(), "must not be negative"))
	}
	return errs.ToAggregate()
}
