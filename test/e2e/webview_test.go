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
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

// chromiumPath is CHROMIUM or Debian's /usr/bin/chromium, which
// hack/chromium.sh installs (make test-e2e runs it).
func chromiumPath(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CHROMIUM")
	if bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no Chromium at %s (%v): run hack/chromium.sh, which installs Debian's package, or set CHROMIUM", bin, err)
	}
	return bin
}

// screenshotDir is where the browser test keeps its screenshots:
// E2E_OUTPUT/webview, by default _output/e2e/webview in the checkout.
func screenshotDir(t *testing.T) string {
	t.Helper()
	base := os.Getenv("E2E_OUTPUT")
	if base == "" {
		base = filepath.Join(repoRoot(), "_output", "e2e")
	}
	dir := filepath.Join(base, "webview")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// apiProxy starts `kubectl proxy` on a free loopback port, as the user
// guide says to open the web view: as the suite's admin or, with user set,
// impersonating that user (--as), so the browser sees what that person sees.
// It returns the proxy's base URL.
func apiProxy(t *testing.T, user string) string {
	t.Helper()
	args := []string{"proxy", "--port=0", "--address=127.0.0.1"}
	if user != "" {
		args = append(args, "--as="+user)
	}
	cmd := exec.Command(env.Kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// kubectl prints "Starting to serve on 127.0.0.1:PORT" once it listens.
	line, err := bufio.NewReader(out).ReadString('\n')
	_, addr, ok := strings.Cut(strings.TrimSpace(line), "Starting to serve on ")
	if err != nil || !ok {
		t.Fatalf("kubectl %s: %q, %v\n%s", strings.Join(args, " "), line, err, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return "http://" + addr
}

// page is one browser tab on the web view.
type page struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string
}

// openBrowser starts headless Chromium with a fresh profile, the flags a
// closed network needs (no background fetches, no QUIC), and one tab.
func openBrowser(t *testing.T, base string) *page {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	p := &page{t: t, ctx: ctx, base: base, dir: screenshotDir(t)}
	// The first run starts the browser; it gets no deadline of its own.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+cluster.WebViewPath)); err != nil {
		t.Fatalf("open %s%s: %v", base, cluster.WebViewPath, err)
	}
	return p
}

// show switches the page to route (hash routing: no reload) and waits until
// the page has drawn it.
func (p *page) show(route string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`location.hash = %q; delete document.body.dataset.loaded; true`, route))
	p.waitFor("route "+route+" drawn", `document.body.dataset.loaded !== undefined`)
}

func (p *page) eval(js string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](js)); err != nil {
		p.t.Fatalf("evaluate %s: %v", js, err)
	}
}

// value evaluates js and returns its result.
func value[T any](p *page, js string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitFor polls the predicate in the page until it holds; on timeout it
// keeps a screenshot of what the page showed and fails.
func (p *page) waitFor(what, predicate string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](predicate,
		chromedp.WithPollingInterval(poll), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		p.screenshot("failed-" + strings.NewReplacer(" ", "-", "/", "-").Replace(what))
		text := value[string](p, `document.body.innerText`)
		p.t.Fatalf("the page never showed %s (%v); it shows:\n%s", what, err, text)
	}
}

// screenshot keeps the whole page as NAME.png under the test output.
func (p *page) screenshot(name string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(p.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	p.t.Logf("screenshot: %s", path)
}

// TestWebView drives headless Chromium through the web view on the local
// cluster and checks what a person sees: a quota used to its max shows a
// full bar, the queue lists its units in order with why they wait, a unit
// page names the quota that is short and the units ahead, a unit admitted by
// the scheduler leaves the pending list without a reload, and a tenant sees
// only its namespace's units and is refused another tenant's unit.
func TestWebView(t *testing.T) {
	start := time.Now()
	const quotaName, nsA, nsB, tenant = "webview-q", "e2e-webview-a", "e2e-webview-b", "e2e-webview-tenant"
	for _, ns := range []string{nsA, nsB} {
		create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	create(t, &eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: quotaName, Namespace: nsA,
			Annotations: map[string]string{eqv1alpha1.NamespacesAnnotation: `["` + nsA + `","` + nsB + `"]`}},
		Spec: eqv1alpha1.ElasticQuotaSpec{Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
	})
	eventually(t, "Queue koord-queue/"+quotaName, func(ctx context.Context) (bool, error) {
		return get(ctx, schedv1alpha1.QueueNamespace, quotaName, &schedv1alpha1.Queue{}) == nil, nil
	})
	jobIn := func(ns, name, priority string) {
		j := suspendedJob(name, quotaName, "1", 10*time.Minute)
		j.Namespace = ns
		j.Annotations = map[string]string{schedv1alpha1.PriorityAnnotation: priority}
		create(t, j)
	}
	jobIn(nsA, "holder", "9")
	waitPhase(t, nsA, "holder", "dequeued", admitted)
	jobIn(nsA, "waiter", "3")
	jobIn(nsB, "other", "2")
	eventually(t, "both to say why they wait", func(ctx context.Context) (bool, error) {
		for _, u := range [][2]string{{nsA, "waiter"}, {nsB, "other"}} {
			qu, err := queueUnit(ctx, u[0], u[1])
			if err != nil || qu.Status.Message == "" {
				return false, err
			}
		}
		return true, nil
	})
	// The tenant may read QueueUnits in nsB only.
	create(t, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "queueunit-reader", Namespace: nsB},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{schedv1alpha1.GroupVersion.Group},
			Resources: []string{"queueunits"}, Verbs: []string{"get", "list", "watch"}}},
	})
	create(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: tenant, Namespace: nsB},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "queueunit-reader"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: tenant}},
	})

	admin := openBrowser(t, apiProxy(t, ""))
	t.Logf("browser up after %s", time.Since(start).Round(time.Millisecond))

	t.Run("a full quota shows a full bar", func(t *testing.T) {
		admin.t = t
		admin.show("#/quotas")
		bar := fmt.Sprintf(`document.querySelector('[data-quota=%q] [data-resource="cpu"] .bar')`, quotaName)
		admin.waitFor("quota "+quotaName+" with a cpu bar", bar+` !== null`)
		// What a person sees: the drawn fill spans the drawn bar.
		ratio := value[float64](admin, `(() => { const b = `+bar+`; return b.querySelector('.used').getBoundingClientRect().width / b.getBoundingClientRect().width; })()`)
		if ratio < 0.99 || ratio > 1.01 {
			t.Errorf("cpu bar of %s filled to %.2f of its width, want all of it (1 used of max 1)", quotaName, ratio)
		}
		text := value[string](admin, fmt.Sprintf(`document.querySelector('[data-quota=%q]').innerText`, quotaName))
		for _, want := range []string{"1 / 0 / 1", "full", "2 pending", "1 admitted"} {
			if !strings.Contains(text, want) {
				t.Errorf("quota %s shows %q, lacking %q", quotaName, text, want)
			}
		}
		admin.screenshot("quotas")
	})

	t.Run("the queues list names the head and why it waits", func(t *testing.T) {
		admin.t = t
		admin.show("#/queues")
		row := fmt.Sprintf(`document.querySelector('tr[data-queue=%q]')`, quotaName)
		admin.waitFor("queue row "+quotaName, row+` !== null && `+row+`.innerText.includes('`+nsA+`/waiter')`)
		cells := value[[]string](admin, `Array.from(`+row+`.cells).map(c => c.innerText.trim())`)
		// Queue, policy, priority, pending, admitted, head, why.
		if len(cells) != 7 || cells[1] != "Priority" || cells[3] != "2" || cells[4] != "1" || cells[5] != nsA+"/waiter" || cells[6] == "" {
			t.Errorf("queue row %q", cells)
		}
		admin.screenshot("queues")
	})

	t.Run("a unit page says why, what is short and who is ahead", func(t *testing.T) {
		admin.t = t
		admin.show("#/queues/" + quotaName)
		admin.waitFor("both pending", `document.querySelectorAll('#pending tbody tr').length === 2`)
		order := value[[]string](admin, `Array.from(document.querySelectorAll('#pending tbody tr')).map(r => r.cells[0].innerText + ' ' + r.dataset.unit)`)
		if strings.Join(order, ", ") != "1 "+nsA+"/waiter, 2 "+nsB+"/other" {
			t.Errorf("pending list %q, want waiter then other", order)
		}
		admin.screenshot("queue")
		// Follow the link, as a person would.
		ctx, cancel := context.WithTimeout(admin.ctx, timeout)
		err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`delete document.body.dataset.loaded`),
			chromedp.Click(chromedp.CSS(fmt.Sprintf(`#pending a[data-unit-link=%q]`, nsB+"/other"))))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		admin.waitFor("the unit page of other", `document.body.dataset.loaded !== undefined && document.querySelector('#unit') !== null`)
		if h := value[string](admin, `location.hash`); h != "#/units/"+nsB+"/other" {
			t.Errorf("the link led to %s", h)
		}
		admin.waitFor("other's position", `document.querySelector('[data-col="position"]').innerText === '2 of 2'`)
		why := value[string](admin, `document.querySelector('[data-col="why"]').innerText`)
		short := value[string](admin, fmt.Sprintf(`(document.querySelector('#quota-path [data-quota=%q] [data-resource="cpu"] .short') || {}).innerText || ''`, quotaName))
		ahead := value[[]string](admin, `Array.from(document.querySelectorAll('#ahead a')).map(a => a.innerText)`)
		if why == "" || why == "no reason given yet" || strings.TrimSpace(short) != "short 1" || strings.Join(ahead, " ") != nsA+"/waiter" {
			t.Errorf("unit page: why %q, cpu %q, ahead %q; want a reason, short 1, waiter ahead", why, short, ahead)
		}
		admin.screenshot("unit")
		admin.show("#/units/" + nsA + "/waiter")
		if next := value[string](admin, `document.querySelector('[data-col="next"]').innerText`); next != nsB+"/other" {
			t.Errorf("waiter's next unit %q, want %s/other", next, nsB)
		}
	})

	t.Run("a tenant sees only its namespace and is refused another's unit", func(t *testing.T) {
		p := openBrowser(t, apiProxy(t, tenant))
		p.show("#/queues/" + quotaName)
		// The visibility server caches access decisions for a few seconds.
		p.waitFor("the tenant's pending list", `document.querySelectorAll('#pending tbody tr').length === 1`)
		rows := value[[]string](p, `Array.from(document.querySelectorAll('#pending tbody tr')).map(r => r.cells[0].innerText + ' ' + r.dataset.unit)`)
		if strings.Join(rows, ", ") != "2 "+nsB+"/other" {
			t.Errorf("tenant's pending list %q, want only %s/other at 2", rows, nsB)
		}
		if body := value[string](p, `document.body.innerText`); strings.Contains(body, nsA+"/") {
			t.Errorf("the tenant sees a unit of %s:\n%s", nsA, body)
		}
		p.screenshot("tenant-queue")
		p.show("#/units/" + nsA + "/waiter")
		p.waitFor("forbidden", `document.querySelector('#forbidden') !== null`)
		if text := value[string](p, `document.querySelector('#forbidden').innerText`); !strings.HasPrefix(text, "Forbidden") {
			t.Errorf("forbidden unit page says %q", text)
		}
		p.screenshot("tenant-forbidden")
	})

	t.Run("a unit admitted by the scheduler leaves the pending list live", func(t *testing.T) {
		admin.t = t
		admin.show("#/queues/" + quotaName)
		admin.waitFor("waiter pending", fmt.Sprintf(`document.querySelector('#pending tr[data-unit=%q]') !== null`, nsA+"/waiter"))
		loads := value[string](admin, `document.body.dataset.loaded`)
		// Free the quota: the scheduler admits waiter, the first in line.
		if err := env.Client.Delete(ctxFor(t), &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "holder", Namespace: nsA}},
			client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		waitPhase(t, nsA, "waiter", "admitted", admitted)
		admin.waitFor("waiter out of the pending list and admitted",
			fmt.Sprintf(`document.querySelector('#pending tr[data-unit=%q]') === null && document.querySelector('#admitted tr[data-unit=%q]') !== null`, nsA+"/waiter", nsA+"/waiter"))
		// Redrawn by polling in the same document, never reloaded.
		if now := value[string](admin, `document.body.dataset.loaded`); now == loads {
			t.Errorf("the page was not redrawn (generation %s)", now)
		}
		if nav := value[int](admin, `performance.getEntriesByType('navigation').length`); nav != 1 {
			t.Errorf("%d navigations, want the first only", nav)
		}
		admin.screenshot("admitted")
	})
	t.Logf("browser test took %s", time.Since(start).Round(time.Millisecond))
}
