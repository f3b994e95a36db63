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
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadKoordQueueConfiguration(t *testing.T) {
	// The guide's pluginConfigs value, as the chart renders it.
	c, err := LoadKoordQueueConfiguration(write(t, `apiVersion: scheduling.k8s.io/v1
kind: KoordQueueConfiguration
plugins:
  - name: Priority
  - name: ElasticQuotaV2
reclaimProtectionPeriod: 90s
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.ReclaimProtectionPeriod.Duration != 90*time.Second || !*c.EnablePreemption || c.AdmissionCheckTimeout.Duration != DefaultAdmissionCheckTimeout {
		t.Errorf("config = %+v", c)
	}
	def, err := LoadKoordQueueConfiguration("")
	if err != nil || len(def.Plugins) != 2 || def.ReclaimProtectionPeriod.Duration != DefaultReclaimProtectionPeriod {
		t.Errorf("defaults = %+v, %v", def, err)
	}
	for body, want := range map[string]string{
		"apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueConfiguration\nplugins: [{name: Nope}]\n":         `plugins[0].name: Unsupported value: "Nope"`,
		"apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueConfiguration\nplugins: [{name: Priority}]\n":     "ElasticQuotaV2 must be enabled",
		"apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueConfiguration\nreclaimProtectionPeriod: 5 mins\n": `duration "5 mins"`,
		"apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueConfiguration\nunknownField: 1\n":                 `unknown field "unknownField"`,
		"apiVersion: v9\nkind: KoordQueueConfiguration\n":                                                    `apiVersion: Unsupported value: "v9"`,
		"apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueConfiguration\nreclaimProtectionPeriod: -1s\n":    "reclaimProtectionPeriod: Invalid value",
	} {
		if _, err := LoadKoordQueueConfiguration(write(t, body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", body, err, want)
		}
	}
}

func TestControllersConfiguration(t *testing.T) {
	c, err := LoadKoordQueueControllersConfiguration(write(t, `apiVersion: scheduling.k8s.io/v1
kind: KoordQueueControllersConfiguration
default:
  backoffTimeout: 1m
extensions:
  job:
    runningTimeout: 5m
`), []string{"job", "tfjob"})
	if err != nil {
		t.Fatal(err)
	}
	if r, b := c.TimeoutsFor("job"); r != 5*time.Minute || b != time.Minute {
		t.Errorf("job timeouts %v %v", r, b)
	}
	if r, b := c.TimeoutsFor("tfjob"); r != 0 || b != time.Minute {
		t.Errorf("tfjob timeouts %v %v", r, b)
	}
	if _, err := LoadKoordQueueControllersConfiguration(write(t, "apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueControllersConfiguration\nextensions: {mpijob: {}}\n"),
		[]string{"job"}); err == nil || !strings.Contains(err.Error(), `extensions[mpijob]`) {
		t.Errorf("unknown extension: %v", err)
	}
}

func TestDecodeElasticQuotaArgs(t *testing.T) {
	if a, err := DecodeElasticQuotaArgs(nil); err != nil || a.SharedQuotas {
		t.Errorf("empty args = %+v, %v; want the defaults", a, err)
	}
	if a, err := DecodeElasticQuotaArgs([]byte(`{"sharedQuotas":true}`)); err != nil || !a.SharedQuotas {
		t.Errorf("sharedQuotas: true = %+v, %v", a, err)
	}
	if _, err := DecodeElasticQuotaArgs([]byte(`{"sharedQuota":true}`)); err == nil || !strings.Contains(err.Error(), "sharedQuota") {
		t.Errorf("a misspelt field is accepted or not named: %v", err)
	}
}

func TestElasticQuotaArgsOversellAndProtection(t *testing.T) {
	a, err := DecodeElasticQuotaArgs([]byte("oversellRate: 1.5\nreclaimProtectionPeriod: 90s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a.OversellRate == nil || *a.OversellRate != 1.5 || a.ReclaimProtectionPeriod == nil || a.ReclaimProtectionPeriod.Duration != 90*time.Second {
		t.Errorf("decoded %+v; want oversellRate 1.5 and reclaimProtectionPeriod 90s", a)
	}
	unset, err := DecodeElasticQuotaArgs([]byte(`{"sharedQuotas":true}`))
	if err != nil || unset.OversellRate != nil || unset.ReclaimProtectionPeriod != nil {
		t.Fatalf("decoding filled what was not given: %+v, %v", unset, err)
	}
	unset.SetDefaults()
	if *unset.OversellRate != 1 || unset.ReclaimProtectionPeriod.Duration != 5*time.Minute {
		t.Errorf("defaults %v, %v; want 1 and 5m", *unset.OversellRate, unset.ReclaimProtectionPeriod.Duration)
	}
	for raw, field := range map[string]string{
		`{"oversellRate": 0.99}`:              "oversellRate",
		`{"oversellRate": -2}`:                "oversellRate",
		`{"reclaimProtectionPeriod": "-1s"}`:  "reclaimProtectionPeriod",
		`{"reclaimProtectionPeriod": "soon"}`: "reclaimProtectionPeriod",
	} {
		if _, err := DecodeElasticQuotaArgs([]byte(raw)); err == nil || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), PluginElasticQuotaV2) {
			t.Errorf("%s: error %v; want one naming %s and the plugin", raw, err, field)
		}
	}
	if err := (&ElasticQuotaArgs{OversellRate: ptr.To(math.Inf(1))}).Validate(); err == nil {
		t.Error("an infinite oversellRate is valid")
	}
	if err := (&ElasticQuotaArgs{OversellRate: ptr.To(1.0), ReclaimProtectionPeriod: &metav1.Duration{}}).Validate(); err != nil {
		t.Errorf("oversellRate 1 and no protection are valid: %v", err)
	}
}
