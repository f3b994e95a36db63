package scheduler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// testStart is when every fixture's clock starts.
var testStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testPlugin is the one plugin of these tests. It maps a unit to the queue
// and quota its quota label names (else spec.queue), admits a unit while its
// quota's capacity covers what the quota's units hold plus the request,
// records what the scheduler tells it, and answers a victim search with what
// the test set.
type testPlugin struct {
	h framework.Handle

	mu       sync.Mutex
	capacity map[string]quota.Resources
	cohorts  map[string]string
	charged  map[string]quota.Holding
	// usage is every SetUsage call, in order (a copy of the holding).
	usage      []usageCall
	reserves   []string
	unreserves []string
	// preempt answers victim searches (nil: none); preempts lists them, with
	// what they allowed.
	preempt  func(u *framework.UnitInfo, skip func(string) bool) quota.Victims
	preempts []string
	// borrows lists the quotas whose units would borrow above their min.
	borrows map[string]bool
}

type usageCall struct {
	key string
	h   *quota.Holding
}

var (
	_ framework.QueueMapPlugin = (*testPlugin)(nil)
	_ framework.FilterPlugin   = (*testPlugin)(nil)
	_ framework.ReservePlugin  = (*testPlugin)(nil)
	_ framework.UsagePlugin    = (*testPlugin)(nil)
	_ framework.PreemptPlugin  = (*testPlugin)(nil)
	_ framework.QuotaLister    = (*testPlugin)(nil)
)

func newTestPlugin() *testPlugin {
	return &testPlugin{capacity: map[string]quota.Resources{}, cohorts: map[string]string{},
		charged: map[string]quota.Holding{}, borrows: map[string]bool{}}
}

func (p *testPlugin) Name() string { return "Test" }

// registry registers p as plugin Test.
func (p *testPlugin) registry() framework.Registry {
	return framework.Registry{"Test": func(_ runtime.RawExtension, h framework.Handle) (framework.Plugin, error) {
		p.h = h
		return p, nil
	}}
}

func (p *testPlugin) Map(u *v1alpha1.QueueUnit) (string, string) {
	name := u.Labels[v1alpha1.QuotaNameLabel]
	if name == "" {
		name = u.Spec.Queue
	}
	return name, name
}

func (p *testPlugin) Cohort(quotaName string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.cohorts[quotaName]; ok {
		return c
	}
	return quotaName
}

// setCapacity makes quota name admit units up to cpu (in cores).
func (p *testPlugin) setCapacity(name string, cpuCores int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.capacity[name] = quota.Resources{"cpu": cpuCores * 1000}
}

func (p *testPlugin) usedLocked(quotaName, except string) quota.Resources {
	used := quota.Resources{}
	for key, h := range p.charged {
		if key != except && h.Quota == quotaName {
			used = used.Add(h.Used)
		}
	}
	return used
}

func (p *testPlugin) fitLocked(u *framework.UnitInfo) *framework.Status {
	capacity, ok := p.capacity[u.Quota]
	if !ok {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, "notfound/"+u.Quota, "ElasticQuota "+u.Quota+" not found")
	}
	used := p.usedLocked(u.Quota, u.Key)
	for _, r := range u.Request.Names() {
		if u.Request[r] > capacity[r] {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("never/%s/%s", u.Quota, r),
				fmt.Sprintf("can never fit: quota %s allows at most %d %s", u.Quota, capacity[r], r))
		}
		if free := capacity[r] - used[r]; u.Request[r] > free {
			return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("short/%s/%s", u.Quota, r),
				fmt.Sprintf("insufficient quota: quota %s has %d %s free", u.Quota, free, r))
		}
	}
	return nil
}

func (p *testPlugin) Filter(_ context.Context, u *framework.UnitInfo) *framework.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fitLocked(u)
}

func (p *testPlugin) Reserve(_ context.Context, u *framework.UnitInfo) *framework.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.fitLocked(u); s != nil {
		return s
	}
	p.reserves = append(p.reserves, u.Key)
	p.charged[u.Key] = quota.Holding{Key: u.Key, Quota: u.Quota, Used: u.Request, Priority: u.Priority}
	return nil
}

func (p *testPlugin) Unreserve(_ context.Context, u *framework.UnitInfo) {
	p.mu.Lock()
	p.unreserves = append(p.unreserves, u.Key)
	delete(p.charged, u.Key)
	p.mu.Unlock()
	p.h.Freed(p.Cohort(u.Quota))
}

func (p *testPlugin) SetUsage(key string, h *quota.Holding) {
	p.mu.Lock()
	call := usageCall{key: key}
	if h != nil {
		cp := *h
		call.h = &cp
	}
	p.usage = append(p.usage, call)
	prev, had := p.charged[key]
	if h == nil || h.Used.IsZero() {
		delete(p.charged, key)
	} else {
		p.charged[key] = *h
	}
	p.mu.Unlock()
	if had && (h == nil || !h.Used.Covers(prev.Used)) {
		p.h.Freed(p.Cohort(prev.Quota))
	}
}

func (p *testPlugin) Preempt(_ context.Context, u *framework.UnitInfo, preempt, reclaim bool, skip func(string) bool) quota.Victims {
	p.mu.Lock()
	p.preempts = append(p.preempts, fmt.Sprintf("%s preempt=%v reclaim=%v", u.Key, preempt, reclaim))
	fn := p.preempt
	p.mu.Unlock()
	if fn == nil {
		return quota.Victims{}
	}
	return fn(u, skip)
}

func (p *testPlugin) WouldBorrow(u *framework.UnitInfo) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.borrows[u.Quota]
}

func (p *testPlugin) ListQuotas() []quota.Info {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []quota.Info
	for name, c := range p.capacity {
		out = append(out, quota.Info{Name: name, Exists: true, Max: c.Clone(), Used: p.usedLocked(name, "")})
	}
	return out
}

// chargedTo returns what unit key is charged, and whether it is.
func (p *testPlugin) chargedTo(key string) (quota.Holding, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.charged[key]
	return h, ok
}

// lastUsage returns the last SetUsage call for key.
func (p *testPlugin) lastUsage(key string) (usageCall, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.usage) - 1; i >= 0; i-- {
		if p.usage[i].key == key {
			return p.usage[i], true
		}
	}
	return usageCall{}, false
}

func (p *testPlugin) searches() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.preempts...)
}

func (p *testPlugin) counts() (reserves, unreserves, preempts int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.reserves), len(p.unreserves), len(p.preempts)
}

// fixture is a scheduler built on a fake API, a fake clock and the test
// plugin, watching nothing: tests call its handlers and passes themselves,
// and make the status writes with the writer fixture's drain.
type fixture struct {
	*writerFixture
	s      *Scheduler
	clk    *clocktesting.FakeClock
	plugin *testPlugin
	events *record.FakeRecorder
	ctx    context.Context

	failMu sync.Mutex
	// fail, when set, answers a status patch instead of the API.
	fail         func(obj client.Object) error
	queuePatches atomic.Int32
}

// newFixture builds a leading scheduler with opts changed by mod (may be nil).
func newFixture(t *testing.T, mod func(*Options)) *fixture {
	t.Helper()
	f := &fixture{writerFixture: &writerFixture{}, clk: clocktesting.NewFakeClock(testStart), plugin: newTestPlugin(),
		events: record.NewFakeRecorder(1000), ctx: context.Background()}
	wf := f.writerFixture
	scheme := testScheme(t)
	if err := schedulingv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	wf.c = fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&v1alpha1.QueueUnit{}, &v1alpha1.Queue{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				f.failMu.Lock()
				fail := f.fail
				f.failMu.Unlock()
				if fail != nil {
					if err := fail(obj); err != nil {
						return err
					}
				}
				if _, ok := obj.(*v1alpha1.Queue); ok {
					f.queuePatches.Add(1)
				} else {
					wf.mu.Lock()
					wf.patches++
					wf.mu.Unlock()
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	cfg := &configv1.KoordQueueConfiguration{Plugins: []configv1.Plugin{{Name: "Test"}}}
	cfg.SetDefaults()
	opts := Options{Config: cfg, Clock: f.clk}
	if mod != nil {
		mod(&opts)
	}
	s, err := build(deps{client: wf.c, reader: wf.c, recorder: f.events}, f.plugin.registry(), opts)
	if err != nil {
		t.Fatal(err)
	}
	// The writer's delays run on the real clock (see
	// TestWriterDelaysFollowTheSchedulersClock): its queues are replaced by
	// ones on the fake clock, before anything is written.
	s.writer.decide.ShutDown()
	s.writer.inform.ShutDown()
	s.writer.decide, s.writer.inform = newClockQueue(f.clk), newClockQueue(f.clk)
	wf.w = s.writer
	s.env.leading.Store(true)
	f.s = s
	t.Cleanup(func() {
		s.writer.decide.ShutDown()
		s.writer.inform.ShutDown()
		s.lifecycle.queue.ShutDown()
	})
	return f
}

// clockQueue is a work queue for the status writer whose delays run on a
// fake clock and which moves what is due when asked (Len), so a test that
// steps the clock finds every write due at once: no goroutine, no polling.
// Keys are deduplicated as in client-go's queues.
type clockQueue struct {
	clk *clocktesting.FakeClock

	mu         sync.Mutex
	ready      []string
	queued     map[string]bool
	processing map[string]bool
	// again marks keys added while being processed.
	again    map[string]bool
	due      map[string]time.Time
	failures map[string]int
	shutdown bool
}

var _ workqueue.TypedRateLimitingInterface[string] = (*clockQueue)(nil)

func newClockQueue(clk *clocktesting.FakeClock) *clockQueue {
	return &clockQueue{clk: clk, queued: map[string]bool{}, processing: map[string]bool{}, again: map[string]bool{},
		due: map[string]time.Time{}, failures: map[string]int{}}
}

func (q *clockQueue) addLocked(key string) {
	switch {
	case q.processing[key]:
		q.again[key] = true
	case !q.queued[key]:
		q.queued[key] = true
		q.ready = append(q.ready, key)
	}
}

func (q *clockQueue) Add(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(key)
}

// Len moves the keys that are due by the clock, and counts those ready.
func (q *clockQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clk.Now()
	for key, at := range q.due {
		if !at.After(now) {
			delete(q.due, key)
			q.addLocked(key)
		}
	}
	return len(q.ready)
}

// Get returns the first ready key; callers check Len first (it never blocks).
func (q *clockQueue) Get() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown || len(q.ready) == 0 {
		return "", true
	}
	key := q.ready[0]
	q.ready = q.ready[1:]
	delete(q.queued, key)
	q.processing[key] = true
	return key, false
}

func (q *clockQueue) Done(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, key)
	if q.again[key] {
		delete(q.again, key)
		q.addLocked(key)
	}
}

func (q *clockQueue) AddAfter(key string, d time.Duration) {
	if d <= 0 {
		q.Add(key)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	at := q.clk.Now().Add(d)
	if cur, ok := q.due[key]; !ok || at.Before(cur) {
		q.due[key] = at
	}
}

func (q *clockQueue) AddRateLimited(key string) {
	q.mu.Lock()
	n := q.failures[key]
	q.failures[key]++
	q.mu.Unlock()
	q.AddAfter(key, 5*time.Millisecond<<min(n, 16))
}

func (q *clockQueue) Forget(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.failures, key)
}

func (q *clockQueue) NumRequeues(key string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failures[key]
}

func (q *clockQueue) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutdown = true
}

func (q *clockQueue) ShutDownWithDrain() { q.ShutDown() }

func (q *clockQueue) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shutdown
}

// failPatches makes status patches fail with what fn answers (nil: pass).
func (f *fixture) failPatches(fn func(obj client.Object) error) {
	f.failMu.Lock()
	defer f.failMu.Unlock()
	f.fail = fn
}

// makeUnit starts a unit of namespace ns in quota q asking cpu.
func makeUnit(name, q string, cpu string) *utiltesting.QueueUnitWrapper {
	return utiltesting.MakeQueueUnit(name, "ns").Quota(q).Request("cpu", cpu).Created(testStart.Add(-time.Hour))
}

// addQueue creates a served Queue and gives it to the scheduler.
func (f *fixture) addQueue(t *testing.T, q *v1alpha1.Queue) *v1alpha1.Queue {
	t.Helper()
	if err := f.c.Create(f.ctx, q); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.Queue{}
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(q), got); err != nil {
		t.Fatal(err)
	}
	f.s.queueSync.onQueue(got)
	return got
}

// addUnit creates u (with its status) and hands the stored object to the
// scheduler, as the informer would.
func (f *fixture) addUnit(t *testing.T, u *v1alpha1.QueueUnit) *v1alpha1.QueueUnit {
	t.Helper()
	status := u.Status
	if err := f.c.Create(f.ctx, u); err != nil {
		t.Fatal(err)
	}
	stored := &v1alpha1.QueueUnit{}
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(u), stored); err != nil {
		t.Fatal(err)
	}
	if status.Phase != "" {
		stored.Status = status
		if err := f.c.Status().Update(f.ctx, stored); err != nil {
			t.Fatal(err)
		}
	}
	f.s.intake.onUnit(stored)
	return stored
}

// feed hands the stored unit to the scheduler, as the informer would.
func (f *fixture) feed(t *testing.T, name string) *v1alpha1.QueueUnit {
	t.Helper()
	u := f.get(t, name)
	f.s.intake.onUnit(u)
	return u
}

// extension changes a unit's status as the job extension would, and feeds it.
func (f *fixture) extension(t *testing.T, name string, mutate func(u *v1alpha1.QueueUnit)) *v1alpha1.QueueUnit {
	t.Helper()
	u := f.get(t, name)
	mutate(u)
	if err := f.c.Status().Update(f.ctx, u); err != nil {
		t.Fatal(err)
	}
	return f.feed(t, name)
}

// pass runs one pass, makes the writes it caused that are due now, and
// brings what was written back, as the informer would.
func (f *fixture) pass(t *testing.T) {
	t.Helper()
	f.s.pass.schedule(f.ctx)
	f.drain(t)
	f.sync(t)
}

// sync hands the scheduler every unit whose stored version it has not seen,
// as the informer would.
func (f *fixture) sync(t *testing.T) {
	t.Helper()
	list := &v1alpha1.QueueUnitList{}
	if err := f.c.List(f.ctx, list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		u := &list.Items[i]
		if seen, _ := f.s.cache.object(keyOf(u)); seen == nil || seen.ResourceVersion != u.ResourceVersion {
			f.s.intake.onUnit(u)
		}
	}
}

// step moves the clock by d, waits for what became due to be queued, makes
// the writes and brings them back as the informer would. ready says what to
// wait for (nil: nothing).
func (f *fixture) step(t *testing.T, d time.Duration, ready func() bool) {
	t.Helper()
	f.clk.Step(d)
	if ready != nil {
		eventually(t, ready, "work due after %s", d)
	}
	f.drain(t)
	f.sync(t)
}

// informDue reports whether an informational write waits to be made.
func (f *fixture) informDue() bool { return f.w.inform.Len() > 0 }

// timerSet runs action and waits until it set a timer on the clock: a
// delayed lifecycle key or a wakeup, so a step after it fires it. (The
// writer's delays need none: see clockQueue.)
func (f *fixture) timerSet(t *testing.T, action func()) {
	t.Helper()
	before := f.clk.Waiters()
	action()
	eventually(t, func() bool { return f.clk.Waiters() > before }, "a timer on the clock")
}

// lifecycleRun works the lifecycle queue dry, as its workers would, and
// makes the writes.
func (f *fixture) lifecycleRun(t *testing.T) {
	t.Helper()
	for range 100 {
		if f.s.lifecycle.queue.Len() == 0 {
			f.drain(t)
			return
		}
		f.s.lifecycle.processNext(f.ctx)
	}
	t.Fatal("the lifecycle queue did not run dry")
}

// takeEvents returns the events recorded since the last call.
func (f *fixture) takeEvents() []string {
	var out []string
	for {
		select {
		case e := <-f.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// eventsWith returns the events whose text contains every part.
func eventsWith(events []string, parts ...string) []string {
	var out []string
next:
	for _, e := range events {
		for _, p := range parts {
			if !strings.Contains(e, p) {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// eventually polls cond until it holds, or fails the test after a deadline.
func eventually(t *testing.T, cond func() bool, what string, args ...any) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting for "+what, args...)
	}
}

// condition returns u's condition of type ct, or nil.
func condition(u *v1alpha1.QueueUnit, ct string) *metav1.Condition {
	return meta.FindStatusCondition(u.Status.Conditions, ct)
}

// wantWaiting fails unless u says it waits with condition reason reason and a
// message starting with prefix.
func wantWaiting(t *testing.T, u *v1alpha1.QueueUnit, reason, prefix string) {
	t.Helper()
	c := condition(u, v1alpha1.ConditionQuotaReserved)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reason {
		t.Fatalf("%s: QuotaReserved = %+v, want False with reason %s", u.Name, c, reason)
	}
	if u.Status.Phase != v1alpha1.QueueUnitPhaseEnqueued {
		t.Errorf("%s: phase = %s, want Enqueued", u.Name, u.Status.Phase)
	}
	if !strings.HasPrefix(u.Status.Message, prefix) || c.Message != u.Status.Message {
		t.Errorf("%s: message = %q (condition %q), want it to start with %q in both", u.Name, u.Status.Message, c.Message, prefix)
	}
}

// pending reports whether unit key waits in queue name.
func (f *fixture) pendingIn(name, key string) bool {
	units, _ := f.s.env.queues.Pending(name)
	for _, p := range units {
		if p.Key == key {
			return true
		}
	}
	return false
}
