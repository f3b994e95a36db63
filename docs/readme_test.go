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
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeLayoutNamesEveryPackage fails when a package under pkg/ or cmd/
// is missing from the README's layout table.
func TestReadmeLayoutNamesEveryPackage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, "## Layout")
	if start < 0 {
		t.Fatal("README.md has no Layout section")
	}
	layout := readme[start:]
	if end := strings.Index(layout[1:], "\n## "); end >= 0 {
		layout = layout[:end+1]
	}
	dirs := map[string]bool{}
	for _, top := range []string{"pkg", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				rel, _ := filepath.Rel(root, filepath.Dir(p))
				dirs[filepath.ToSlash(rel)] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for dir := range dirs {
		if !strings.Contains(layout, "`"+dir+"`") {
			t.Errorf("README.md's layout table does not name `%s`", dir)
		}
	}
}
