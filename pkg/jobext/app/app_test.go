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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

func TestEnabledExtensions(t *testing.T) {
	reg := NewRegistry()
	want := []string{"job", "jobset", "leaderworkerset", "mpijob", "pod", "pytorchjob", "raycluster", "rayjob", "rayjobv1alpha1", "sparkapp", "tfjob", "trainjob", "workflow"}
	if diff := cmp.Diff(want, names(reg)); diff != "" {
		t.Errorf("registry (-want +got):\n%s", diff)
	}
	exts, err := enabledExtensions(reg, []string{"job", "tfjob", "job"})
	if err != nil || len(exts) != 2 {
		t.Fatalf("got %d extensions, %v", len(exts), err)
	}
	_, err = enabledExtensions(reg, []string{"job", "xgboostjob"})
	if err == nil || !strings.Contains(err.Error(), "xgboostjob") || !strings.Contains(err.Error(), strings.Join(want, ", ")) {
		t.Errorf("unknown extension error = %v", err)
	}
	if _, err := enabledExtensions(reg, nil); err == nil {
		t.Error("no extensions accepted")
	}
}

func TestCompleteManageAllOptions(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	cases := map[string]struct {
		mutate  func(*Options)
		env     string
		wantSel string
		wantErr string
	}{
		"default selector":               {wantSel: "kubernetes.io/metadata.name notin (koord-queue,kube-system)"},
		"release from the env":           {env: "kq-env", wantSel: "kubernetes.io/metadata.name notin (kq-env,kube-system)"},
		"release flag wins":              {env: "kq-env", mutate: func(o *Options) { o.ReleaseNamespace = "kq-flag" }, wantSel: "kubernetes.io/metadata.name notin (kq-flag,kube-system)"},
		"custom selector":                {mutate: func(o *Options) { o.ManagedJobsNamespaceSelector = "queue=on" }, wantSel: "queue=on"},
		"bad selector":                   {mutate: func(o *Options) { o.ManagedJobsNamespaceSelector = "queue in (on" }, wantErr: "--managed-jobs-namespace-selector"},
		"good default quota":             {mutate: func(o *Options) { o.DefaultQuota = "team-a" }, wantSel: "kubernetes.io/metadata.name notin (koord-queue,kube-system)"},
		"bad default quota":              {mutate: func(o *Options) { o.DefaultQuota = "Team A" }, wantErr: "--default-quota"},
		"too long default quota":         {mutate: func(o *Options) { o.DefaultQuota = strings.Repeat("a", 64) }, wantErr: "--default-quota"},
		"no workers":                     {mutate: func(o *Options) { o.Workers = 0 }, wantErr: "--workers must be at least 1, got 0"},
		"quota refusal timeout off":      {mutate: func(o *Options) { o.QuotaRefusalTimeout = 0 }, wantSel: "kubernetes.io/metadata.name notin (koord-queue,kube-system)"},
		"negative quota refusal timeout": {mutate: func(o *Options) { o.QuotaRefusalTimeout = -time.Second }, wantErr: "--quota-refusal-timeout must not be negative"},
		"lease too short":                {mutate: func(o *Options) { o.LeaseDuration = time.Second }, wantErr: "--leader-elect-lease-duration must be at least 3s"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", tc.env)
			o := NewOptions()
			if tc.mutate != nil {
				tc.mutate(o)
			}
			c, err := o.complete()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.managedNamespaces.String(); got != tc.wantSel {
				t.Errorf("selector = %q, want %q", got, tc.wantSel)
			}
		})
	}
}

// With leader election on, the controllers' lease is fenced, named after
// the pod, and its elector tuned from --leader-elect-lease-duration.
func TestLeaseLock(t *testing.T) {
	t.Setenv("POD_NAME", "koord-queue-controllers-7d9f-abcde")
	o := NewOptions()
	o.LeaseDuration = 30 * time.Second
	lock, elector, err := leaseLock(&rest.Config{Host: "https://127.0.0.1:1"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(lock.Identity(), "koord-queue-controllers-7d9f-abcde_") {
		t.Errorf("identity %q does not start with the pod's name and _", lock.Identity())
	}
	eo := elector.Options()
	if eo.Lock != lock {
		t.Error("the elector does not use the fenced lock")
	}
	got := []time.Duration{eo.LeaseDuration, eo.RenewDeadline, eo.RetryPeriod}
	if diff := cmp.Diff([]time.Duration{30 * time.Second, 20 * time.Second, 4 * time.Second}, got); diff != "" {
		t.Errorf("lease, renew deadline, retry period (-want +got):\n%s", diff)
	}
	o.LeaderElect = false
	if lock, elector, err := leaseLock(&rest.Config{}, o); lock != nil || elector != nil || err != nil {
		t.Errorf("leader election off: lock %v, elector %v, err %v", lock, elector, err)
	}
}
