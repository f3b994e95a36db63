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

package features

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	g, err := Parse("QueueUnitActive=true, MaximumExecutionTime=false,QueueUnitRequeueState=true")
	if err != nil {
		t.Fatal(err)
	}
	if !g.QueueUnitActive || g.MaximumExecutionTime || !g.QueueUnitRequeueState {
		t.Errorf("gates = %+v", g)
	}
	for in, want := range map[string]string{
		"Nope=true":            `unknown gate "Nope"`,
		"QueueUnitActive=yes!": `QueueUnitActive="yes!" is not a boolean`,
		"QueueUnitActive":      "is not Name=true|false",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want error containing %q", in, err, want)
		}
	}
}
