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

package app

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
)

// withPluginArgs returns a copy of cfg in which each plugin's arguments carry
// the settings that a flag or a top-level field gave before they became
// arguments: ElasticQuotaV2's oversellRate comes from --oversellrate and its
// reclaimProtectionPeriod from the top-level reclaimProtectionPeriod, when
// the arguments leave them unset. When both are given and disagree it is an
// error naming both; a flag or field at its default counts as not given, so
// the argument wins over it. cfg is left as it was.
func withPluginArgs(cfg *configv1.KoordQueueConfiguration, oversellRate float64) (*configv1.KoordQueueConfiguration, error) {
	out := cfg.DeepCopy()
	enabled := false
	for _, p := range out.Plugins {
		enabled = enabled || p.Name == configv1.PluginElasticQuotaV2
	}
	if !enabled {
		return out, nil
	}
	i := -1
	for j, pc := range out.PluginConfigs {
		if pc.Name == configv1.PluginElasticQuotaV2 {
			i = j
		}
	}
	if i < 0 {
		out.PluginConfigs = append(out.PluginConfigs, configv1.PluginConfig{Name: configv1.PluginElasticQuotaV2})
		i = len(out.PluginConfigs) - 1
	}
	args, err := configv1.DecodeElasticQuotaArgs(out.PluginConfigs[i].Args.Raw)
	if err != nil {
		return nil, err
	}
	if err := fillElasticQuotaArgs(args, out, oversellRate); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("pluginConfigs args of %s: %w", configv1.PluginElasticQuotaV2, err)
	}
	out.PluginConfigs[i].Args = runtime.RawExtension{Raw: raw}
	return out, nil
}

// fillElasticQuotaArgs sets the unset arguments from the flag and the
// top-level field, or refuses a disagreement.
func fillElasticQuotaArgs(args *configv1.ElasticQuotaArgs, cfg *configv1.KoordQueueConfiguration, oversellRate float64) error {
	switch {
	case args.OversellRate == nil:
		args.OversellRate = &oversellRate
	case oversellRate != configv1.DefaultOversellRate && oversellRate != *args.OversellRate:
		return fmt.Errorf("--oversellrate=%v and pluginConfigs args oversellRate=%v of %s disagree: set one of them",
			oversellRate, *args.OversellRate, configv1.PluginElasticQuotaV2)
	}
	if cfg.ReclaimProtectionPeriod == nil {
		return nil
	}
	top := *cfg.ReclaimProtectionPeriod
	switch {
	case args.ReclaimProtectionPeriod == nil:
		args.ReclaimProtectionPeriod = &top
	case top.Duration != configv1.DefaultReclaimProtectionPeriod && top.Duration != args.ReclaimProtectionPeriod.Duration:
		return fmt.Errorf("reclaimProtectionPeriod %s and pluginConfigs args reclaimProtectionPeriod %s of %s disagree: set one of them",
			top.Duration, args.ReclaimProtectionPeriod.Duration, configv1.PluginElasticQuotaV2)
	}
	return nil
}
