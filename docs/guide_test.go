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
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
)

// root is the repository root, seen from this package's folder.
const root = ".."

// guideFiles are the guides the name checks read: the English one and its
// translation, which must name the same things.
func guideFiles() []string { return []string{GuideFile, GuideFileZH} }

func readGuide(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// mentions reports whether the guide names s as a whole word: not as the
// start of a longer name.
func mentions(guide, s string) bool {
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_./-])` + regexp.QuoteMeta(s) + `($|[^A-Za-z0-9_-])`)
	return re.MatchString(guide)
}

// requireAll fails when a guide does not mention every name.
func requireAll(t *testing.T, what string, names []string, min int, form func(string) string) {
	t.Helper()
	if len(names) < min {
		t.Fatalf("found only %d %s in the code, want at least %d: is the scan still finding them?", len(names), what, min)
	}
	t.Logf("%d %s in the code: %s", len(names), what, strings.Join(names, " "))
	for _, file := range guideFiles() {
		guide := readGuide(t, file)
		for _, n := range names {
			if !mentions(guide, form(n)) {
				t.Errorf("%s does not document the %s %s", file, what, form(n))
			}
		}
	}
}

func same(s string) string { return s }

func TestGuideBlocksAreMarked(t *testing.T) {
	blocks, err := Blocks([]byte(readGuide(t, GuideFile)))
	if err != nil {
		t.Fatal(err)
	}
	played := 0
	for _, b := range blocks {
		if b.Play {
			played++
		}
	}
	if played == 0 {
		t.Fatalf("no block of %s is marked %s", GuideFile, MarkPlay)
	}
}

func TestBlocksMarkers(t *testing.T) {
	for _, tc := range []struct {
		name, md, wantErr string
		want              []Block
	}{{
		name: "played and not played",
		md:   "# A\n```sh e2e\nkubectl get qu\n```\n```text e2e-output\nx\n```\n## B\n```yaml e2e file=q.yaml\na: 1\n```\n```yaml no-e2e\nb: 2\n```\n```go\nx := 1\n```\n",
		want: []Block{
			{Line: 2, Info: "sh e2e", Lang: "sh", Play: true, Section: "A", Body: "kubectl get qu\n"},
			{Line: 5, Info: "text e2e-output", Lang: "text", Output: true, Section: "A", Body: "x\n"},
			{Line: 9, Info: "yaml e2e file=q.yaml", Lang: "yaml", Play: true, File: "q.yaml", Section: "B", Body: "a: 1\n"},
			{Line: 12, Info: "yaml no-e2e", Lang: "yaml", Section: "B", Body: "b: 2\n"},
			{Line: 15, Info: "go", Lang: "go", Section: "B", Body: "x := 1\n"},
		},
	}, {
		name: "unmarked command", md: "```sh\nls\n```\n", wantErr: "line 1: a sh block must be marked e2e",
	}, {
		name: "marker typo", md: "```yaml e2ee\na: 1\n```\n", wantErr: `unknown marker "e2ee"`,
	}, {
		name: "output after a block not played", md: "```sh no-e2e\nls\n```\n```text e2e-output\nx\n```\n", wantErr: "line 4: e2e-output block must follow a played command block",
	}, {
		name: "file on a command", md: "```sh e2e file=x\nls\n```\n", wantErr: `unexpected "file=x"`,
	}, {
		name: "file with a path", md: "```yaml e2e file=../x\na: 1\n```\n", wantErr: `unexpected "file=../x"`,
	}, {
		name: "never closed", md: "text\n```yaml e2e\na: 1\n", wantErr: "line 2: fenced block is never closed",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Blocks([]byte(tc.md))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("blocks\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestMissingOutput(t *testing.T) {
	got := "NAME             PHASE\nmy-job-blocked   Enqueued\nThe Queue \"q\" is invalid: bad\n"
	if m := MissingOutput("NAME PHASE\nmy-job-blocked  Enqueued\n\nThe Queue \"q\" is invalid...", got); len(m) != 0 {
		t.Errorf("missing %q, want none", m)
	}
	if m := MissingOutput("my-job-blocked Dequeued\nNAME", got); !reflect.DeepEqual(m, []string{"my-job-blocked Dequeued", "NAME"}) {
		t.Errorf("missing %q, want the two lines not printed", m)
	}
}

// keyRE matches the labels, annotations and finalizers koord-queue defines.
var keyRE = regexp.MustCompile(`^(koord-queue/|scheduling\.x-k8s\.io/|quota\.scheduling\.koordinator\.sh/)[a-z0-9][a-z0-9.-]*$`)

// TestGuideNamesEveryKey fails when a label, annotation or finalizer key that
// the code (apis/, pkg/, cmd/) spells out is missing from the guide.
func TestGuideNamesEveryKey(t *testing.T) {
	keys := map[string]bool{}
	for _, f := range goFiles(t, "apis", "pkg", "cmd") {
		ast.Inspect(f.file, func(n ast.Node) bool {
			if s, ok := stringLit(n); ok && keyRE.MatchString(s) {
				keys[s] = true
			}
			return true
		})
	}
	requireAll(t, "label or annotation", sortedKeys(keys), 20, same)
}

// TestGuideNamesEveryMetric fails when a metric the scheduler or the
// controllers export is missing from the guide.
func TestGuideNamesEveryMetric(t *testing.T) {
	names := map[string]bool{}
	for _, f := range goFiles(t, "pkg/metrics") {
		consts := packageConsts([]parsed{f})
		ast.Inspect(f.file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.KeyValueExpr:
				if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Name" {
					if v, ok := resolve(x.Value, consts); ok {
						names[v] = true
					}
				}
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewDesc" && len(x.Args) > 0 {
					if v, ok := resolve(x.Args[0], consts); ok {
						names[v] = true
					}
				}
			}
			return true
		})
	}
	requireAll(t, "metric", sortedKeys(names), 15, same)
}

// TestGuideNamesEveryEvent fails when an event reason the code records, or a
// condition reason the API defines, is missing from the guide.
func TestGuideNamesEveryEvent(t *testing.T) {
	files := goFiles(t, "apis", "pkg")
	consts := packageConsts(files)
	reasons := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f.file, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && strings.Contains(strings.ToLower(vs.Names[0].Name), "reason") && len(vs.Values) == 1 {
				// var fooReasons = map[string]string{"x": "SomeReason", ...}; the wait
				// reasons are checked row by row by TestGuideWaitTable.
				if cl, ok := vs.Values[0].(*ast.CompositeLit); ok {
					for _, e := range cl.Elts {
						if kv, ok := e.(*ast.KeyValueExpr); ok {
							if v, ok := stringLit(kv.Value); ok && reasonRE.MatchString(v) {
								reasons[v] = true
							}
						}
					}
				}
			}
			if as, ok := n.(*ast.AssignStmt); ok {
				// event := "FailedScheduling", passed on to Event below.
				for i, l := range as.Lhs {
					if id, ok := l.(*ast.Ident); ok && i < len(as.Rhs) && (strings.Contains(strings.ToLower(id.Name), "reason") || strings.Contains(strings.ToLower(id.Name), "event")) {
						if v, ok := stringLit(as.Rhs[i]); ok && reasonRE.MatchString(v) {
							reasons[v] = true
						}
					}
				}
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Event" && sel.Sel.Name != "Eventf") {
				return true
			}
			for i, a := range call.Args[:len(call.Args)-1] {
				if s, ok := a.(*ast.SelectorExpr); ok && strings.HasPrefix(s.Sel.Name, "EventType") {
					if v, ok := resolve(call.Args[i+1], consts); ok {
						reasons[v] = true
					}
				}
			}
			return true
		})
	}
	// Reasons passed through variables: the constants they come from.
	for name, v := range consts {
		if strings.HasPrefix(name, "Reason") || strings.HasPrefix(name, "Event") && !strings.HasPrefix(name, "EventType") {
			reasons[v] = true
		}
	}
	requireAll(t, "event or condition reason", sortedKeys(reasons), 40, same)
}

// reasonRE matches an event reason: one CamelCase word.
var reasonRE = regexp.MustCompile(`^[A-Z][A-Za-z]+$`)

// TestGuideNamesEveryFlag fails when a flag of either binary is missing.
func TestGuideNamesEveryFlag(t *testing.T) {
	flags := map[string]bool{}
	for _, f := range goFiles(t, "cmd", "pkg/scheduler/app", "pkg/jobext/app") {
		ast.Inspect(f.file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if recv, ok := sel.X.(*ast.Ident); !ok || recv.Name != "fs" || sel.Sel.Name == "Parse" || strings.HasPrefix(sel.Sel.Name, "Add") {
				return true
			}
			for _, a := range call.Args {
				if s, ok := stringLit(a); ok {
					flags[s] = true
					break
				}
			}
			return true
		})
	}
	form := func(name string) string {
		if len(name) == 1 {
			return "-" + name
		}
		return "--" + name
	}
	requireAll(t, "flag", sortedKeys(flags), 25, form)
}

func TestGuideNamesEveryFeatureGate(t *testing.T) {
	requireAll(t, "feature gate", features.Known, 3, same)
}

// TestGuideNamesEveryConfigField fails when a field of either configuration
// file (or of the ElasticQuotaV2 plugin's arguments) is missing.
func TestGuideNamesEveryConfigField(t *testing.T) {
	var fields []string
	for _, v := range []any{configv1.KoordQueueConfiguration{}, configv1.KoordQueueControllersConfiguration{},
		configv1.ExtensionTimeouts{}, configv1.ElasticQuotaArgs{}, configv1.PluginConfig{}} {
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if name != "" {
				fields = append(fields, name)
			}
		}
	}
	requireAll(t, "configuration field", fields, 12, func(s string) string { return s + ":" })
	guide := readGuide(t, GuideFile)
	for _, kind := range []string{configv1.KindKoordQueueConfiguration, configv1.KindKoordQueueControllersConfiguration} {
		if !mentions(guide, "kind: "+kind) {
			t.Errorf("%s has no example of a %s file", GuideFile, kind)
		}
	}
}

// TestGuideHasTheOriginalExamples requires every YAML example of the original
// guide (test/testdata/guide, kept verbatim) in the guide, as the same
// objects (comments may differ).
func TestGuideHasTheOriginalExamples(t *testing.T) {
	blocks, err := Blocks([]byte(readGuide(t, GuideFile)))
	if err != nil {
		t.Fatal(err)
	}
	var inGuide [][]any
	for _, b := range blocks {
		if b.Lang == "yaml" {
			docs, err := yamlDocs([]byte(b.Body))
			if err != nil {
				t.Fatalf("%s:%d: %v", GuideFile, b.Line, err)
			}
			inGuide = append(inGuide, docs)
		}
	}
	seeds, _ := filepath.Glob(filepath.Join(root, "test", "testdata", "guide", "*.yaml"))
	if len(seeds) < 10 {
		t.Fatalf("found %d examples in test/testdata/guide, want at least 10", len(seeds))
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := yamlDocs(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		found := false
		for _, got := range inGuide {
			if reflect.DeepEqual(got, want) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s does not hold the example %s as written", GuideFile, filepath.Base(p))
		}
	}
}

func yamlDocs(data []byte) ([]any, error) {
	var out []any
	for _, d := range bytes.Split(data, []byte("\n---\n")) {
		var v any
		if err := yaml.Unmarshal(d, &v); err != nil {
			return nil, err
		}
		if v != nil {
			out = append(out, v)
		}
	}
	return out, nil
}

type parsed struct {
	path string
	file *ast.File
}

// goFiles parses the non-test Go files under the given folders.
func goFiles(t *testing.T, dirs ...string) []parsed {
	t.Helper()
	var out []parsed
	fset := token.NewFileSet()
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			out = append(out, parsed{p, f})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// packageConsts maps the string constants of the files by name, and by
// package.Name for references from other packages.
func packageConsts(files []parsed) map[string]string {
	consts := map[string]string{}
	for _, f := range files {
		for _, d := range f.file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if v, ok := stringLit(vs.Values[i]); ok {
							consts[n.Name] = v
							consts[f.file.Name.Name+"."+n.Name] = v
						}
					}
				}
			}
		}
	}
	return consts
}

// resolve gives the value of a string literal or of a constant named by e.
func resolve(e ast.Expr, consts map[string]string) (string, bool) {
	if s, ok := stringLit(e); ok {
		return s, true
	}
	switch x := e.(type) {
	case *ast.Ident:
		v, ok := consts[x.Name]
		return v, ok
	case *ast.SelectorExpr:
		if pkg, ok := x.X.(*ast.Ident); ok {
			if v, ok := consts[pkg.Name+"."+x.Sel.Name]; ok {
				return v, true
			}
		}
		v, ok := consts[x.Sel.Name]
		return v, ok
	}
	return "", false
}

func stringLit(n ast.Node) (string, bool) {
	lit, ok := n.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
