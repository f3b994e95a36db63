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
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
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
	"github.com/koordinator-sh/koord-queue/test/util/proc"
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

// stopGrace is how long koord-queue has to exit after SIGTERM.
const stopGrace = 10 * time.Second

// rssPeriod is how often koord-queue's VmHWM is read (RSSPeak).
const rssPeriod = 100 * time.Millisecond

func (o *Options) defaults() {
	if o.ExtensionWorkers < 1 {
		o.ExtensionWorkers = 16
		if o.kueue() {
			o.ExtensionWorkers = KueueExtensionWorkers
		}
	}
}

// run carries one run through its steps.
type run struct {
	Options
	cfg       *Config
	root, bin string
	env       *framework.Env
	// hcfg and c are the harness's own, never the bottleneck.
	hcfg       *rest.Config
	c          client.Client
	args       []string
	metricsURL string
	kq         *proc.Process
	rec        *Recorder
	ext        *extension
	s          *Summary
	// The measured window: from origin to end, with readings at both.
	origin, end               time.Time
	before, after             []sample
	cpuBefore, cpuAfter       cpuReading
	writesBefore, writesAfter float64
	writesOK                  bool
	ps                        procStats
	rss                       *RSSPeak
	events                    map[string]int
	evWait                    eventWait
}

// Run performs one run and writes its results into o.OutputDir. The summary
// is returned (and written) even when units did not all finish in time.
func Run(ctx context.Context, o Options) (*Summary, error) {
	o.defaults()
	r := &run{Options: o, cfg: o.Config}
	if err := r.prepare(ctx); err != nil {
		return nil, err
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
	if err := r.setUp(ctx, env); err != nil {
		return nil, err
	}
	if err := r.startKoordQueue(); err != nil {
		return nil, err
	}
	defer r.kq.Stop(stopGrace)
	// Until it has exited, whatever ends the run.
	r.rss = SampleRSS(context.WithoutCancel(ctx), r.kq.PID(), rssPeriod)
	if err := r.awaitKoordQueue(ctx); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	if err := r.observe(runCtx, &wg); err != nil {
		return nil, err
	}
	if err := r.begin(runCtx); err != nil {
		return nil, err
	}
	if err := r.measure(runCtx, &wg); err != nil {
		return nil, err
	}
	if err := r.collect(ctx); err != nil {
		return nil, err
	}
	cancel()
	return r.summarise()
}

func (r *run) path(name string) string { return filepath.Join(r.OutputDir, name) }

// prepare makes the output folder, finds the control plane's binaries and
// builds koord-queue unless a binary was given.
func (r *run) prepare(ctx context.Context) error {
	if err := os.MkdirAll(r.OutputDir, 0o755); err != nil {
		return err
	}
	r.root = framework.RepoRoot()
	if err := ensureAssets(r.root); err != nil {
		return err
	}
	if r.bin = r.Binary; r.bin != "" {
		return nil
	}
	r.bin = r.path("koord-queue")
	began := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", r.bin, "./cmd/koord-queue")
	cmd.Dir = r.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/koord-queue: %w\n%s", err, out)
	}
	r.logf("built koord-queue in %s", time.Since(began).Round(100*time.Millisecond))
	return nil
}

// setUp writes the kubeconfig and koord-queue's config, makes the harness's
// client and creates the quotas.
func (r *run) setUp(ctx context.Context, env *framework.Env) error {
	r.env = env
	if err := env.WriteKubeconfig(r.path("kubeconfig")); err != nil {
		return err
	}
	if err := os.WriteFile(r.path("koord-queue-config.yaml"), []byte(r.cfg.SchedulerConfig()), 0o644); err != nil {
		return err
	}
	r.hcfg = rest.CopyConfig(env.Config)
	r.hcfg.QPS, r.hcfg.Burst = 100000, 100000
	if r.kueue() {
		r.hcfg.QPS, r.hcfg.Burst = kueueHarnessQPS, kueueHarnessBurst
	}
	r.hcfg.UserAgent = "koord-queue-perf-harness"
	var err error
	if r.c, err = client.New(r.hcfg, client.Options{Scheme: scheme.New()}); err != nil {
		return err
	}
	return createQuotas(ctx, r.c, r.cfg)
}

// startKoordQueue starts koord-queue with its metrics on a free port. Its
// own session keeps a Ctrl-C for the runner from reaching it (the runner
// still scrapes it then); it dies with the runner.
func (r *run) startKoordQueue() error {
	port, err := proc.FreePort()
	if err != nil {
		return err
	}
	r.metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	r.args = append([]string{
		"--kubeconfig", r.path("kubeconfig"), "--leader-elect=false",
		// Loopback only: the harness scrapes plain HTTP without a token.
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(port), "--metrics-secure=false",
		"--qps", strconv.FormatFloat(float64(r.QPS), 'f', -1, 32), "--burst", strconv.Itoa(r.Burst),
		"--config", r.path("koord-queue-config.yaml"),
	}, r.kueueEventLimits()...)
	r.args = append(r.args, r.ExtraArgs...)
	r.kq, err = proc.Start(r.bin, r.args, proc.Options{Log: r.path("koord-queue.log"), DieWithParent: true})
	return err
}

// awaitKoordQueue waits until koord-queue serves /metrics and has created
// the Queue of every child quota.
func (r *run) awaitKoordQueue(ctx context.Context) error {
	if err := waitFor(ctx, time.Minute, r.kq, func() error { _, err := scrape(r.metricsURL); return err }); err != nil {
		return fmt.Errorf("koord-queue /metrics never answered (log in %s): %w", r.OutputDir, err)
	}
	if err := waitFor(ctx, time.Minute, r.kq, func() error { return queuesReady(ctx, r.c, r.cfg) }); err != nil {
		return fmt.Errorf("auto-created Queues: %w", err)
	}
	r.logf("koord-queue (pid %d) is up, %d quotas and their queues exist", r.kq.PID(), r.cfg.Parents.Count*(1+r.cfg.Children.Count))
	return nil
}

// observe starts the recorder and the fake extension on a cache of the
// run's namespace; both stop with ctx.
func (r *run) observe(ctx context.Context, wg *sync.WaitGroup) error {
	r.rec = newRecorder(r.cfg)
	r.ext = newExtension(r.c, r.rec)
	r.ext.kueue = r.kueue()
	ca, err := cache.New(r.hcfg, cache.Options{Scheme: scheme.New(), DefaultNamespaces: map[string]cache.Config{r.cfg.Namespace: {}}})
	if err != nil {
		return err
	}
	if err := r.ext.start(ctx, ca); err != nil {
		return err
	}
	wg.Go(func() { _ = ca.Start(ctx) })
	if !ca.WaitForCacheSync(ctx) {
		return errors.New("harness cache did not sync")
	}
	wg.Go(func() { r.ext.run(ctx, r.ExtensionWorkers) })
	return nil
}

// begin takes the readings the run is measured from and records the setup.
func (r *run) begin(ctx context.Context) error {
	var err error
	if r.before, err = scrape(r.metricsURL); err != nil {
		return err
	}
	r.s = &Summary{Config: r.cfg.Name, Setup: Setup{
		QPS: r.QPS, Burst: r.Burst, ExtensionWorkers: r.ExtensionWorkers, KoordQueueArgs: r.args[2:],
		Commit: gitCommit(r.root), ServerVersion: r.env.ServerVersion, Machine: describeMachine(runtime.NumCPU()), StartedAt: time.Now().UTC().Truncate(time.Second),
		LoadAverageStart: loadAverage(), Mode: string(r.Mode), APIServerInflight: r.inflight(),
	}}
	r.cpuBefore = machineCPU(r.kq.PID())
	r.writesBefore, r.writesOK = apiServerWrites(ctx, r.hcfg)
	r.origin = time.Now()
	return nil
}

// measure creates the units and waits until every one is done, the
// config's timeout passes or ctx ends (an interrupt: what was measured so
// far is still written). It fails when creating fails or koord-queue exits.
func (r *run) measure(ctx context.Context, wg *sync.WaitGroup) error {
	r.logf("creating %d units (%s)", r.cfg.Units(), r.cfg.Name)
	createErr := make(chan error, 1)
	wg.Go(func() {
		if r.kueue() {
			createErr <- generateKueue(ctx, r.c, r.cfg, r.rec)
			return
		}
		createErr <- generate(ctx, r.c, r.cfg, r.rec, r.origin)
	})
	deadline := time.NewTimer(r.cfg.Timeout.Duration)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-r.rec.allDone:
			return nil
		case <-deadline.C:
			r.s.TimedOut = true
			return nil
		case err := <-createErr:
			if err != nil {
				return fmt.Errorf("create units: %w", err)
			}
		case <-r.kq.Done():
			return fmt.Errorf("koord-queue exited during the run: %w (log in %s)", r.kq.Wait(), r.OutputDir)
		case <-tick.C:
			done, running, pending := r.rec.progress()
			r.logf("%5.0fs done %d, admitted %d, pending %d", time.Since(r.origin).Seconds(), done, running, pending)
		case <-ctx.Done():
			r.s.TimedOut, r.s.Interrupted = true, true
			return nil
		}
	}
}

// collect takes the final readings; they must work after an interrupt too.
func (r *run) collect(ctx context.Context) error {
	r.end = time.Now()
	fin, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	// koord-queue writes its events at its own pace: count them once none waits.
	r.evWait = waitEventsWritten(context.WithoutCancel(ctx), r.metricsURL)
	var err error
	if r.after, err = scrape(r.metricsURL); err != nil {
		return fmt.Errorf("final scrape: %w", err)
	}
	if r.ps, err = readProc(r.kq.PID()); err != nil {
		return fmt.Errorf("read koord-queue's /proc: %w", err)
	}
	r.cpuAfter = machineCPU(r.kq.PID())
	// Kueue's wall time ends with the scheduler's exit; the peak RSS is
	// read until it has exited, shutdown included, in either mode.
	r.kq.Stop(stopGrace)
	<-r.rss.Done()
	if peak, n := r.rss.Peak(); n > 0 {
		r.ps.PeakRSSBytes = max(r.ps.PeakRSSBytes, peak)
	}
	// Its own deadline: waiting for the events and the stop above can use
	// up fin's minute on a busy API server.
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	writesAfter, ok := apiServerWrites(wctx, r.hcfg)
	wcancel()
	if !ok {
		r.logf("the API server's write count could not be read at the end: no API bound for this run")
	}
	r.writesAfter, r.writesOK = writesAfter, r.writesOK && ok
	// The events' own deadline: many pages on a busy API server.
	evCtx, evCancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
	defer evCancel()
	if r.events, err = countEvents(evCtx, r.c, r.cfg.Namespace); err != nil {
		return fmt.Errorf("list events: %w", err)
	}
	r.s.Setup.LoadAverageEnd = loadAverage()
	if r.s.TimedOut {
		if r.s.Unfinished, err = unfinished(fin, r.c, r.cfg.Namespace); err != nil {
			return fmt.Errorf("list unfinished units: %w", err)
		}
	}
	return nil
}

// summarise computes the figures from the readings and writes them.
func (r *run) summarise() (*Summary, error) {
	s := r.s
	tl := r.rec.freeze(r.end)
	s.fill(r.cfg, tl, r.end)
	s.fillProcess(r.before, r.after, r.ps)
	if r.kueue() {
		s.fillKueue(r.cfg, tl, r.kq.Wall(), r.kq.State(), r.after)
	}
	s.CPU = r.cpuAfter.minus(r.cpuBefore, r.end.Sub(r.origin).Seconds(), s.Setup.Machine.NProc)
	if r.writesOK {
		s.CPU.apiBound(r.writesAfter-r.writesBefore, s.Units, s.Setup.Machine.NProc, s.WallSeconds)
	}
	s.API.UnitStatusWrites = r.ext.schedulerUnitWrites()
	s.API.EventsByReason = r.events
	for _, n := range r.events {
		s.API.Events += n
	}
	s.Events = checkEvents(s, r.events, r.evWait)
	if s.Admissions > 0 {
		s.API.UnitStatusWritesPerAdmission = round(float64(s.API.UnitStatusWrites)/float64(s.Admissions), 3)
		s.API.EventsPerAdmission = round(float64(s.API.Events)/float64(s.Admissions), 3)
	}
	var err error
	if s.HarnessWriteErrors, err = r.ext.errors(); err != nil {
		s.HarnessLastError = err.Error()
	}
	if err := s.write(r.OutputDir, tl, r.origin); err != nil {
		return s, err
	}
	r.logf("wrote %s", r.path("summary.yaml"))
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

// waitFor polls cond until it holds, failing early when p exits.
func waitFor(ctx context.Context, timeout time.Duration, p *proc.Process, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		select {
		case <-p.Done():
			return fmt.Errorf("koord-queue exited: %w", p.Wait())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return err
		}
	}
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
	out := map[string]int{}
	// In pages: a run at high client limits leaves tens of thousands of
	// events, whose single list outlived its deadline on a busy API server.
	// A page that times out is asked again (its continue token stands).
	token := ""
	for {
		list := &corev1.EventList{}
		var err error
		for attempt := 1; attempt <= eventPageAttempts; attempt++ {
			page, cancel := context.WithTimeout(ctx, eventPageTimeout)
			err = c.List(page, list, client.InNamespace(ns), client.Limit(eventPageSize), client.Continue(token))
			cancel()
			if err == nil || ctx.Err() != nil {
				break
			}
		}
		if err != nil {
			return nil, err
		}
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
		if token = list.Continue; token == "" {
			return out, nil
		}
	}
}

// Events are listed eventPageSize at a time (a variable for the test that
// makes a small run list many pages), each page within eventPageTimeout,
// asked up to eventPageAttempts times.
var eventPageSize int64 = 1000

const (
	eventPageTimeout  = 30 * time.Second
	eventPageAttempts = 3
)

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
