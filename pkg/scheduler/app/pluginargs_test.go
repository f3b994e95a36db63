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
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
)

// quotaArgs returns the ElasticQuotaV2 arguments cfg carries, decoded.
func quotaArgs(t *testing.T, cfg *configv1.KoordQueueConfiguration) *configv1.ElasticQuotaArgs {
	t.Helper()
	for _, pc := range cfg.PluginConfigs {
		if pc.Name == configv1.PluginElasticQuotaV2 {
			a, err := configv1.DecodeElasticQuotaArgs(pc.Args.Raw)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
	}
	t.Fatal("no ElasticQuotaV2 arguments")
	return nil
}

// config is the defaulted configuration, with the top-level protection
// period and ElasticQuotaV2 arguments given (none when empty).
func config(t *testing.T, protection time.Duration, args string) *configv1.KoordQueueConfiguration {
	t.Helper()
	cfg := &configv1.KoordQueueConfiguration{}
	if protection >= 0 {
		cfg.ReclaimProtectionPeriod = &metav1.Duration{Duration: protection}
	}
	if args != "" {
		cfg.PluginConfigs = []configv1.PluginConfig{{Name: configv1.PluginElasticQuotaV2, Args: runtime.RawExtension{Raw: []byte(args)}}}
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

const unset = -1

func TestWithPluginArgs(t *testing.T) {
	for _, tc := range []struct {
		name       string
		flag       float64
		protection time.Duration
		args       string
		oversell   float64
		period     time.Duration
		refused    []string
	}{
		{name: "nothing given", flag: 1, protection: unset, oversell: 1, period: 5 * time.Minute},
		{name: "the flag and the field", flag: 1.5, protection: time.Minute, oversell: 1.5, period: time.Minute},
		{name: "the arguments", flag: 1, protection: unset, args: `{"oversellRate": 2, "reclaimProtectionPeriod": "30s"}`,
			oversell: 2, period: 30 * time.Second},
		{name: "arguments next to defaults", flag: 1, protection: 5 * time.Minute, args: `{"oversellRate": 2, "reclaimProtectionPeriod": "30s"}`,
			oversell: 2, period: 30 * time.Second},
		{name: "both agree", flag: 2, protection: 30 * time.Second, args: `{"oversellRate": 2, "reclaimProtectionPeriod": "30s"}`,
			oversell: 2, period: 30 * time.Second},
		{name: "other arguments kept", flag: 3, protection: unset, args: `{"sharedQuotas": true}`, oversell: 3, period: 5 * time.Minute},
		{name: "oversell disagrees", flag: 1.5, protection: unset, args: `{"oversellRate": 2}`,
			refused: []string{"--oversellrate=1.5", "oversellRate=2", configv1.PluginElasticQuotaV2}},
		{name: "protection disagrees", flag: 1, protection: time.Minute, args: `{"reclaimProtectionPeriod": "2m"}`,
			refused: []string{"reclaimProtectionPeriod 1m0s", "reclaimProtectionPeriod 2m0s", configv1.PluginElasticQuotaV2}},
		{name: "arguments that do not decode", flag: 1, protection: unset, args: `{"oversellRat": 2}`,
			refused: []string{`unknown field "oversellRat"`, configv1.PluginElasticQuotaV2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(t, tc.protection, tc.args)
			before := cfg.DeepCopy()
			got, err := withPluginArgs(cfg, tc.flag)
			if len(tc.refused) > 0 {
				if err == nil {
					t.Fatal("accepted")
				}
				for _, want := range tc.refused {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a := quotaArgs(t, got)
			if a.OversellRate == nil || *a.OversellRate != tc.oversell {
				t.Errorf("oversellRate %v, want %v", a.OversellRate, tc.oversell)
			}
			if a.ReclaimProtectionPeriod == nil || a.ReclaimProtectionPeriod.Duration != tc.period {
				t.Errorf("reclaimProtectionPeriod %v, want %v", a.ReclaimProtectionPeriod, tc.period)
			}
			if tc.args == `{"sharedQuotas": true}` && !a.SharedQuotas {
				t.Error("sharedQuotas was lost")
			}
			if len(got.PluginConfigs) != 1 {
				t.Errorf("%d plugin configs, want 1", len(got.PluginConfigs))
			}
			if !reflect.DeepEqual(cfg, before) {
				t.Error("the configuration given was changed")
			}
		})
	}
}

func TestWithPluginArgsLeavesOtherPluginsAlone(t *testing.T) {
	cfg := config(t, unset, "")
	cfg.Plugins = []configv1.Plugin{{Name: configv1.PluginPriority}}
	got, err := withPluginArgs(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.PluginConfigs) != 0 {
		t.Errorf("arguments added for a plugin not enabled: %+v", got.PluginConfigs)
	}
}

// TestCompleteRefusesDisagreement runs the option handling as main does:
// a flag and an argument that disagree stop the start, naming both.
func TestCompleteRefusesDisagreement(t *testing.T) {
	path := t.TempDir() + "/config.yaml"
	body := "apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueConfiguration\npluginConfigs:\n- name: ElasticQuotaV2\n  args: {oversellRate: 1.2}\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	o.ConfigFile, o.OversellRate = path, 1.5
	err := o.Complete()
	if err == nil || !strings.Contains(err.Error(), "--oversellrate=1.5") || !strings.Contains(err.Error(), "oversellRate=1.2") {
		t.Fatalf("error %v; want one naming --oversellrate=1.5 and oversellRate=1.2", err)
	}
	o = NewOptions()
	o.ConfigFile = path
	if err := o.Complete(); err != nil {
		t.Errorf("the argument alone refused: %v", err)
	}
}

// TestCompleteRefusesOversellRateThatIsNoNumber: NaN passed the check "at
// least 1" (every comparison with NaN is false) and multiplied every max into
// nothing; infinity is no rate either. Large finite rates are accepted: the
// limits they make are held at the largest int64 (pkg/quota).
func TestCompleteRefusesOversellRateThatIsNoNumber(t *testing.T) {
	for _, rate := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0.5} {
		o := NewOptions()
		o.OversellRate = rate
		err := o.Complete()
		if err == nil || !strings.Contains(err.Error(), "--oversellrate") {
			t.Errorf("--oversellrate=%v: error %v, want one naming --oversellrate", rate, err)
		}
	}
	for _, rate := range []float64{1, 2, 3, 1e6} {
		o := NewOptions()
		o.OversellRate = rate
		if err := o.Complete(); err != nil {
			t.Errorf("--oversellrate=%v refused: %v", rate, err)
		}
	}
}
