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

package resources

import (
	"math"
	"strings"
	"testing"
)

func TestDemandAdd(t *testing.T) {
	cases := []struct {
		name    string
		perPod  []string
		count   int64
		before  Demand
		wantErr string
		want    Demand
	}{
		{name: "counted", perPod: []string{"cpu", "1500m", "memory", "1Gi"}, count: 2,
			want: Demand{"cpu": 3000, "memory": 2 << 30}},
		{name: "negative", perPod: []string{"cpu", "-1"}, count: 1, wantErr: "cpu: -1 is negative"},
		{name: "beyond int64 reads as zero elsewhere", perPod: []string{"cpu", "1e30"}, count: 1, wantErr: "above the bound"},
		{name: "memory beyond int64", perPod: []string{"memory", "100Ei"}, count: 1, wantErr: "above the bound"},
		{name: "product overflows", perPod: []string{"nvidia.com/gpu", "4e18"}, count: 3, wantErr: "makes more than the bound"},
		{name: "sum overflows", perPod: []string{"memory", "4e18"}, count: 1, before: Demand{"memory": 1 << 62},
			wantErr: "makes more than the bound"},
		{name: "at the bound", perPod: []string{"memory", "4611686018427387904"}, count: 1,
			want: Demand{"memory": MaxAmount}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.before
			if d == nil {
				d = Demand{}
			}
			err := d.Add("podSet main", rl(tc.perPod...), tc.count)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "podSet main") {
					t.Fatalf("err = %v, want one naming the set and %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if d[k] != v {
					t.Errorf("%s = %d, want %d", k, d[k], v)
				}
			}
		})
	}
}

func TestSaturatingArithmetic(t *testing.T) {
	const maxI, minI = int64(math.MaxInt64), int64(math.MinInt64)
	for _, c := range []struct {
		name       string
		a, b, want int64
		sub        bool
	}{
		{name: "plain sum", a: 3, b: 4, want: 7},
		{name: "sum past the top", a: maxI - 1, b: 5, want: maxI},
		{name: "sum past the bottom", a: minI + 1, b: -5, want: minI},
		{name: "mixed signs never saturate", a: maxI, b: -1, want: maxI - 1},
		{name: "plain difference", a: 3, b: 4, want: -1, sub: true},
		{name: "difference past the bottom", a: minI + 1, b: 2, want: minI, sub: true},
		{name: "taking away the smallest int64", a: 0, b: minI, want: maxI, sub: true},
		{name: "taking the smallest int64 from a negative", a: -1, b: minI, want: maxI, sub: true},
	} {
		got := AddSat(c.a, c.b)
		if c.sub {
			got = SubSat(c.a, c.b)
		}
		if got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}
