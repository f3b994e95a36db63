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

package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// Options are the knobs of one run.
type Options struct {
	// Config is the generator config.
	Config *Config
	// OutputDir receives summary.yaml, the CSVs, the scheduler's config and log.
	OutputDir string
	// QPS and Burst are koord-queue's --qps and --burst.
	QPS   float32
	Burst int
	// Binary is a prebuilt koord-queue; empty builds ./cmd/koord-queue.
	Binary string
	// ExtensionWorkers write the fake extension's status changes.
	ExtensionWorkers int
	// ExtraArgs are appended to koord-queue's command line.
	ExtraArgs []string
	// Log receives progress lines.
	Log io.Writer
	// Mode is ModeDefault or ModeKueue (Kueue-equivalent runs).
	Mode Mode
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, "perf: "+format+"\n", args...)
	}
}

// Run performs one run and writes its results into o.OutputDir. The summary
// is returned (and written) even when units did not all finish in time.
func Run(ctx context.Context, o Options) (*Summary, error) {
	cfg := o.Config
	if o.ExtensionWorkers < 1 {
		o.ExtensionWorkers = 16
		if o.kueue() {
			o.ExtensionWorkers = KueueExtensionWorkers
		}
	}
	if err := os.MkdirAll(o.OutputDir, 0o755); err != nil {
		return nil, err
	}
	root := framework.RepoRoot()
	if err := ensureAssets(root); err != nil {
		return nil, err
	}
	bin := o.Binary
	if bin == "" {
		bin = filepath.Join(o.OutputDir, "koord-queue")
		began := time.Now()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/koord-queue")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/koord-queue: %w\n%s", err, out)
		}
		o.logf("built koord-queue in %s", time.Since(began).Round(100*time.Millisecond))
	}

	env, err := framework.Start(o.frameworkOptions()...)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			o.logf("stop control plane: %v", err)
		}
	}()
	kubeconfig := filepath.Join(o.OutputDir, "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		return nil, err
	}
	schedCfg := filepath.Join(o.OutputDir, "koord-queue-config.yaml")
	if err := os.WriteFile(schedCfg, []byte(cfg.SchedulerConfig()), 0o644); err != nil {
		return nil, err
	}

	// The harness's own client must never be the bottleneck.
	hcfg := rest.CopyConfig(env.Config)
	hcfg.QPS, hcfg.Burst = 100000, 100000
	if o.kueue() {
		hcfg.QPS, hcfg.Burst = kueueHarnessQPS, kueueHarnessBurst
	}
	hcfg.UserAgent = "koord-queue-perf-harness"
	c, err := client.New(hcfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, err
	}
	if err := createQuotas(ctx, c, cfg); err != nil {
		return nil, err
	}

	port, err := freePort()
	if err != nil {
		return nil, err
	}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	args := append([]string{
		"--kubeconfig", kubeconfig, "--leader-elect=false",
		// Loopback only: the harness scrapes plain HTTP without a token.
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(port), "--metrics-secure=false",
		"--qps", strconv.FormatFloat(float64(o.QPS), 'f', -1, 32), "--burst", strconv.Itoa(o.Burst),
		"--config", schedCfg,
	}, o.ExtraArgs...)
	kq, err := startProcess(bin, args, filepath.Join(o.OutputDir, "koord-queue.log"))
	if err != nil {
		return nil, err
	}
	defer kq.stop()
	if err := waitFor(ctx, time.Minute, kq, func() error { _, err := scrape(metricsURL); return err }); err != nil {
		return nil, fmt.Errorf("koord-queue /metrics never answered (log in %s): %w", o.OutputDir, err)
	}
	if err := waitFor(ctx, time.Minute, kq, func() error { return queuesReady(ctx, c, cfg) }); err != nil {
		return nil, fmt.Errorf("auto-created Queues: %w", err)
	}
	o.logf("koord-queue (pid %d) is up, %d quotas and their queues exist", kq.cmd.Process.Pid, cfg.Parents.Count*(1+cfg.Children.Count))

	rec := newRecorder(cfg)
	ext := newExtension(c, rec)
	ext.kueue = o.kueue()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ca, err := cache.New(hcfg, cache.Options{Scheme: scheme.New(), DefaultNamespaces: map[string]cache.Config{cfg.Namespace: {}}})
	if err != nil {
		return nil, err
	}
	if err := ext.start(runCtx, ca); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = ca.Start(runCtx) })
	if !ca.WaitForCacheSync(runCtx) {
		return nil, errors.New("harness cache did not sync")
	}
	wg.Go(func() { ext.run(runCtx, o.ExtensionWorkers) })

	before, err := scrape(metricsURL)
	if err != nil {
		return nil, err
	}
	s := &Summary{Config: cfg.Name, Setup: Setup{
		QPS: o.QPS, Burst: o.Burst, ExtensionWorkers: o.ExtensionWorkers, KoordQueueArgs: args[2:],
		Commit: gitCommit(root), ServerVersion: env.ServerVersion, Machine: describeMachine(runtime.NumCPU()), StartedAt: time.Now().UTC().Truncate(time.Second),
		LoadAverageStart: loadAverage(), Mode: string(o.Mode), APIServerInflight: o.inflight(),
	}}
	cpuBefore := machineCPU(kq.cmd.Process.Pid)
	writesBefore, writesOK := apiServerWrites(runCtx, hcfg)
	origin := time.Now()
	o.logf("creating %d units (%s)", cfg.Units(), cfg.Name)
	createErr := make(chan error, 1)
	wg.Go(func() {
		if o.kueue() {
			createErr <- generateKueue(runCtx, c, cfg, rec)
			return
		}
		createErr <- generate(runCtx, c, cfg, rec, origin)
	})

	deadline := time.NewTimer(cfg.Timeout.Duration)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
wait:
	for {
		select {
		case <-rec.allDone:
			break wait
		case <-deadline.C:
			s.TimedOut = true
			break wait
		case err := <-createErr:
			if err != nil {
				cancel()
				return nil, fmt.Errorf("create units: %w", err)
			}
		case <-kq.exited:
			return nil, fmt.Errorf("koord-queue exited during the run: %w (log in %s)", kq.err, o.OutputDir)
		case <-tick.C:
			done, running, pending := rec.progress()
			o.logf("%5.0fs done %d, admitted %d, pending %d", time.Since(origin).Seconds(), done, running, pending)
		case <-ctx.Done():
			// Interrupted: still write what was measured so far.
			s.TimedOut, s.Interrupted = true, true
			break wait
		}
	}
	end := time.Now()
	// The final reads must work after an interrupt too.
	fin, finCancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer finCancel()
	// koord-queue writes its events at its own pace: count them once none waits.
	evWait := waitEventsWritten(context.WithoutCancel(ctx), metricsURL)
	after, err := scrape(metricsURL)
	if err != nil {
		return nil, fmt.Errorf("final scrape: %w", err)
	}
	ps, err := readProc(kq.cmd.Process.Pid)
	if err != nil {
		return nil, fmt.Errorf("read koord-queue's /proc: %w", err)
	}
	cpuAfter := machineCPU(kq.cmd.Process.Pid)
	if o.kueue() {
		// Kueue's wall time and rusage end with the scheduler's exit.
		kq.stop()
	}
	writesAfter, writesAfterOK := apiServerWrites(fin, hcfg)
	events, err := countEvents(fin, c, cfg.Namespace)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	s.Setup.LoadAverageEnd = loadAverage()
	if s.TimedOut {
		if s.Unfinished, err = unfinished(fin, c, cfg.Namespace); err != nil {
			return nil, fmt.Errorf("list unfinished units: %w", err)
		}
	}
	cancel()

	tl := rec.freeze(end)
	s.fill(cfg, tl, end)
	s.fillProcess(before, after, ps)
	if o.kueue() {
		s.fillKueue(cfg, tl, kq, after)
	}
	s.CPU = cpuAfter.minus(cpuBefore, end.Sub(origin).Seconds(), s.Setup.Machine.NProc)
	if writesOK && writesAfterOK {
		s.CPU.apiBound(writesAfter-writesBefore, s.Units, s.Setup.Machine.NProc, s.WallSeconds)
	}
	s.API.UnitStatusWrites = ext.schedulerUnitWrites()
	s.API.EventsByReason = events
	for _, n := range events {
		s.API.Events += n
	}
	s.Events = checkEvents(s, events, evWait)
	if s.Admissions > 0 {
		s.API.UnitStatusWritesPerAdmission = round(float64(s.API.UnitStatusWrites)/float64(s.Admissions), 3)
		s.API.EventsPerAdmission = round(float64(s.API.Events)/float64(s.Admissions), 3)
	}
	s.HarnessWriteErrors, err = ext.errors()
	if err != nil {
		s.HarnessLastError = err.Error()
	}
	if err := s.write(o.OutputDir, tl, origin); err != nil {
		return s, err
	}
	o.logf("wrote %s", filepath.Join(o.OutputDir, "summary.yaml"))
	return s, nil
}

// fillProcess computes the figures from /metrics and /proc.
func (s *Summary) fillProcess(before, after []sample, ps procStats) {
	during := requestCounts(after).minus(requestCounts(before))
	s.API = APIFigures{
		Writes: during.writes(), ByMethod: during.byMethod, ByCode: during.byCode,
		WritesBeforeWorkload: requestCounts(before).writes(),
	}
	for _, v := range during.byMethod {
		s.API.Requests += v
	}
	if s.Admissions > 0 {
		s.API.WritesPerAdmission = round(s.API.Writes/float64(s.Admissions), 3)
	}
	s.API.WritesPerUnit = round(s.API.Writes/float64(max(s.Units, 1)), 3)
	s.Process = ProcessFigures{
		UserCPUSeconds: ps.UserSeconds, SystemCPUSeconds: ps.SystemSeconds,
		CPUSecondsPerUnit: round((ps.UserSeconds+ps.SystemSeconds)/float64(max(s.Units, 1)), 5),
		PeakRSSMiB:        round(float64(ps.PeakRSSBytes)/(1<<20), 1),
	}
	b, okB := counterSum(before, PassesMetric)
	a, okA := counterSum(after, PassesMetric)
	if okA {
		s.Passes = PassFigures{Present: true, Total: a - b}
		if okB && s.WallSeconds > 0 {
			s.Passes.PerSecond = round((a-b)/s.WallSeconds, 2)
		}
	} else {
		s.Passes.Note = PassesMetric + " is not exported by this koord-queue"
	}
}

func createQuotas(ctx context.Context, c client.Client, cfg *Config) error {
	for _, ns := range []string{cfg.Namespace, "koord-queue"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	policy := schedv1alpha1.QueuePolicy(cfg.Policy)
	for p := range cfg.Parents.Count {
		pq := utiltesting.MakeElasticQuota(ParentName(p)).Namespace(cfg.Namespace).IsParent(true).Policy(policy)
		pq.Spec.Min, pq.Spec.Max = cpuList(cfg.Parents.Min), cpuList(cfg.Parents.Max)
		if cfg.PreemptionPolicy != "" {
			pq.Annotation(schedv1alpha1.PreemptionPolicyAnnotation, cfg.PreemptionPolicy)
		}
		if cfg.HoldRoomForHigherPriority {
			pq.Annotation(schedv1alpha1.HoldRoomAnnotation, "true")
		}
		if err := c.Create(ctx, pq.Obj()); err != nil {
			return fmt.Errorf("create quota %s: %w", ParentName(p), err)
		}
		for ch := range cfg.Children.Count {
			cq := utiltesting.MakeElasticQuota(ChildName(p, ch)).Namespace(cfg.Namespace).Parent(ParentName(p)).IsParent(false).Policy(policy)
			cq.Spec.Min, cq.Spec.Max = cpuList(cfg.Children.Min), cpuList(cfg.Children.Max)
			if cfg.PreemptionPolicy != "" {
				cq.Annotation(schedv1alpha1.PreemptionPolicyAnnotation, cfg.PreemptionPolicy)
			}
			if cfg.HoldRoomForHigherPriority {
				cq.Annotation(schedv1alpha1.HoldRoomAnnotation, "true")
			}
			if err := c.Create(ctx, cq.Obj()); err != nil {
				return fmt.Errorf("create quota %s: %w", ChildName(p, ch), err)
			}
		}
	}
	return nil
}

// queuesReady checks that every child quota has its auto-created Queue.
func queuesReady(ctx context.Context, c client.Client, cfg *Config) error {
	list := &schedv1alpha1.QueueList{}
	if err := c.List(ctx, list, client.InNamespace("koord-queue")); err != nil {
		return err
	}
	have := map[string]bool{}
	for _, q := range list.Items {
		have[q.Name] = true
	}
	for p := range cfg.Parents.Count {
		for ch := range cfg.Children.Count {
			if !have[ChildName(p, ch)] {
				return fmt.Errorf("queue %s not created yet (%d queues exist)", ChildName(p, ch), len(list.Items))
			}
		}
	}
	return nil
}

// generate creates every unit on its class's schedule, one goroutine per
// child quota and class, each unit at origin + i*interval.
func generate(ctx context.Context, c client.Client, cfg *Config, rec *Recorder, origin time.Time) error {
	return generateUnits(ctx, cfg, rec,
		func(k Class, i int) time.Duration {
			return time.Until(origin.Add(time.Duration(i) * k.Interval.Duration))
		},
		func(ctx context.Context, u *schedv1alpha1.QueueUnit) error { return createWithRetry(ctx, c, u) })
}

// generateUnits runs one goroutine per child quota and class; each waits
// wait(class, i) before it creates unit i with create, and records when it
// did. The first error stops the goroutine that met it and is returned.
func generateUnits(ctx context.Context, cfg *Config, rec *Recorder, wait func(k Class, i int) time.Duration, create func(context.Context, *schedv1alpha1.QueueUnit) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for p := range cfg.Parents.Count {
		for ch := range cfg.Children.Count {
			child := ChildName(p, ch)
			for _, k := range cfg.Classes {
				wg.Go(func() {
					for i := range k.Count {
						select {
						case <-ctx.Done():
							return
						case <-time.After(wait(k, i)):
						}
						name := unitName(child, k.Name, i)
						u := utiltesting.MakeQueueUnit(name, cfg.Namespace).Quota(child).Priority(k.Priority).PodSet("main", 1, "cpu", k.CPU.String()).Obj()
						u.Spec.Request = u.Spec.Resource.DeepCopy()
						rec.mu.Lock()
						rec.units[name].created = time.Now()
						rec.mu.Unlock()
						if err := create(ctx, u); err != nil {
							select {
							case errs <- fmt.Errorf("create %s: %w", name, err):
							default:
							}
							return
						}
					}
				})
			}
		}
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// createWithRetry retries what an overloaded API server may answer.
func createWithRetry(ctx context.Context, c client.Client, u *schedv1alpha1.QueueUnit) error {
	for attempt := 0; ; attempt++ {
		err := c.Create(ctx, u.DeepCopy())
		switch {
		case err == nil || apierrors.IsAlreadyExists(err) && attempt > 0:
			return nil
		case attempt < 10 && (apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsInternalError(err)):
			time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
		default:
			return err
		}
	}
}

// process is koord-queue running as a child.
type process struct {
	cmd    *exec.Cmd
	log    *os.File
	exited chan struct{}
	err    error
	// started is just after the process started; exitedAt when its exit
	// was seen.
	started, exitedAt time.Time
}

func startProcess(bin string, args []string, logPath string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group keeps a Ctrl-C for the runner from reaching it
	// (the runner still scrapes it then); it dies with the runner.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &process{cmd: cmd, log: f, exited: make(chan struct{}), started: time.Now()}
	go func() {
		p.err = cmd.Wait()
		p.exitedAt = time.Now()
		f.Close()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM, then SIGKILL after 10s, and waits for the exit.
func (p *process) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func waitFor(ctx context.Context, timeout time.Duration, p *process, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("koord-queue exited: %w", p.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ensureAssets points KUBEBUILDER_ASSETS at the tools folder when unset.
func ensureAssets(root string) error {
	if os.Getenv("KUBEBUILDER_ASSETS") != "" {
		return nil
	}
	out, err := exec.Command(filepath.Join(root, "hack", "tools.sh"), "dir").Output()
	if err != nil {
		return fmt.Errorf("KUBEBUILDER_ASSETS is unset and hack/tools.sh dir failed: %w", err)
	}
	return os.Setenv("KUBEBUILDER_ASSETS", strings.TrimSpace(string(out)))
}

// countEvents sums koord-queue's events in a namespace by reason.
func countEvents(ctx context.Context, c client.Client, ns string) (map[string]int, error) {
	list := &corev1.EventList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range list.Items {
		if e.Source.Component != "koord-queue" && e.ReportingController != "koord-queue" {
			continue
		}
		n := int(max(e.Count, 1))
		if e.Series != nil {
			n = int(max(e.Series.Count, 1))
		}
		out[e.Reason] += n
	}
	return out, nil
}

// unfinished counts the units not Succeed by phase, to see where a run stuck.
func unfinished(ctx context.Context, c client.Client, ns string) (map[string]int, error) {
	list := &schedv1alpha1.QueueUnitList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, u := range list.Items {
		if u.Status.Phase == schedv1alpha1.QueueUnitPhaseSucceed {
			continue
		}
		k := string(u.Status.Phase)
		if k == "" {
			k = "(none)"
		}
		if isEvicted(&u) {
			k += ",evicted"
		}
		out[k]++
	}
	return out, nil
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func gitCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--", "cmd", "pkg", "apis").Output(); err == nil && len(st) > 0 {
		commit += "-dirty"
	}
	return commit
}
