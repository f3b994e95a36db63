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

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/docs"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

// minPlayedBlocks is the least number of blocks of the user guide the suite
// must play: a marker typo must not skip the guide silently.
const minPlayedBlocks = 30

// blockTimeout bounds one played command block; the guide's own kubectl wait
// commands carry shorter timeouts.
const blockTimeout = 3 * time.Minute

// guideEnv names the guide TestUserGuide plays, relative to the repository
// root; unset, docs.GuideFile. make test-e2e-guide-zh sets docs.GuideFileZH,
// whose blocks are the same (a unit test of package docs says so).
const guideEnv = "KOORD_QUEUE_GUIDE"

func guideFile() string {
	if f := os.Getenv(guideEnv); f != "" {
		return f
	}
	return docs.GuideFile
}

// TestUserGuide plays the user guide (docs/user-guide.md, or the one
// KOORD_QUEUE_GUIDE names) from top to bottom on the local cluster: YAML
// blocks marked e2e are applied with kubectl (or saved under their file= name
// for a later command), command blocks marked e2e run in bash with the
// suite's kubectl and kubeconfig, and an e2e-output block after a command
// lists lines its output must contain. The guide's own kubectl wait commands
// are its checks; any failing command fails the test.
func TestUserGuide(t *testing.T) {
	file := guideFile()
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(repoRoot(), file)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := docs.Blocks(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	played := 0
	for _, b := range blocks {
		if b.Play {
			played++
		}
	}
	if played < minPlayedBlocks {
		t.Fatalf("%s has %d blocks marked %s, want at least %d: a marker typo?", file, played, docs.MarkPlay, minPlayedBlocks)
	}

	work := t.TempDir()
	bin := filepath.Join(work, ".bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(env.Kubectl, filepath.Join(bin, "kubectl")); err != nil {
		t.Fatal(err)
	}
	if usesPlugin(blocks) {
		// The cluster builds the plugin beside koord-queue; else build it.
		if built := filepath.Join(env.BinDir, cluster.PluginBinary); env.BinDir != "" && fileExists(built) {
			if err := os.Symlink(built, filepath.Join(bin, cluster.PluginBinary)); err != nil {
				t.Fatal(err)
			}
		} else {
			buildPlugin(t, bin)
		}
	}
	shellEnv := append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	// Other tests of the suite apply some of the same examples: start from
	// a cluster without the guide's objects.
	removeGuideObjects(t, file, blocks)

	began := time.Now()
	for i, b := range blocks {
		if !b.Play {
			continue
		}
		where := fmt.Sprintf("%s:%d (%s)", file, b.Line, b.Section)
		switch {
		case b.Lang == "yaml" && b.File != "":
			if err := os.WriteFile(filepath.Join(work, b.File), []byte(b.Body), 0o644); err != nil {
				t.Fatal(err)
			}
		case b.Lang == "yaml":
			out := runBlock(t, where, work, shellEnv, "kubectl apply -f - <<'GUIDE_EOF'\n"+b.Body+"GUIDE_EOF\n")
			t.Logf("%s: kubectl apply -f -\n%s", where, out)
		case b.Command():
			start := time.Now()
			out := runBlock(t, where, work, shellEnv, b.Body)
			t.Logf("%s, %s:\n%s%s", where, time.Since(start).Round(100*time.Millisecond), b.Body, indent(out))
			if i+1 < len(blocks) && blocks[i+1].Output {
				if missing := docs.MissingOutput(blocks[i+1].Body, out); len(missing) > 0 {
					t.Fatalf("%s: the output lacks the lines the guide shows at line %d:\n%s\noutput:\n%s",
						where, blocks[i+1].Line, strings.Join(missing, "\n"), out)
				}
			}
		}
	}
	t.Logf("played %d blocks of %s in %s", played, file, time.Since(began).Round(time.Second))
}

// runBlock runs a block in bash (errexit, pipefail) in dir and returns its
// combined output; a failure stops the test.
func runBlock(t *testing.T, where, dir string, environ []string, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctxFor(t), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = environ
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s\noutput:\n%s", where, err, script, out)
	}
	return string(out)
}

// pluginPackage is the kubectl plugin; kubectl finds kubectl-koord_queue on
// PATH and runs it for `kubectl koord-queue`.
const pluginPackage = "./cmd/" + cluster.PluginBinary

func usesPlugin(blocks []docs.Block) bool {
	for _, b := range blocks {
		if b.Play && b.Command() && strings.Contains(b.Body, "kubectl koord-queue") {
			return true
		}
	}
	return false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// buildPlugin builds the kubectl plugin into dir, as a user installs it.
func buildPlugin(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.CommandContext(ctxFor(t), "go", "build", "-o", filepath.Join(dir, cluster.PluginBinary), pluginPackage)
	cmd.Dir = repoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pluginPackage, err, out)
	}
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "  | " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  | ") + "\n"
}

// removeGuideObjects deletes every object of the guide's played YAML blocks
// (and, for a Job, its QueueUnit; for an ElasticQuota, its Queue) and waits
// until they are gone. Quotas and Queues go last, children before parents, once the
// pods charged to them are gone: koord-manager's webhook refuses to delete
// a quota that pods use or that has children.
func removeGuideObjects(t *testing.T, file string, blocks []docs.Block) {
	t.Helper()
	// Queues go with the quotas: a Queue named like a quota that still
	// exists comes back, and a hand-written one stays when its quota goes.
	var objs, quotas, queues []*unstructured.Unstructured
	for _, b := range blocks {
		if !b.Play || b.Lang != "yaml" {
			continue
		}
		decoded, err := cluster.DecodeObjects([]byte(b.Body))
		if err != nil {
			t.Fatalf("%s:%d: %v", file, b.Line, err)
		}
		for _, o := range decoded {
			if o.GetNamespace() == "" && o.GetKind() != "Namespace" {
				o.SetNamespace("default")
			}
			switch o.GetKind() {
			case "ElasticQuota":
				quotas = append(quotas, o)
			case "Queue":
				queues = append(queues, o)
			default:
				objs = append(objs, o)
			}
		}
	}
	deleteAndWait(t, objs)
	for _, q := range quotas {
		eventually(t, "no pod charged to quota "+q.GetName()+" before it is deleted", func(ctx context.Context) (bool, error) {
			pods := &corev1.PodList{}
			if err := env.Client.List(ctx, pods, client.MatchingLabels{schedv1alpha1.QuotaNameLabel: q.GetName()}); err != nil {
				return false, err
			}
			return len(pods.Items) == 0, nil
		})
	}
	slices.Reverse(quotas)
	deleteAndWait(t, append(quotas, queues...))
}

// deleteAndWait deletes objs in order and waits until they, the QueueUnits
// of the Jobs and the Queues of the ElasticQuotas among them are gone.
func deleteAndWait(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := ctxFor(t)
	var gone []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ElasticQuota" {
			// A child's deletion must be seen before its parent's.
			eventually(t, fmt.Sprintf("ElasticQuota %s/%s deleted", o.GetNamespace(), o.GetName()), func(ctx context.Context) (bool, error) {
				err := env.Client.Delete(ctx, o)
				return err == nil || apierrors.IsNotFound(err) || isNoMatch(err), nil
			})
		} else {
			err := env.Client.Delete(ctx, o, client.PropagationPolicy("Background"))
			if err != nil && !apierrors.IsNotFound(err) && !isNoMatch(err) {
				t.Fatalf("delete %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
			}
		}
		gone = append(gone, o)
		switch o.GetKind() {
		case "Job":
			gone = append(gone, objectRef("scheduling.x-k8s.io/v1alpha1", "QueueUnit", o.GetNamespace(), o.GetName()))
		case "ElasticQuota":
			gone = append(gone, objectRef("scheduling.x-k8s.io/v1alpha1", "Queue", "koord-queue", o.GetName()))
		}
	}
	for _, o := range gone {
		eventually(t, fmt.Sprintf("%s %s/%s gone before the guide is played", o.GetKind(), o.GetNamespace(), o.GetName()),
			func(ctx context.Context) (bool, error) {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(o.GroupVersionKind())
				err := get(ctx, o.GetNamespace(), o.GetName(), u)
				if apierrors.IsNotFound(err) || isNoMatch(err) {
					return true, nil
				}
				return false, err
			})
	}
}

func objectRef(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// isNoMatch reports an object of a kind the cluster does not serve.
func isNoMatch(err error) bool { return meta.IsNoMatchError(err) }
