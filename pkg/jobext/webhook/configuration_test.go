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

package webhook_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/webhook"
)

// TestRulesNameTheServedResources: each rule's resource is the plural the
// API serves: for a CRD, the first part of its name (<plural>.<group>). It
// covers every extension the binary registers.
func TestRulesNameTheServedResources(t *testing.T) {
	reg := app.NewRegistry()
	names := make([]string, 0, len(reg))
	for n := range reg {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) < 8 {
		t.Fatalf("registry lists %d extensions (%v), want at least the 8 kinds", len(names), names)
	}
	exts := make([]framework.Extension, 0, len(names))
	for _, n := range names {
		exts = append(exts, reg[n](framework.ExtensionOptions{}))
	}
	rules := webhook.Rules(exts)
	for i, ext := range exts {
		r := rules[i]
		want := "jobs"
		if ext.CRD != "" {
			want = strings.SplitN(ext.CRD, ".", 2)[0]
		}
		if got := r.Resources[0]; got != want || r.APIGroups[0] != ext.GVK.Group || r.APIVersions[0] != ext.GVK.Version {
			t.Errorf("%s: rule %v/%v/%v, want resource %s in %s", ext.Name, r.APIGroups, r.APIVersions, r.Resources, want, ext.GVK.GroupVersion())
		}
	}
}
