package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The koord-queue binaries, as built from cmd/.
const (
	QueueBinary       = "koord-queue"
	ControllersBinary = "koord-queue-controllers"
)

// KoordQueueBuildable reports whether the checkout has both main packages
// (a folder with Go files under cmd/ for each binary).
func KoordQueueBuildable(repoRoot string) bool {
	for _, b := range []string{QueueBinary, ControllersBinary} {
		files, _ := filepath.Glob(filepath.Join(repoRoot, "cmd", b, "*.go"))
		if len(files) == 0 {
			return false
		}
	}
	return true
}

// PluginBinary is the kubectl plugin, built beside the two binaries when the
// checkout has it, so that `kubectl koord-queue` works with the bin folder on
// PATH.
const PluginBinary = "kubectl-koord_queue"

// BuildKoordQueue builds both binaries (and the kubectl plugin when present)
// from repoRoot into outDir.
func BuildKoordQueue(ctx context.Context, repoRoot, outDir string) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	pkgs := []string{"./cmd/" + QueueBinary, "./cmd/" + ControllersBinary}
	if files, _ := filepath.Glob(filepath.Join(repoRoot, "cmd", PluginBinary, "*.go")); len(files) > 0 {
		pkgs = append(pkgs, "./cmd/"+PluginBinary)
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", outDir + string(os.PathSeparator)}, pkgs...)...)
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
}

func (c *Cluster) startKoordQueue(ctx context.Context) error {
	kq := c.opts.KoordQueue
	switch {
	case kq.Mode == KoordQueueOff:
		return nil
	case kq.RepoRoot == "":
		return fmt.Errorf("KoordQueue.RepoRoot is not set: the koord-queue binaries are built from a checkout")
	case !KoordQueueBuildable(kq.RepoRoot):
		if kq.Mode == KoordQueueAuto {
			c.logf("cmd/%s or cmd/%s does not exist yet: running without koord-queue", QueueBinary, ControllersBinary)
			return nil
		}
		return fmt.Errorf("cmd/%s and cmd/%s are needed in %s", QueueBinary, ControllersBinary, kq.RepoRoot)
	}
	bin := filepath.Join(c.opts.StateDir, "bin")
	c.BinDir = bin
	began := time.Now()
	c.logf("building %s and %s", QueueBinary, ControllersBinary)
	if err := BuildKoordQueue(ctx, kq.RepoRoot, bin); err != nil {
		return err
	}
	c.logf("built in %s", time.Since(began).Round(100*time.Millisecond))

	ports := c.opts.Ports
	queueArgs := []string{
		"--kubeconfig", c.Kubeconfig,
		"--leader-elect=false",
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(ports.QueueMetrics),
		// A local cluster on loopback: plain HTTP that curl, the tests and the
		// dashboard check scrape without a token.
		"--metrics-secure=false",
		// The visibility aggregated API, registered below as the chart does.
		"--enableVisibilityServer",
		"--visibility-bind-address", "127.0.0.1:" + strconv.Itoa(ports.Visibility),
		"--visibility-cert-dir", c.pki.visibilityDir,
	}
	if kq.Config != "" {
		queueArgs = append(queueArgs, "--config", kq.Config)
	}
	queue, err := c.run(QueueBinary, filepath.Join(bin, QueueBinary), append(queueArgs, kq.ExtraQueueArgs...)...)
	if err != nil {
		return err
	}
	ctrlArgs := []string{
		"--kubeconfig", c.Kubeconfig,
		"--leader-elect=false",
		"--enabled-extensions", strings.Join(kq.Extensions, ","),
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(ports.ControllersMetrics),
		"--metrics-secure=false",
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(ports.ControllersHealth),
	}
	ctrlArgs = append(ctrlArgs, c.webhookArgs()...)
	if err := c.installWebhook(ctx, kq.Extensions); err != nil {
		return err
	}
	ctrl, err := c.run(ControllersBinary, filepath.Join(bin, ControllersBinary), append(ctrlArgs, kq.ExtraControllersArgs...)...)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: time.Second}
	get := func(url string) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) {
			resp, err := hc.Get(url)
			if err != nil {
				return false, err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return false, fmt.Errorf("%s: %s", url, resp.Status)
			}
			return true, nil
		}
	}
	if err := c.waitFor(ctx, QueueBinary+" metrics endpoint", time.Minute,
		get(fmt.Sprintf("http://127.0.0.1:%d/metrics", ports.QueueMetrics)), queue, ctrl); err != nil {
		return err
	}
	if err := c.waitFor(ctx, ControllersBinary+" readiness probe", time.Minute,
		get(fmt.Sprintf("http://127.0.0.1:%d/readyz", ports.ControllersHealth)), queue, ctrl); err != nil {
		return err
	}
	if err := c.registerVisibility(ctx, queue); err != nil {
		return err
	}
	c.QueueRunning = true
	return nil
}
