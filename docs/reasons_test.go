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

package docs

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

var update = flag.Bool("update", false, "rewrite the guide's generated tables from the code")

// waitTableHead starts the guide's table of wait reasons; its rows, up to the
// first blank line, are schedtypes.WaitTable() rendered by waitTable.
const waitTableHead = "| Condition reason | The message reads | What to do |\n|---|---|---|\n"

func waitTable() string {
	var b strings.Builder
	b.WriteString(waitTableHead)
	for _, r := range schedtypes.WaitTable() {
		b.WriteString("| `" + r.Condition + "` | " + r.Message + " | " + r.Remedy + " |\n")
	}
	return b.String()
}

// TestGuideWaitTable fails when the guide's table of wait reasons is not the
// code's (schedtypes.WaitTable); go test ./docs -run TestGuideWaitTable
// -update rewrites it.
func TestGuideWaitTable(t *testing.T) {
	guide := readGuide(t, GuideFile)
	start := strings.Index(guide, waitTableHead)
	if start < 0 {
		t.Fatalf("%s has no table starting %q", GuideFile, waitTableHead)
	}
	end := strings.Index(guide[start:], "\n\n")
	if end < 0 {
		t.Fatalf("the table of wait reasons in %s does not end", GuideFile)
	}
	end += start + 1
	want := waitTable()
	if guide[start:end] == want {
		return
	}
	if *update {
		if err := os.WriteFile(filepath.Join(root, GuideFile), []byte(guide[:start]+want+guide[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the table of wait reasons in %s is not schedtypes.WaitTable(); run go test ./docs -run TestGuideWaitTable -update\ngot:\n%s\nwant:\n%s",
		GuideFile, guide[start:end], want)
}
