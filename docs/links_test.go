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
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	sectionLinkRE = regexp.MustCompile(`\]\(#([^)\s]+)\)`)
	anchorRE      = regexp.MustCompile(`<a (?:id|name)="([^"]+)">`)
)

// TestGuideLinksResolve fails when a guide links to a section (#fragment)
// that is neither a heading's anchor, as GitHub makes it, nor an <a id> of
// that guide. The Chinese guide's headings give other anchors, so it keeps
// the English ones with <a id>.
func TestGuideLinksResolve(t *testing.T) {
	for _, file := range guideFiles() {
		guide := readGuide(t, file)
		anchors := guideAnchors(guide)
		links := sectionLinkRE.FindAllStringSubmatch(guide, -1)
		if len(links) < 20 {
			t.Errorf("%s has %d links to its sections, want at least 20: is the scan still finding them?", file, len(links))
		}
		for _, m := range links {
			if !anchors[m[1]] {
				t.Errorf("%s links to #%s, which is no heading or anchor of it", file, m[1])
			}
		}
	}
}

func TestHeadingAnchor(t *testing.T) {
	seen := map[string]int{}
	for _, tc := range []struct{ heading, want string }{
		{"15. Troubleshooting: why is my job not running?", "15-troubleshooting-why-is-my-job-not-running"},
		{"Keeping min from lenders: `allow-lent-resource`", "keeping-min-from-lenders-allow-lent-resource"},
		{"Upgrading from Koord-Queue v1.8", "upgrading-from-koord-queue-v18"},
		{"1. 安装", "1-安装"},
		{"Visibility API", "visibility-api"},
		{"Visibility API", "visibility-api-1"},
	} {
		if got := headingAnchor(tc.heading, seen); got != tc.want {
			t.Errorf("headingAnchor(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

// guideAnchors returns the anchors of a guide's headings (outside fenced
// blocks) and its <a id> elements.
func guideAnchors(guide string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(guide, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if h := strings.TrimLeft(line, "#"); h != line && strings.HasPrefix(h, " ") {
			anchors[headingAnchor(strings.TrimSpace(h), seen)] = true
		}
		for _, m := range anchorRE.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
	}
	return anchors
}

// headingAnchor is GitHub's anchor of a heading: lower case, punctuation
// dropped, spaces made hyphens, "-N" added to the Nth repeat.
func headingAnchor(heading string, seen map[string]int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	a := b.String()
	n := seen[a]
	seen[a]++
	if n > 0 {
		a += "-" + strconv.Itoa(n)
	}
	return a
}
