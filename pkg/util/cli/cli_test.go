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

package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestCommandMain plays the command line through: each case gives the
// arguments and says what must come out, and whether the binary ran.
func TestCommandMain(t *testing.T) {
	cases := map[string]struct {
		args        []string
		completeErr error
		runErr      error
		wantCode    int
		wantRan     bool
		wantStdout  string
		wantStderr  string
	}{
		"runs":                 {wantCode: 0, wantRan: true},
		"flag reaches the run": {args: []string{"--size=3"}, wantCode: 0, wantRan: true},
		"help":                 {args: []string{"--help"}, wantCode: 0, wantStderr: "--size"},
		"version":              {args: []string{"--version"}, wantCode: 0, wantStdout: "demo "},
		"unknown flag":         {args: []string{"--sise=3"}, wantCode: 2, wantStderr: "demo: unknown flag: --sise"},
		"bad value":            {args: []string{"--size=big"}, wantCode: 2, wantStderr: "demo: invalid argument \"big\""},
		"refused by Complete":  {completeErr: errors.New("--size must be odd"), wantCode: 2, wantStderr: "demo: --size must be odd"},
		"run fails":            {runErr: errors.New("no cluster"), wantCode: 1, wantRan: true, wantStderr: "demo: no cluster"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var size int
			ran := false
			c := Command{
				Name:     "demo",
				AddFlags: func(fs *pflag.FlagSet) { fs.IntVar(&size, "size", 1, "How big.") },
				Complete: func() error { return tc.completeErr },
				Run: func() error {
					ran = true
					if size != 3 && len(tc.args) > 0 {
						t.Errorf("run saw --size %d, want 3", size)
					}
					return tc.runErr
				},
			}
			var stdout, stderr strings.Builder
			code := c.Main(tc.args, &stdout, &stderr)
			if code != tc.wantCode || ran != tc.wantRan {
				t.Errorf("exit %d, ran %v; want exit %d, ran %v (stderr %q)", code, ran, tc.wantCode, tc.wantRan, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tc.wantStdout) || (tc.wantStdout == "" && stdout.Len() > 0) {
				t.Errorf("stdout %q, want it to start with %q", stdout.String(), tc.wantStdout)
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) || (tc.wantStderr == "" && stderr.Len() > 0) {
				t.Errorf("stderr %q, want it to hold %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}

// TestCommandMainWithoutComplete: Complete may be left out.
func TestCommandMainWithoutComplete(t *testing.T) {
	ran := false
	c := Command{Name: "demo", AddFlags: func(*pflag.FlagSet) {}, Run: func() error { ran = true; return nil }}
	if code := c.Main(nil, &strings.Builder{}, &strings.Builder{}); code != 0 || !ran {
		t.Errorf("exit %d, ran %v; want 0, true", code, ran)
	}
}
