//go:build chaosmutation

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

package mutation

import "testing"

// In a chaosmutation build the planted bug is the one the environment named
// when the process started (the variable is read once), and Strikes strikes
// once in Every.
func TestThePlantedBugStrikesOnceInEvery(t *testing.T) {
	old := planted
	t.Cleanup(func() { planted = old })
	planted = LostAdmission
	if !On(LostAdmission) || On(NoFence) || On("") {
		t.Fatalf("On: planted %q answers wrongly", planted)
	}
	n := 0
	for range 10 * Every {
		if Strikes(LostAdmission) {
			n++
		}
	}
	if n != 10 {
		t.Errorf("%d strikes in %d chances, want 10", n, 10*Every)
	}
	if Strikes(NoFence) {
		t.Error("a bug not planted strikes")
	}
}
