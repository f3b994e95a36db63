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
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// GuideFile is the user guide, relative to the repository root.
const GuideFile = "docs/user-guide.md"

// GuideFileZH is the user guide in Chinese: its prose is translated, its
// fenced blocks are GuideFile's, in the same order (CompareBlocks).
const GuideFileZH = "docs/user-guide.zh.md"

// Markers in a fenced block's info string (the words after the backticks).
const (
	// MarkPlay marks a command or manifest block the end-to-end suite plays.
	MarkPlay = "e2e"
	// MarkNoPlay marks a command or manifest block that cannot run on the
	// local cluster (a helm install, an image push, a fragment).
	MarkNoPlay = "no-e2e"
	// MarkOutput marks a text block holding lines the output of the played
	// command block before it must contain.
	MarkOutput = "e2e-output"
	// attrFile names the file a played YAML block is saved as, for a later
	// command block to use; without it the block is applied as it is.
	attrFile = "file="
)

// markedLangs are the block languages that must say whether they are played.
var markedLangs = map[string]bool{"sh": true, "bash": true, "console": true, "yaml": true}

// Block is one fenced block of the guide.
type Block struct {
	// Line is the 1-based line of the opening fence.
	Line int
	// Info is the info string as written after the backticks.
	Info string
	// Lang is the first word of the info string (sh, yaml, text, ...).
	Lang string
	// Play is true for blocks marked e2e.
	Play bool
	// File is the name a played YAML block is saved as (file=NAME).
	File string
	// Output is true for a text block of expected output (e2e-output); it
	// belongs to the played command block before it.
	Output bool
	// Section is the nearest heading above the block.
	Section string
	Body    string
}

// Command reports whether the block is a shell command block.
func (b Block) Command() bool { return b.Lang == "sh" || b.Lang == "bash" || b.Lang == "console" }

// Blocks splits a Markdown guide into its fenced blocks and checks their
// markers: every sh, bash, console and yaml block says e2e or no-e2e, an
// e2e-output block follows a played command block, and a block is closed.
func Blocks(markdown []byte) ([]Block, error) {
	var (
		blocks  []Block
		cur     *Block
		body    strings.Builder
		section string
		line    int
	)
	sc := bufio.NewScanner(bytes.NewReader(markdown))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line++
		text := sc.Text()
		fence := strings.HasPrefix(strings.TrimLeft(text, " "), "```")
		switch {
		case cur == nil && fence:
			b, err := openBlock(strings.TrimPrefix(strings.TrimLeft(text, " "), "```"), line)
			if err != nil {
				return nil, err
			}
			b.Section = section
			cur = &b
			body.Reset()
		case cur != nil && fence:
			cur.Body = body.String()
			if cur.Output {
				if err := checkOutputPlace(blocks, *cur); err != nil {
					return nil, err
				}
			}
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(text)
			body.WriteByte('\n')
		case strings.HasPrefix(text, "#"):
			section = strings.TrimSpace(strings.TrimLeft(text, "#"))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: fenced block is never closed", cur.Line)
	}
	return blocks, nil
}

func openBlock(info string, line int) (Block, error) {
	fields := strings.Fields(info)
	b := Block{Line: line, Info: info}
	if len(fields) == 0 {
		return b, nil
	}
	b.Lang = fields[0]
	marks := fields[1:]
	if b.Lang == "text" && len(marks) > 0 && marks[0] == MarkOutput {
		if len(marks) > 1 {
			return b, fmt.Errorf("line %d: unexpected %q after %s", line, marks[1], MarkOutput)
		}
		b.Output = true
		return b, nil
	}
	if !markedLangs[b.Lang] {
		if len(marks) > 0 {
			return b, fmt.Errorf("line %d: %s blocks are never played, but it is marked %q", line, b.Lang, strings.Join(marks, " "))
		}
		return b, nil
	}
	if len(marks) == 0 {
		return b, fmt.Errorf("line %d: a %s block must be marked %s (played by test/e2e) or %s", line, b.Lang, MarkPlay, MarkNoPlay)
	}
	switch marks[0] {
	case MarkPlay:
		b.Play = true
	case MarkNoPlay:
	default:
		return b, fmt.Errorf("line %d: unknown marker %q on a %s block (want %s or %s)", line, marks[0], b.Lang, MarkPlay, MarkNoPlay)
	}
	for _, m := range marks[1:] {
		name, ok := strings.CutPrefix(m, attrFile)
		if !ok || name == "" || b.Lang != "yaml" || !b.Play || strings.ContainsAny(name, `/\`) {
			return b, fmt.Errorf("line %d: unexpected %q (only a played yaml block takes %sNAME, a plain file name)", line, m, attrFile)
		}
		b.File = name
	}
	return b, nil
}

// checkOutputPlace requires an output block to come right after a played
// command block (prose between them is fine, other blocks are not).
func checkOutputPlace(before []Block, out Block) error {
	if len(before) == 0 {
		return fmt.Errorf("line %d: %s block with no command block before it", out.Line, MarkOutput)
	}
	prev := before[len(before)-1]
	if !prev.Command() || !prev.Play {
		return fmt.Errorf("line %d: %s block must follow a played command block, not the block of line %d", out.Line, MarkOutput, prev.Line)
	}
	return nil
}

// CompareBlocks returns an error naming the first block where a (of the
// guide nameA) and b (of nameB) differ in info string or body, with both
// lines, or the first block one of them has beyond the other; nil when the
// two sequences are the same.
func CompareBlocks(nameA string, a []Block, nameB string, b []Block) error {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		where := fmt.Sprintf("block %d, %s:%d and %s:%d", i+1, nameA, x.Line, nameB, y.Line)
		if x.Info != y.Info {
			return fmt.Errorf("%s: the info strings differ: %q and %q", where, x.Info, y.Info)
		}
		if x.Body != y.Body {
			n, lx, ly := firstDiffLine(x.Body, y.Body)
			return fmt.Errorf("%s: the bodies differ at line %d of the block: %s and %s", where, n, lx, ly)
		}
	}
	switch {
	case len(a) > len(b):
		return fmt.Errorf("%s has %d blocks, %s %d: block %d (%s:%d) is missing from %s", nameA, len(a), nameB, len(b), len(b)+1, nameA, a[len(b)].Line, nameB)
	case len(b) > len(a):
		return fmt.Errorf("%s has %d blocks, %s %d: block %d (%s:%d) is missing from %s", nameA, len(a), nameB, len(b), len(a)+1, nameB, b[len(a)].Line, nameA)
	}
	return nil
}

// firstDiffLine returns the 1-based number of the first line where x and y
// differ, and that line of each, quoted, or "no line" past the end.
func firstDiffLine(x, y string) (int, string, string) {
	xs := strings.Split(strings.TrimSuffix(x, "\n"), "\n")
	ys := strings.Split(strings.TrimSuffix(y, "\n"), "\n")
	i := 0
	for i < len(xs) && i < len(ys) && xs[i] == ys[i] {
		i++
	}
	return i + 1, lineAt(xs, i), lineAt(ys, i)
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return strconv.Quote(lines[i])
	}
	return "no line"
}

// MissingOutput returns the lines of want (an e2e-output block) that got
// lacks. Lines are compared with runs of blanks collapsed; a wanted line
// ending in "..." matches any line that starts with what comes before it.
func MissingOutput(want, got string) []string {
	var have []string
	for _, l := range strings.Split(got, "\n") {
		have = append(have, collapse(l))
	}
	var missing []string
	for _, w := range strings.Split(want, "\n") {
		w = collapse(w)
		if w == "" {
			continue
		}
		prefix, isPrefix := strings.CutSuffix(w, "...")
		found := false
		for _, h := range have {
			if h == w || isPrefix && strings.HasPrefix(h, strings.TrimSpace(prefix)) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, w)
		}
	}
	return missing
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
