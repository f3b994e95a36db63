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

package badinput

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/utils/clock"

	jobextapp "github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	schedapp "github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
)

// configCase is a bad command line of one binary: args are its flags, with
// "@config" replaced by a file holding file. The binary must refuse to
// start with an error that says want.
type configCase struct {
	name string
	args []string
	file string
	want string
}

const schedHeader = "apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueConfiguration\n"

// schedulerCases are bad flags and configuration files of koord-queue.
var schedulerCases = []configCase{
	{"YAML that does not parse", []string{"--config=@config"}, schedHeader + "plugins: [name: Priority\n", "parse config"},
	{"misspelt field", []string{"--config=@config"}, schedHeader + "plugin: [{name: Priority}]\n", `unknown field "plugin"`},
	{"wrong apiVersion", []string{"--config=@config"}, "apiVersion: v1\nkind: KoordQueueConfiguration\n", "apiVersion"},
	{"wrong kind", []string{"--config=@config"}, "apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueControllersConfiguration\n", "kind"},
	{"unknown plugin", []string{"--config=@config"}, schedHeader + "plugins: [{name: Priority}, {name: ElasticQuota}]\n", "plugins[1].name"},
	{"plugin twice", []string{"--config=@config"}, schedHeader + "plugins: [{name: Priority}, {name: ElasticQuotaV2}, {name: Priority}]\n", "plugins[2].name"},
	{"quota plugin left out", []string{"--config=@config"}, schedHeader + "plugins: [{name: Priority}]\n", "plugins"},
	{"negative duration", []string{"--config=@config"}, schedHeader + "reclaimProtectionPeriod: -5s\n", "reclaimProtectionPeriod"},
	{"duration without a unit", []string{"--config=@config"}, schedHeader + "reclaimProtectionPeriod: 90\n", "reclaimProtectionPeriod"},
	{"arguments of a plugin not enabled", []string{"--config=@config"}, schedHeader + "pluginConfigs: [{name: Block, args: {}}]\n", "pluginConfigs[0].name"},
	{"configuration file missing", []string{"--config=/nonexistent/koord-queue.yaml"}, "", "--config"},
	{"configuration file is a folder", []string{"--config=" + os.TempDir()}, "", "--config"},
	{"oversell rate below 1", []string{"--oversellrate=0.5"}, "", "--oversellrate"},
	{"oversell rate that is not a number", []string{"--oversellrate=lots"}, "", "oversellrate"},
	{"unknown feature gate", []string{"--feature-gates=QueueUnitActiv=true"}, "", "QueueUnitActiv"},
	{"feature gate that is not a boolean", []string{"--feature-gates=QueueUnitActive=maybe"}, "", "QueueUnitActive"},
	{"feature gate without a value", []string{"--feature-gates=QueueUnitActive"}, "", "--feature-gates"},
	{"no admission check workers", []string{"--admissionCheckControllerWorker=0"}, "", "--admissionCheckControllerWorker"},
	{"no status workers", []string{"--status-workers=-1"}, "", "--status-workers"},
	{"zero qps", []string{"--qps=0"}, "", "--qps"},
	{"leader election without a lease name", []string{"--leader-elect-resource-name="}, "", "--leader-elect"},
	{"unknown flag", []string{"--oversell-rate=2"}, "", "oversell-rate"},
}

// controllersCases are bad flags and configuration files of
// koord-queue-controllers.
var controllersCases = []configCase{
	{"misspelt extension", []string{"--enabled-extensions=jobs"}, "", "jobs"},
	{"no extension", []string{"--enabled-extensions="}, "", "--enabled-extensions"},
	{"default quota that is not a name", []string{"--default-quota=Team A"}, "", "--default-quota"},
	{"namespace selector that does not parse", []string{"--managed-jobs-namespace-selector=env in (a"}, "", "--managed-jobs-namespace-selector"},
	{"unknown feature gate", []string{"--feature-gates=MaxExecutionTime=true"}, "", "MaxExecutionTime"},
	{"timeouts of an unknown extension", []string{"--config=@config"}, "apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueControllersConfiguration\nextensions:\n  jobs: {runningTimeout: 5m}\n", "extensions[jobs]"},
	{"negative running timeout", []string{"--config=@config"}, "apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueControllersConfiguration\ndefault: {runningTimeout: -1m}\n", "default.runningTimeout"},
	{"misspelt field in the controllers' file", []string{"--config=@config"}, "apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueControllersConfiguration\ndefaults: {runningTimeout: 1m}\n", `unknown field "defaults"`},
	{"scheduler's file given to the controllers", []string{"--config=@config"}, schedHeader, "kind"},
	{"verbosity that is not a number", []string{"--v=high"}, "", "-v"},
}

func (tc configCase) argsWithFile(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, a := range tc.args {
		if strings.Contains(a, "@config") {
			p := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(p, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			a = strings.ReplaceAll(a, "@config", p)
		}
		out = append(out, a)
	}
	return out
}

// TestSchedulerConfiguration starts koord-queue's option handling as its main
// does (flags, then Complete), and for the plugins' arguments the scheduler
// itself: each bad input stops it with an error naming the flag or field.
func TestSchedulerConfiguration(t *testing.T) {
	for _, tc := range schedulerCases {
		t.Run(tc.name, func(t *testing.T) {
			o := schedapp.NewOptions()
			fs := pflag.NewFlagSet("koord-queue", pflag.ContinueOnError)
			fs.SetOutput(&strings.Builder{})
			o.AddFlags(fs)
			err := fs.Parse(tc.argsWithFile(t))
			if err == nil {
				err = o.Complete()
			}
			refused(t, err, tc.want)
		})
	}
}

// TestSchedulerPluginArgs runs koord-queue with plugin arguments that do not
// decode: it must stop at once, naming the plugin, not run without them.
func TestSchedulerPluginArgs(t *testing.T) {
	setup(t)
	for _, tc := range []configCase{
		{"misspelt ElasticQuotaV2 argument", []string{"--config=@config"}, schedHeader + "pluginConfigs: [{name: ElasticQuotaV2, args: {sharedQuota: true}}]\n", `unknown field "sharedQuota"`},
		{"ElasticQuotaV2 argument of the wrong type", []string{"--config=@config"}, schedHeader + "pluginConfigs: [{name: ElasticQuotaV2, args: {sharedQuotas: yes please}}]\n", "ElasticQuotaV2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := schedapp.NewOptions()
			fs := pflag.NewFlagSet("koord-queue", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.argsWithFile(t)); err != nil {
				t.Fatal(err)
			}
			err := o.Complete()
			if err == nil {
				o.LeaderElect = false
				o.MetricsBindAddress = "0"
				ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
				defer cancel()
				done := make(chan error, 1)
				go func() { done <- schedapp.RunWithConfig(ctx, env.Config, o) }()
				select {
				case err = <-done:
				case <-time.After(waitTimeout):
					cancel()
					t.Fatalf("koord-queue kept running with arguments it cannot read (stopped: %v)", <-done)
				}
			}
			refused(t, err, tc.want)
		})
	}
}

// TestControllersConfiguration builds koord-queue-controllers' manager from
// bad flags and files: each stops it with an error naming the flag or field.
func TestControllersConfiguration(t *testing.T) {
	setup(t)
	for _, tc := range controllersCases {
		t.Run(tc.name, func(t *testing.T) {
			o := jobextapp.NewOptions()
			fs := pflag.NewFlagSet("koord-queue-controllers", pflag.ContinueOnError)
			fs.SetOutput(&strings.Builder{})
			o.AddFlags(fs)
			err := fs.Parse(tc.argsWithFile(t))
			if err == nil {
				o.LeaderElect = false
				o.MetricsBindAddress = "0"
				o.HealthProbeBindAddress = "0"
				o.WebhookPort = 0
				o.SkipNameValidation = true
				_, err = jobextapp.NewManager(env.Config, o, clock.RealClock{})
			}
			refused(t, err, tc.want)
		})
	}
}
