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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// TestGuidesHaveTheSameBlocks fails when the Chinese guide's fenced blocks
// are not the English guide's, so that playing either plays the same.
func TestGuidesHaveTheSameBlocks(t *testing.T) {
	var blocks [2][]Block
	for i, file := range []string{GuideFile, GuideFileZH} {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		if blocks[i], err = Blocks(data); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	if err := CompareBlocks(GuideFile, blocks[0], GuideFileZH, blocks[1]); err != nil {
		t.Fatalf("the translation must hold the English guide's blocks as written: %v", err)
	}
	t.Logf("%d blocks in each guide", len(blocks[0]))
}

func TestCompareBlocks(t *testing.T) {
	const en = "# A\n```sh e2e\nkubectl get qu\nkubectl get kq\n```\n```text e2e-output\nx\n```\n"
	for _, tc := range []struct {
		name, zh, wantErr string
	}{{
		name: "same blocks, other prose",
		zh:   "# 甲\n说明\n\n```sh e2e\nkubectl get qu\nkubectl get kq\n```\n又一段\n```text e2e-output\nx\n```\n",
	}, {
		name:    "a body differs",
		zh:      "# 甲\n\n```sh e2e\nkubectl get qu\nkubectl get kqs\n```\n```text e2e-output\nx\n```\n",
		wantErr: `block 1, en.md:2 and zh.md:3: the bodies differ at line 2 of the block: "kubectl get kq" and "kubectl get kqs"`,
	}, {
		name:    "a marker differs",
		zh:      "```sh e2e\nkubectl get qu\nkubectl get kq\n```\n```text\nx\n```\n",
		wantErr: `block 2, en.md:6 and zh.md:5: the info strings differ: "text e2e-output" and "text"`,
	}, {
		name:    "a line added at the end",
		zh:      "```sh e2e\nkubectl get qu\nkubectl get kq\n\n```\n```text e2e-output\nx\n```\n",
		wantErr: `block 1, en.md:2 and zh.md:1: the bodies differ at line 3 of the block: no line and ""`,
	}, {
		name:    "a block missing",
		zh:      "```sh e2e\nkubectl get qu\nkubectl get kq\n```\n",
		wantErr: "en.md has 2 blocks, zh.md 1: block 2 (en.md:6) is missing from zh.md",
	}, {
		name:    "a block more",
		zh:      "```sh e2e\nkubectl get qu\nkubectl get kq\n```\n```text e2e-output\nx\n```\n```yaml no-e2e\na: 1\n```\n",
		wantErr: "en.md has 2 blocks, zh.md 3: block 3 (zh.md:8) is missing from en.md",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Blocks([]byte(en))
			if err != nil {
				t.Fatal(err)
			}
			b, err := Blocks([]byte(tc.zh))
			if err != nil {
				t.Fatal(err)
			}
			err = CompareBlocks("en.md", a, "zh.md", b)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error = %v, want none", err)
			case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
				t.Fatalf("error = %v, want %s", err, tc.wantErr)
			}
		})
	}
}

// waitTableHeadZH starts the Chinese guide's table of wait reasons: the
// code's condition reasons in its order, each message's quoted text kept and
// the prose around it translated.
const waitTableHeadZH = "| 条件原因 | 消息内容 | 处理办法 |\n|---|---|---|\n"

var codeSpanRE = regexp.MustCompile("`[^`]+`")

// TestGuideWaitTableZH fails when the Chinese guide's table of wait reasons
// does not have schedtypes.WaitTable()'s rows: the same reasons in the same
// order, each message cell holding the quoted parts of the code's message.
// The remedies are translated, so -update cannot write this table.
func TestGuideWaitTableZH(t *testing.T) {
	guide := readGuide(t, GuideFileZH)
	start := strings.Index(guide, waitTableHeadZH)
	if start < 0 {
		t.Fatalf("%s has no table starting %q", GuideFileZH, waitTableHeadZH)
	}
	table := guide[start+len(waitTableHeadZH):]
	if end := strings.Index(table, "\n\n"); end >= 0 {
		table = table[:end]
	}
	rows := strings.Split(table, "\n")
	want := schedtypes.WaitTable()
	if len(rows) != len(want) {
		t.Fatalf("the table of wait reasons in %s has %d rows, schedtypes.WaitTable() %d", GuideFileZH, len(rows), len(want))
	}
	for i, r := range want {
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(rows[i], "| "), " |"), " | ")
		if len(cells) != 3 || cells[0] != "`"+r.Condition+"`" {
			t.Errorf("%s: row %d of the table of wait reasons is %q, want `%s`, its message and a remedy", GuideFileZH, i+1, rows[i], r.Condition)
			continue
		}
		for _, span := range codeSpanRE.FindAllString(r.Message, -1) {
			if !strings.Contains(cells[1], span) {
				t.Errorf("%s: the message of %s lacks %s (schedtypes.WaitTable)", GuideFileZH, r.Condition, span)
			}
		}
	}
}
