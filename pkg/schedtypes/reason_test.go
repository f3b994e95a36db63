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

package schedtypes

import "testing"

// TestEveryKindHasARow: each kind has its own key, a condition reason, a
// message and a remedy, and the table users read holds every row once.
func TestEveryKindHasARow(t *testing.T) {
	keys := map[string]WaitKind{}
	for k := WaitKind(0); k < waitKinds; k++ {
		row := Reason{Kind: k}.Row()
		if row.Key == "" || row.Condition == "" || row.Message == "" || row.Remedy == "" {
			t.Errorf("kind %d has an incomplete row: %+v", k, row)
		}
		if other, ok := keys[row.Key]; ok {
			t.Errorf("kinds %d and %d share the key %q", other, k, row.Key)
		}
		keys[row.Key] = k
	}
	if got, want := len(WaitTable()), int(waitKinds)+1; got != want {
		t.Errorf("the table has %d rows, want one per kind and the protected wait (%d)", got, want)
	}
	if got := (Reason{Kind: waitKinds}).Condition(); got != "Pending" {
		t.Errorf("a kind past the table reads %q, want the row of WaitOther", got)
	}
}

// TestReasonEquality: a Reason is equal for the same wait, and differs when
// the unit is protected, reserves or names another thing.
func TestReasonEquality(t *testing.T) {
	short := Reason{Kind: WaitInsufficientQuota, Subject: "a", Detail: "cpu"}
	if short != (Reason{Kind: WaitInsufficientQuota, Subject: "a", Detail: "cpu"}) {
		t.Error("the same wait is not equal")
	}
	for _, other := range []Reason{
		short.Protected(1), {Kind: WaitInsufficientQuota, Subject: "a", Detail: "cpu", Reserving: true},
		{Kind: WaitInsufficientQuota, Subject: "a", Detail: "memory"}, {Kind: WaitNeverFits, Subject: "a", Detail: "cpu"},
	} {
		if other == short {
			t.Errorf("%v equals %v", other, short)
		}
	}
	if got := short.Protected(1767225600).String(); got != "short/a/cpu/protected/1767225600" {
		t.Errorf("String() = %q", got)
	}
	if got := short.Protected(5).Condition(); got != "WaitingForProtectionEnd" {
		t.Errorf("a protected wait reads %q", got)
	}
}
