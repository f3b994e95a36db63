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
	"testing"
)

func TestWithoutManagedFields(t *testing.T) {
	const mf = `"managedFields":[{"manager":"a \"quoted\" ]}","fieldsV1":{"f:status":{".":{},"f:x":{}}},"time":"2026-12-07T00:00:00Z"},{"manager":"b\\"}]`
	for _, tc := range []struct{ name, in, want string }{
		{"first of several", `{"apiVersion":"v","kind":"QueueUnit","metadata":{` + mf + `,"name":"a","uid":"u"},"spec":{}}`,
			`{"apiVersion":"v","kind":"QueueUnit","metadata":{"name":"a","uid":"u"},"spec":{}}`},
		{"between", `{"kind":"QueueUnit","metadata":{"labels":{"managedFields":"x"},` + mf + `,"name":"a"},"status":{"managedFields":[]}}`,
			`{"kind":"QueueUnit","metadata":{"labels":{"managedFields":"x"},"name":"a"},"status":{"managedFields":[]}}`},
		{"last", `{"metadata":{"name":"a",` + mf + `},"spec":{"x":[1,{"y":"}"}]}}`,
			`{"metadata":{"name":"a"},"spec":{"x":[1,{"y":"}"}]}}`},
		{"alone, with space", ` { "spec" : {"a":null} , "metadata" : { ` + mf + ` } }`,
			` { "spec" : {"a":null} , "metadata" : {  } }`},
		{"null", `{"metadata":{"managedFields":null,"name":"a"}}`, `{"metadata":{"name":"a"}}`},
		{"none", `{"metadata":{"name":"a"},"spec":{"managedFields":[]}}`, `{"metadata":{"name":"a"},"spec":{"managedFields":[]}}`},
		{"escaped key left alone", `{"metadata":{"n\u0061me":"a",` + mf + `}}`, `{"metadata":{"n\u0061me":"a",` + mf + `}}`},
		{"cut short", `{"metadata":{"name":"a",` + mf, `{"metadata":{"name":"a",` + mf},
		{"not an object", `[1,2]`, `[1,2]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(withoutManagedFields([]byte(tc.in)))
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if json.Valid([]byte(tc.in)) != json.Valid([]byte(got)) {
				t.Errorf("validity changed: %v before, %v after", json.Valid([]byte(tc.in)), json.Valid([]byte(got)))
			}
		})
	}
}
