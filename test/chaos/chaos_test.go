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

package chaos_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/mutation"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	"github.com/koordinator-sh/koord-queue/test/chaos/invariants"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

// mode is the size of a run.
type mode struct {
	// steadyJobs are created one every createEvery while the faults happen;
	// burstJobs all at once, as the last fault of the last round.
	steadyJobs, burstJobs int
	createEvery           time.Duration
	// rounds is how many times the fault schedule is played.
	rounds int
	// stall ends the wait for every job to finish after the schedule: the
	// drain goes on while jobs finish, and ends once none has for stall
	// (a busy machine drains slowly; a lost job never finishes).
	stall time.Duration
	// mutation is the bug planted in both binaries by default (the
	// checker's own test); KOORD_QUEUE_CHAOS_MUTATION plants one in any mode.
	mutation mutation.Mutation
}

var modes = map[string]mode{
	"short": {steadyJobs: 300, burstJobs: 150, createEvery: 400 * time.Millisecond, rounds: 1, stall: 2 * time.Minute},
	"full":  {steadyJobs: 2000, burstJobs: 1000, createEvery: 150 * time.Millisecond, rounds: 2, stall: 3 * time.Minute},
	// checker: a test of the checker in make test. A few jobs and no fault,
	// with one admission in ten lost (mutation.LostAdmission): the run must
	// fail, with jobs found lost.
	"checker": {steadyJobs: 40, createEvery: 250 * time.Millisecond, stall: 45 * time.Second, mutation: mutation.LostAdmission},
}

// faultsPerRound is the length of the fault schedule (the burst apart).
const faultsPerRound = 14

// caughtBy names the rules each planted bug breaks: a mutated run passes
// only if the checker found a violation of at least one of them.
var caughtBy = map[mutation.Mutation][]string{
	mutation.NoFence:           {"write-by-non-leader"},
	mutation.NoCatchUp:         {"decided-on-stale-cache", "quota-overcharged", "quota-exceeded", "admitted-twice", "more-pods-than-admitted"},
	mutation.LostAdmission:     {"lost"},
	mutation.EvictionKeepsPods: {"running-without-admission", "quota-exceeded"},
	mutation.DoubleAdmission:   {"admitted-again", "quota-overcharged", "quota-exceeded", "admitted-twice", "more-pods-than-admitted"},
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func toolsDir(t *testing.T) string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	out, err := exec.Command(filepath.Join(repoRoot(), "hack", "tools.sh"), "dir").Output()
	if err != nil {
		t.Fatalf("hack/tools.sh dir: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// run is one chaos run in progress.
type run struct {
	t       *testing.T
	c       *cluster.Cluster
	checker *invariants.Checker
	// unplanned counts replicas found exited after a fault that was not
	// aimed at them (a leader that lost its lease exits), restarted.
	unplanned int
	// created counts the jobs created so far.
	created atomic.Int64
}

// TestChaos plays the fault schedule over a steady stream of jobs and fails
// on any violation the checker finds. KOORD_QUEUE_CHAOS=short|full selects
// the size; KOORD_QUEUE_CHAOS_OUTPUT is where the report (and the cluster's
// state and logs) go, a temporary folder by default.
func TestChaos(t *testing.T) {
	name := os.Getenv("KOORD_QUEUE_CHAOS")
	m, ok := modes[name]
	if !ok {
		t.Skip("set KOORD_QUEUE_CHAOS=short, full or checker to run the chaos test (make test-chaos, make test-chaos-short, make test-chaos-checker)")
	}
	if planted := mutation.Mutation(os.Getenv("KOORD_QUEUE_CHAOS_MUTATION")); planted != "" {
		if _, ok := caughtBy[planted]; !ok {
			t.Fatalf("KOORD_QUEUE_CHAOS_MUTATION=%q: no such planted bug; the bugs are %v", planted, mutation.All)
		}
		m.mutation = planted
	}
	out := os.Getenv("KOORD_QUEUE_CHAOS_OUTPUT")
	if out == "" {
		out = t.TempDir()
	}
	out, _ = filepath.Abs(out)
	ports, err := cluster.FreePorts()
	if err != nil {
		t.Fatal(err)
	}
	// Victims may be taken 5 s after their admission (the default
	// protection is 5 minutes, longer than a job of the run lives), so the
	// preemption fault and reclaim evict.
	config := filepath.Join(out, "koord-queue-config.yaml")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte("apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueConfiguration\nreclaimProtectionPeriod: 5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Options{
		StateDir:      filepath.Join(out, "state"),
		ToolsDir:      toolsDir(t),
		Ports:         ports,
		Nodes:         cluster.Nodes{Count: 4, CPU: "32", Memory: "256Gi"},
		PodRunTime:    2 * time.Second,
		AuditLog:      true,
		DieWithParent: true,
		Log:           testWriter{t},
		KoordQueue: cluster.KoordQueue{
			Mode: cluster.KoordQueueOn, RepoRoot: repoRoot(), Extensions: []string{"job"}, Config: config,
			QueueReplicas: 2, ControllersReplicas: 2, DebugAPI: true, Mutation: m.mutation,
			// Each replica reaches the API server through a link the run
			// can cut (the partition faults) and a proxy that can stall
			// its watches of one resource (the stall fault).
			Links: true,
			// Admissions, refusals and writes that failed are logged at 2.
			ExtraQueueArgs: []string{"-v=2"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop cluster: %v", err)
		}
	}()
	if err := setUp(ctx, c.Client); err != nil {
		t.Fatal(err)
	}
	checker, err := invariants.New(c.Config, invariants.Options{
		Namespace: namespace,
		Audit: invariants.AuditOptions{
			Log: c.AuditLog(), Writers: c.Replicas(cluster.QueueBinary),
			LeaseName: cluster.QueueBinary, LeaseNamespace: cluster.Namespace,
		},
		ControllersAudit: invariants.AuditOptions{
			Log: c.AuditLog(), Writers: c.Replicas(cluster.ControllersBinary), Resources: []string{"queueunits", "jobs"},
			LeaseName: cluster.ControllersBinary, LeaseNamespace: cluster.Namespace,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := checker.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ctrllog.SetLogger(logr.Discard()) // the approver's cache
	appr := &approver{client: c.Client}
	cache, err := ctrlcache.New(c.Config, ctrlcache.Options{Scheme: scheme.New(), DefaultNamespaces: map[string]ctrlcache.Config{namespace: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := appr.run(ctx, cache); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cache.Start(ctx) }()

	r := &run{t: t, c: c, checker: checker}
	maker := newJobMaker(uint64(time.Now().UnixNano()))
	var produce sync.WaitGroup
	produce.Add(1)
	go func() {
		defer produce.Done()
		tick := time.NewTicker(m.createEvery)
		defer tick.Stop()
		for range m.steadyJobs {
			if err := createJob(ctx, c.Client, maker.make()); err != nil {
				t.Error(err)
				return
			}
			r.created.Add(1)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	r.waitAdmissions(ctx, 1, 2*time.Minute)
	if m.mutation != mutation.NoFence { // that bug leaves the server's fence out
		r.checkLeaderFence(ctx)
	}
	for round := range m.rounds {
		t.Logf("fault schedule, round %d", round+1)
		// The restarts come first: the stock Job controller backs off (up to
		// a minute) on the stale reads that follow an etcd restart, and the
		// leader faults give it that time while jobs keep coming.
		r.fault(ctx, "restart etcd", func() error { return r.restart(ctx, "etcd") })
		r.fault(ctx, "restart kube-apiserver", func() error { return r.restart(ctx, "kube-apiserver") })
		r.fault(ctx, "kill-9 leader", func() error { return r.killLeader(ctx, cluster.QueueBinary) })
		r.fault(ctx, "kill-9 controllers leader", func() error { return r.killLeader(ctx, cluster.ControllersBinary) })
		// SIGTERM takes a second or two: it comes while jobs still stream in,
		// so the handover's gap is measured.
		r.fault(ctx, "sigterm leader", func() error { return r.termLeader(ctx, cluster.QueueBinary) })
		r.fault(ctx, "sigterm controllers leader", func() error { return r.termLeader(ctx, cluster.ControllersBinary) })
		r.fault(ctx, "sigstop leader past its lease", func() error { return r.pauseLeader(ctx, cluster.QueueBinary) })
		r.fault(ctx, "sigstop controllers leader past its lease", func() error { return r.pauseLeader(ctx, cluster.ControllersBinary) })
		r.fault(ctx, "preemption", func() error { return r.preempt(ctx, maker) })
		r.fault(ctx, "cut leader from the API server past its lease", func() error { return r.cutLeader(ctx, cluster.QueueBinary) })
		r.fault(ctx, "cut follower, leader killed, heal at its lease's end", func() error { return r.cutFollowerKillLeader(ctx) })
		r.fault(ctx, "stall follower's unit watch, leader killed", func() error { return r.stallFollowerKillLeader(ctx, maker) })
		r.fault(ctx, "cut controllers leader from the API server past its lease", func() error { return r.cutLeader(ctx, cluster.ControllersBinary) })
		r.fault(ctx, "webhook down while unsuspended jobs are created", func() error { return r.webhookDown(ctx, maker) })
		if round == m.rounds-1 {
			r.fault(ctx, "burst", func() error { return r.burst(ctx, maker, m.burstJobs) })
		}
	}
	produce.Wait()
	r.waitAllDone(ctx, m.stall)
	report, err := checker.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.WriteTo(out); err != nil {
		t.Fatal(err)
	}
	t.Logf("jobs done %d/%d, admissions %d, checks approved %d, faults %d, replicas that exited on their own %d, violations %d %v; report in %s",
		report.JobsDone, report.JobsCreated, report.Admissions, appr.approved.Load(), len(report.Faults), r.unplanned, report.Total(), report.ViolationCounts, out)
	for _, f := range report.Faults {
		t.Logf("fault %-32s %-26s first admission after %-8s longest without %-8s admissions %d, peak held org-a %dm org-b %dm CPU", f.Kind, f.Target, f.FirstAdmissionAfter, f.LongestWithoutAdmission, f.Admissions,
			f.PeakHeld["org-a"][corev1.ResourceCPU].UsedMilli, f.PeakHeld["org-b"][corev1.ResourceCPU].UsedMilli)
	}
	if report.Audit != nil {
		t.Logf("audit: %d lease writes, %d takeovers, writes %v, refused %v, of unknown outcome %v, not landed %v, unread %v, uncertain %d", report.Audit.LeaseWrites, report.Audit.Takeovers,
			report.Audit.Writes, report.Audit.RefusedWrites, report.Audit.UnknownOutcome, report.Audit.NotLanded, report.Audit.Unread, len(report.Audit.Uncertain))
	}
	if a := report.ControllersAudit; a != nil {
		t.Logf("controllers' audit: %d lease writes, %d takeovers, writes %v, refused %v, of unknown outcome %v, not landed %v, unread %v, uncertain %d", a.LeaseWrites, a.Takeovers,
			a.Writes, a.RefusedWrites, a.UnknownOutcome, a.NotLanded, a.Unread, len(a.Uncertain))
	}
	// The stream, the burst and the preemption fault's jobs: what the test
	// itself created, counted as each create was answered.
	want := int(r.created.Load())
	if want < m.steadyJobs+m.burstJobs {
		t.Errorf("%d jobs created, the mode asks for %d and more", want, m.steadyJobs+m.burstJobs)
	}
	if m.mutation != "" {
		judgeMutated(t, m.mutation, report, want)
		return
	}
	// Samples first: a checker that saw nothing proves nothing.
	switch {
	case report.JobsCreated != want:
		t.Errorf("the checker counted %d jobs, %d were created", report.JobsCreated, want)
	case report.Admissions+report.AdmissionsInRelists < want:
		// A unit admitted and done inside a relisted window is seen done only.
		t.Errorf("the checker saw %d admissions (and %d units done inside relisted windows) for %d jobs",
			report.Admissions, report.AdmissionsInRelists, want)
	case report.PodEvents < want:
		t.Errorf("the checker saw %d pod events for %d jobs", report.PodEvents, want)
	case len(report.Faults) != faultsPerRound*m.rounds+1:
		t.Errorf("%d faults recorded, want %d", len(report.Faults), faultsPerRound*m.rounds+1)
	// Each round kills the leader, stops the next one with SIGTERM, pauses
	// the one after and cuts the next off: four takeovers at least (the
	// restarts of the API server may or may not cost a lease).
	case report.Audit == nil || report.Audit.Takeovers < 4*m.rounds || sum(report.Audit.Writes) < want:
		t.Errorf("the audit check read too little: %+v", report.Audit)
	// The controllers create every unit and resume every job.
	case report.ControllersAudit == nil || report.ControllersAudit.Takeovers < 4*m.rounds || sum(report.ControllersAudit.Writes) < 2*want:
		t.Errorf("the controllers' audit check read too little: %+v", report.ControllersAudit)
	case appr.approved.Load() == 0:
		t.Errorf("no admission check was answered: the checked queue %s saw no unit", checkedLeaf)
	case report.Evictions < m.rounds:
		t.Errorf("the checker saw %d evictions: the run did not evict (preemption fault)", report.Evictions)
	}
	// Pressure: zero violations mean something only if admissions pressed
	// against the quotas. Each organisation (max 60 CPUs, where the leaves'
	// borrowing meets) must have been held at least nine tenths full.
	for _, q := range []string{"org-a", "org-b"} {
		peak := report.PeakHeld[q][corev1.ResourceCPU]
		if peak.MaxMilli == 0 || peak.UsedMilli*10 < peak.MaxMilli*9 {
			t.Errorf("quota %s was held at most %dm of %dm CPU: the run did not press against its max", q, peak.UsedMilli, peak.MaxMilli)
		}
	}
	for _, v := range report.Violations {
		t.Errorf("violation %s at %s (rv %d): %s", v.Kind, v.At.Format(time.RFC3339Nano), v.ResourceVersion, v.Message)
	}
	if report.ViolationCounts["lost"] > 0 {
		r.explainLost(ctx)
	}
}

// judgeMutated passes a run with a planted bug only if the checker counted
// every job and found a violation of a rule the bug breaks.
func judgeMutated(t *testing.T, planted mutation.Mutation, report *invariants.Report, want int) {
	t.Logf("planted bug %s: violations %v", planted, report.ViolationCounts)
	if report.JobsCreated != want {
		t.Errorf("the checker counted %d jobs, %d were created", report.JobsCreated, want)
	}
	for _, kind := range caughtBy[planted] {
		if report.ViolationCounts[kind] > 0 {
			for _, v := range report.Violations {
				if v.Kind == kind {
					t.Logf("caught: %s at %s: %s", v.Kind, v.At.Format(time.RFC3339Nano), v.Message)
					return
				}
			}
		}
	}
	t.Errorf("the checker did not catch the planted bug %s: no violation of %v (found %v)", planted, caughtBy[planted], report.ViolationCounts)
}

// explainLost logs what the units of unfinished jobs say about their wait.
func (r *run) explainLost(ctx context.Context) {
	units := &schedv1alpha1.QueueUnitList{}
	if err := r.c.Client.List(ctx, units, client.InNamespace(namespace)); err != nil {
		r.t.Logf("list units: %v", err)
		return
	}
	for i := range units.Items {
		u := &units.Items[i]
		if u.Status.Phase == schedv1alpha1.QueueUnitPhaseSucceed || u.Status.Phase == schedv1alpha1.QueueUnitPhaseFailed {
			continue
		}
		var conds []string
		for _, c := range u.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
		}
		r.t.Logf("unfinished unit %s: quota %s, phase %s, message %q, conditions %v, admissions %d",
			u.Name, u.Labels[schedv1alpha1.QuotaNameLabel], u.Status.Phase, u.Status.Message, conds, len(u.Status.Admissions))
	}
	// What the leader holds in memory: usage per quota and its queues.
	leader, err := r.c.Leader(ctx, cluster.QueueBinary)
	if err != nil {
		r.t.Logf("leader: %v", err)
		return
	}
	base, ok := r.c.DebugURL(leader)
	if !ok {
		return
	}
	for _, path := range []string{"/debug/quotas", "/debug/queues"} {
		r.t.Logf("%s %s: %s", leader, path, httpGet(ctx, base+path))
	}
	queues := map[string]bool{}
	for i := range units.Items {
		if q := units.Items[i].Spec.Queue; q != "" {
			queues[q] = true
		}
	}
	for q := range queues {
		r.t.Logf("%s /debug/queues/%s: %s", leader, q, httpGet(ctx, base+"/debug/queues/"+q))
	}
}

// httpGet returns the body at url, or the error as text.
func httpGet(ctx context.Context, url string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err.Error()
	}
	return resp.Status + " " + string(body)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// fault runs one fault of the schedule, then brings back any replica that
// exited and waits until admissions go on.
func (r *run) fault(ctx context.Context, what string, inject func() error) {
	r.t.Logf("fault: %s", what)
	before := r.checker.Admissions()
	if err := inject(); err != nil {
		r.t.Errorf("fault %s: %v", what, err)
	}
	r.revive(ctx, what, "")
	r.waitAdmissions(ctx, before+1, 2*time.Minute)
}

// revive starts again every replica, but except, that exited on its own (a
// leader that lost its lease exits), as a kubelet would. A replica may exit
// some seconds after the fault that made it lose its lease, when the next
// fault has begun: waiting for a new leader revives too.
func (r *run) revive(ctx context.Context, after, except string) {
	for _, binary := range []string{cluster.QueueBinary, cluster.ControllersBinary} {
		for _, name := range r.c.Replicas(binary) {
			if gone, _ := r.c.Exited(name); gone && name != except {
				r.unplanned++
				r.t.Logf("%s exited after %s: restarting it", name, after)
				if err := r.c.Restart(ctx, name); err != nil {
					r.t.Errorf("restart %s: %v", name, err)
				}
			}
		}
	}
}

// waitAdmissions waits until the checker has seen n admissions, or as many
// as jobs were created (nothing is left to admit); a stall is the report's
// business (the gap figures), not an error here.
func (r *run) waitAdmissions(ctx context.Context, n int, limit time.Duration) {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, limit, true, func(context.Context) (bool, error) {
		a := r.checker.Admissions()
		return a >= n || (r.created.Load() > 0 && int64(a) >= r.created.Load()), nil
	})
	if err != nil {
		r.t.Logf("still %d admissions, waited for %d: %v", r.checker.Admissions(), n, err)
	}
}

// leader waits until a replica of binary other than not holds its lease.
func (r *run) leader(ctx context.Context, binary, not string) (string, error) {
	var name string
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		name, last = r.c.Leader(ctx, binary)
		if last == nil && name != "" && name != not {
			return true, nil
		}
		// The replica that should take over may have exited on its own
		// (it lost its lease in an earlier fault); not is the caller's.
		r.revive(ctx, "an earlier fault", not)
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("no leader of %s other than %q: %w (last error: %w)", binary, not, err, last)
	}
	return name, nil
}

// killLeader: kill -9 of binary's leader, then, once another replica leads,
// the killed one is started again (as a follower).
func (r *run) killLeader(ctx context.Context, binary string) error {
	leader, err := r.leader(ctx, binary, "")
	if err != nil {
		return err
	}
	r.checker.RecordFault("kill-9 "+binary+" leader", leader)
	if err := r.c.Kill(leader); err != nil {
		return err
	}
	next, err := r.leader(ctx, binary, leader)
	if err != nil {
		return err
	}
	r.t.Logf("%s killed, %s leads", leader, next)
	return r.c.Restart(ctx, leader)
}

// termLeader: SIGTERM of binary's leader, as a kubelet stops its pod. The
// leader drains its writes, gives its lease up and exits 0; once another
// replica leads, it is started again as a follower.
func (r *run) termLeader(ctx context.Context, binary string) error {
	leader, err := r.leader(ctx, binary, "")
	if err != nil {
		return err
	}
	r.checker.RecordFault("sigterm "+binary+" leader", leader)
	if err := r.c.Terminate(leader); err != nil {
		return err
	}
	next, err := r.leader(ctx, binary, leader)
	if err != nil {
		return err
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		gone, _ := r.c.Exited(leader)
		return gone, nil
	}); err != nil {
		return fmt.Errorf("%s did not exit after SIGTERM: %w", leader, err)
	}
	if err := r.c.ExitError(leader); err != nil {
		r.t.Errorf("%s after SIGTERM: %v, want exit status 0", leader, err)
	}
	r.t.Logf("%s terminated, %s leads", leader, next)
	return r.c.Restart(ctx, leader)
}

// pauseLeader: SIGSTOP of binary's leader until another replica has taken
// its lease over (longer than the lease), then SIGCONT. A deposed leader
// that exits is started again by fault.
func (r *run) pauseLeader(ctx context.Context, binary string) error {
	leader, err := r.leader(ctx, binary, "")
	if err != nil {
		return err
	}
	r.checker.RecordFault("sigstop "+binary+" leader", leader)
	if err := r.c.Pause(leader); err != nil {
		return err
	}
	next, err := r.leader(ctx, binary, leader)
	if rerr := r.c.Resume(leader); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	r.t.Logf("%s paused, %s took over, %s resumed", leader, next, leader)
	// Give the resumed replica the time to find its lease gone: it exits
	// (controller-runtime's manager stops on a lost election) or follows.
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		gone, _ := r.c.Exited(leader)
		return gone, nil
	})
	return nil
}

// webhookDown kills the replica of koord-queue-controllers that serves the
// admission webhook, creates unheldJobs jobs unsuspended in unheldLeaf (the
// API server, failurePolicy Ignore, stores them as written, so their pods
// may start), and starts the replica again. The backstop must suspend them
// and queue them (the checker bounds how long they run unadmitted:
// backstop-late); the drain, that they are admitted and finish.
func (r *run) webhookDown(ctx context.Context, maker *jobMaker) error {
	const server = cluster.ControllersBinary // replica 0 holds the webhook's port
	r.checker.RecordFault("webhook down", server)
	if err := r.c.Kill(server); err != nil {
		return err
	}
	var names []string
	for range unheldJobs {
		j := maker.named(unheldLeaf, 1, 0, 2*time.Second)
		j.Spec.Suspend = ptr.To(false)
		if err := createJob(ctx, r.c.Client, j); err != nil {
			return err
		}
		r.created.Add(1)
		names = append(names, j.Name)
	}
	// The fault proves something only if the webhook missed them.
	for _, name := range names {
		j := &batchv1.Job{}
		if err := r.c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, j); err != nil {
			return err
		}
		if _, stamped := j.Annotations[schedv1alpha1.CreatedAtAnnotation]; stamped {
			r.t.Errorf("job %s was stamped by the webhook, which should have been down", name)
		}
	}
	return r.c.Restart(ctx, server)
}

// preemptLeaf opts into preemption (LowerPriority); the preemption fault
// fills it with long jobs of the lowest priority, then one of the highest
// arrives.
const preemptLeaf = "a1-x"

// preempt fills preemptLeaf up to its max (16 CPUs) with eight jobs of 2
// CPUs, priority 0 and 30 s each, waits until they are admitted, then
// creates one job of priority 3 there: it must preempt one of them, so the
// eviction path (scheduler, controllers, Job controller) runs under the
// checker. The stream's own jobs of preemptLeaf may preempt first.
func (r *run) preempt(ctx context.Context, maker *jobMaker) error {
	r.checker.RecordFault("preemption", preemptLeaf)
	evictions := r.checker.Evictions()
	for range 8 {
		if err := createJob(ctx, r.c.Client, maker.named(preemptLeaf, 2, 0, 30*time.Second)); err != nil {
			return err
		}
		r.created.Add(1)
	}
	// Full: what units of the leaf hold reaches its max.
	full := func(context.Context) (bool, error) {
		return r.checker.Held(preemptLeaf, corev1.ResourceCPU) >= 16000 || r.checker.Evictions() > evictions, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, full); err != nil {
		return fmt.Errorf("%s held %dm CPU, never its max: %w", preemptLeaf, r.checker.Held(preemptLeaf, corev1.ResourceCPU), err)
	}
	if err := createJob(ctx, r.c.Client, maker.named(preemptLeaf, 2, 3, 2*time.Second)); err != nil {
		return err
	}
	r.created.Add(1)
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		return r.checker.Evictions() > evictions, nil
	})
}

// cutLeader: binary's leader is cut off from the API server (its link
// holds what it sends and what is sent to it) until another replica has
// taken its lease over, then the link heals and what it held arrives late:
// the leader fences must refuse whatever write of the deposed leader comes
// through. A deposed leader that exits is started again by fault.
func (r *run) cutLeader(ctx context.Context, binary string) error {
	leader, err := r.leader(ctx, binary, "")
	if err != nil {
		return err
	}
	r.checker.RecordFault("cut "+binary+" leader", leader)
	if err := r.c.Cut(leader); err != nil {
		return err
	}
	next, err := r.leader(ctx, binary, leader)
	if herr := r.c.Heal(leader); herr != nil && err == nil {
		err = herr
	}
	if err != nil {
		return err
	}
	r.t.Logf("%s cut off, %s took over, link healed", leader, next)
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		gone, _ := r.c.Exited(leader)
		return gone, nil
	})
	return nil
}

// cutFollowerKillLeader: koord-queue's follower is cut off from the API
// server while the leader goes on admitting, then the leader is killed, and
// the link heals only once the leader's lease has run out: the follower
// takes the lease at once with watches that missed the last admissions, and
// must catch up before it decides anything.
func (r *run) cutFollowerKillLeader(ctx context.Context) error {
	leader, err := r.leader(ctx, cluster.QueueBinary, "")
	if err != nil {
		return err
	}
	var follower string
	for _, name := range r.c.Replicas(cluster.QueueBinary) {
		if name != leader {
			follower = name
		}
	}
	r.checker.RecordFault("cut follower, kill leader", follower+", "+leader)
	if err := r.c.Cut(follower); err != nil {
		return err
	}
	healed := false
	defer func() {
		if !healed {
			_ = r.c.Heal(follower)
		}
	}()
	// The leader admits while the follower's watches stand still.
	before := r.checker.Admissions()
	r.waitAdmissions(ctx, before+10, time.Minute)
	if err := r.c.Kill(leader); err != nil {
		return err
	}
	l, err := r.c.Lease(ctx, cluster.QueueBinary)
	if err != nil {
		return err
	}
	if l.Spec.RenewTime != nil && l.Spec.LeaseDurationSeconds != nil {
		end := l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)
		_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			return time.Now().After(end), nil
		})
	}
	healed = true
	if err := r.c.Heal(follower); err != nil {
		return err
	}
	next, err := r.leader(ctx, cluster.QueueBinary, leader)
	if err != nil {
		return err
	}
	r.t.Logf("%s cut off, %s killed, link healed at the end of its lease, %s leads", follower, leader, next)
	return r.c.Restart(ctx, leader)
}

func (r *run) restart(ctx context.Context, name string) error {
	r.checker.RecordFault("restart", name)
	return r.c.Restart(ctx, name)
}

// burst creates n jobs at once, from 16 writers.
func (r *run) burst(ctx context.Context, maker *jobMaker, n int) error {
	jobs := make(chan *batchv1.Job, n)
	for range n {
		jobs <- maker.make()
	}
	close(jobs)
	r.checker.RecordFault("burst", fmt.Sprintf("%d jobs", n))
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r.created.Add(1)
				if err := createJob(ctx, r.c.Client, j); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// waitAllDone waits until every job of the run has finished, or until no
// job has finished for stall: a slow machine drains slowly, a lost job never
// finishes (docs/reliability.md, "Drain and load").
func (r *run) waitAllDone(ctx context.Context, stall time.Duration) {
	var done, total, best int
	progress := time.Now()
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		if time.Since(progress) > stall {
			return false, fmt.Errorf("no job finished for %s", stall)
		}
		jobs := &batchv1.JobList{}
		if err := r.c.Client.List(ctx, jobs, client.InNamespace(namespace)); err != nil {
			return false, nil // the API server may be slow after the faults
		}
		done, total = 0, len(jobs.Items)
		for i := range jobs.Items {
			for _, cond := range jobs.Items[i].Status.Conditions {
				if (cond.Type == batchv1.JobComplete || cond.Type == batchv1.JobFailed) && cond.Status == corev1.ConditionTrue {
					done++
				}
			}
		}
		if done > best {
			best, progress = done, time.Now()
		}
		return done == total, nil
	})
	if err != nil {
		r.t.Logf("%d of %d jobs finished when the drain ended: %v", done, total, err)
	}
}

// testWriter sends the cluster's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// checkLeaderFence: the replicas act as their binary's ServiceAccount with
// their pod's name (test/cluster), so the chart's leader fences judge them.
// For each binary, a write (dry run) as a replica that does not hold the
// Lease is refused by the API server, and the same write as the leader
// passes.
func (r *run) checkLeaderFence(ctx context.Context) {
	t := r.t
	units := &schedv1alpha1.QueueUnitList{}
	jobs := &batchv1.JobList{}
	if err := r.c.Client.List(ctx, units, client.InNamespace(namespace), client.Limit(1)); err != nil || len(units.Items) == 0 {
		t.Fatalf("a QueueUnit to probe the leader fence with: %v (%d found)", err, len(units.Items))
	}
	if err := r.c.Client.List(ctx, jobs, client.InNamespace(namespace), client.Limit(1)); err != nil || len(jobs.Items) == 0 {
		t.Fatalf("a Job to probe the leader fence with: %v (%d found)", err, len(jobs.Items))
	}
	probes := map[string]func(client.Client) error{
		cluster.QueueBinary: func(c client.Client) error {
			return c.Status().Patch(ctx, &units.Items[0], client.RawPatch(types.MergePatchType,
				[]byte(`{"status":{"message":"leader fence probe"}}`)), client.DryRunAll)
		},
		cluster.ControllersBinary: func(c client.Client) error {
			return c.Patch(ctx, &jobs.Items[0], client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata":{"annotations":{"chaos/leader-fence-probe":"x"}}}`)), client.DryRunAll)
		},
	}
	for _, binary := range []string{cluster.QueueBinary, cluster.ControllersBinary} {
		leader, err := r.leader(ctx, binary, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, replica := range r.c.Replicas(binary) {
			cfg := rest.CopyConfig(r.c.Config)
			cfg.Impersonate = rest.ImpersonationConfig{
				UserName: "system:serviceaccount:" + cluster.Namespace + ":" + binary,
				Extra:    map[string][]string{cluster.PodNameExtra: {replica}},
			}
			c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
			if err != nil {
				t.Fatal(err)
			}
			err = probes[binary](c)
			switch {
			case replica == leader && err != nil:
				t.Errorf("leader %s: its write was refused: %v", replica, err)
			case replica != leader && (err == nil || !strings.Contains(err.Error(), "does not hold the leader Lease")):
				t.Errorf("follower %s of %s (leader %s): write got %v, want the leader fence's refusal", replica, binary, leader, err)
			}
		}
	}
	t.Log("leader fence: each follower's write refused by the API server, each leader's accepted")
}
