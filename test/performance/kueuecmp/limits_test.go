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

package kueuecmp

import (
	"strings"
	"testing"
)

const minimalKueueMain = `	// based on the default config
	kubeConfig.QPS = 50
	kubeConfig.Burst = 100
	log.Info("K8S Client", "Host", kubeConfig.Host, "qps", kubeConfig.QPS, "burst", kubeConfig.Burst)
`

// The patch changes the two lines of client limits and nothing else, and
// refuses a source where they are not as in the pinned Kueue.
func TestPatchClientLimits(t *testing.T) {
	out, err := patchClientLimits([]byte(minimalKueueMain), "1000", 2000)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(minimalKueueMain, "QPS = 50", "QPS = 1000", 1), "Burst = 100", "Burst = 2000", 1)
	if string(out) != want {
		t.Errorf("patched:\n%s\nwant:\n%s", out, want)
	}
	for name, src := range map[string]string{
		"limits set otherwise": strings.Replace(minimalKueueMain, "kubeConfig.QPS = 50", "kubeConfig.QPS = 25", 1),
		"set twice":            minimalKueueMain + "\tkubeConfig.Burst = 100\n",
	} {
		if _, err := patchClientLimits([]byte(src), "1000", 2000); err == nil {
			t.Errorf("%s: patched without an error", name)
		}
	}
}
