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

package badinput

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	jobextapp "github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	schedapp "github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

const (
	// tenant is the namespace of the tenants' jobs; other is a second one.
	tenant = "tenant"
	other  = "other"
	// goodQuota has room for every probe.
	goodQuota   = "good"
	waitTimeout = 30 * time.Second
)

var env *framework.Env

// stopBinaries stops koord-queue and koord-queue-controllers before the
// control plane, so the API server is not kept busy while it stops.
var stopBinaries context.CancelFunc = func() {}

func TestMain(m *testing.M) {
	ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(0))))
	os.Exit(framework.RunSuite(stopFirst{m}, &env))
}

// stopFirst runs the tests, then stops the binaries the harness started.
type stopFirst struct{ m *testing.M }

func (s stopFirst) Run() int {
	code := s.m.Run()
	stopBinaries()
	return code
}

// harness is koord-queue and koord-queue-controllers running on env, with
// counters of what they write.
type harness struct {
	c        client.Client
	registry *prometheus.Registry

	mu sync.Mutex
	// writes counts the MODIFIED events per object ("Kind ns/name") seen
	// on a watch since the harness started.
	writes map[string]int
	probes int
}

var (
	setupOnce sync.Once
	shared    *harness
	setupErr  error
)

// setup starts the shared harness once for every test of the package.
func setup(t *testing.T) *harness {
	t.Helper()
	setupOnce.Do(func() { shared, setupErr = start() })
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return shared
}

func start() (*harness, error) {
	ctx, cancel := context.WithCancel(context.Background())
	stopBinaries = cancel
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: jobextapp.NewScheme()})
	if err != nil {
		return nil, err
	}
	h := &harness{c: c, registry: prometheus.NewRegistry(), writes: map[string]int{}}
	for _, ns := range []string{tenant, other} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
			return nil, err
		}
	}
	if err := installPolicies(ctx, c); err != nil {
		return nil, err
	}
	if err := installTenantRoles(ctx, c); err != nil {
		return nil, err
	}
	for _, list := range []client.ObjectList{&schedv1alpha1.QueueUnitList{}, &batchv1.JobList{}, &eqv1alpha1.ElasticQuotaList{}} {
		w, err := c.Watch(ctx, list)
		if err != nil {
			return nil, fmt.Errorf("watch: %w", err)
		}
		go h.count(w)
	}

	// koord-queue, as system:masters (the envtest admin), like its own
	// ServiceAccount as far as these cases go.
	o := schedapp.NewOptions()
	o.LeaderElect = false
	o.MetricsBindAddress = "0"
	o.MetricsRegistry = h.registry
	if err := o.Complete(); err != nil {
		return nil, err
	}
	sctx := klog.NewContext(ctx, klog.Background())
	go func() {
		if err := schedapp.RunWithConfig(sctx, env.Config, o); err != nil {
			fmt.Fprintln(os.Stderr, "koord-queue stopped:", err)
		}
	}()

	// koord-queue-controllers with the batch Job extension on both namespaces.
	jo := jobextapp.NewOptions()
	jo.EnabledExtensions = []string{"job"}
	jo.LeaderElect = false
	jo.MetricsBindAddress = "0"
	jo.HealthProbeBindAddress = "0"
	jo.SkipNameValidation = true
	jo.WatchNamespaces = []string{tenant, other}
	mgr, err := jobextapp.NewManager(env.Config, jo, clock.RealClock{})
	if err != nil {
		return nil, fmt.Errorf("koord-queue-controllers: %w", err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "koord-queue-controllers stopped:", err)
		}
	}()

	if err := c.Create(ctx, quota(tenant, goodQuota, "", "100", "100")); err != nil {
		return nil, fmt.Errorf("good quota: %w", err)
	}
	return h, nil
}

// installPolicies applies every ValidatingAdmissionPolicy of config/policy
// and waits until the API server enforces the ElasticQuota one.
func installPolicies(ctx context.Context, c client.Client) error {
	files, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "config", "policy", "*.yaml"))
	if err != nil {
		return fmt.Errorf("list config/policy: %w", err)
	}
	if len(files) == 0 {
		return fmt.Errorf("no policies in config/policy")
	}
	for _, f := range files {
		objs, err := framework.ReadObjects(f)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if err := c.Create(ctx, o); err != nil {
				return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
			}
		}
	}
	// The API server loads policies from an informer: dry-run a quota the
	// policy refuses until it is refused.
	return framework.Eventually(ctx, waitTimeout, func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, quota(tenant, "policy-probe", "", "2", "1"), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "spec.min"), nil
	})
}

// installTenantRoles applies the chart's tenant ClusterRoles (view and edit),
// rendered by helm, and binds tenant user alice to edit in namespace tenant.
func installTenantRoles(ctx context.Context, c client.Client) error {
	helm := os.Getenv("HELM")
	if helm == "" {
		helm = filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "helm")
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command(helm, "template", "koord-queue", filepath.Join(framework.RepoRoot(), "charts", "koord-queue"),
		"--namespace", "koord-queue", "--show-only", "templates/security.yaml")
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("helm template (helm from $HELM or KUBEBUILDER_ASSETS; 'hack/tools.sh helm' builds it): %w: %s", err, stderr.String())
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("badinput-security-%d.yaml", os.Getpid()))
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		return err
	}
	defer func() { _ = os.Remove(path) }()
	objs, err := framework.ReadObjects(path)
	if err != nil {
		return err
	}
	roles := 0
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" {
			continue
		}
		roles++
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("ClusterRole %s: %w", o.GetName(), err)
		}
	}
	if roles == 0 {
		return fmt.Errorf("the chart's security.yaml renders no ClusterRole")
	}
	return c.Create(ctx, &rbacBinding)
}

func (h *harness) count(w watch.Interface) {
	for ev := range w.ResultChan() {
		if ev.Type != watch.Modified {
			continue
		}
		o, ok := ev.Object.(client.Object)
		if !ok {
			continue
		}
		h.mu.Lock()
		h.writes[writeKey(o)]++
		h.mu.Unlock()
	}
}

func writeKey(o client.Object) string {
	kind := fmt.Sprintf("%T", o)
	if u, ok := o.(*unstructured.Unstructured); ok {
		kind = u.GetKind()
	}
	kind = kind[strings.LastIndex(kind, ".")+1:]
	return kind + " " + o.GetNamespace() + "/" + o.GetName()
}

// writesOf is how many updates of each object were seen.
func (h *harness) writesOf(objs ...client.Object) map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for _, o := range objs {
		out[writeKey(o)] = h.writes[writeKey(o)]
	}
	return out
}

// counter sums a counter of the scheduler's registry (scheduling passes)
// or of controller-runtime's (reconciles).
func counter(g prometheus.Gatherer, name string) float64 {
	mfs, err := g.Gather()
	if err != nil {
		return -1
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// probe submits a good job to the good quota and waits until it is admitted
// and its job resumed: whatever the case did, other units still move. It
// deletes the job afterwards.
func (h *harness) probe(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	h.probes++
	name := fmt.Sprintf("probe-%d", h.probes)
	h.mu.Unlock()
	j := job(tenant, name, goodQuota, "100m")
	create(t, j)
	waitJobResumed(t, tenant, name)
	if err := h.c.Delete(context.Background(), j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
}

// bounded checks that the objects of a case are not written in a loop and
// the scheduler and the controllers do not spin: across two probes (each a
// full round of admission, run after the case's own checks), each object
// gets at most maxWrites updates,
// and the scheduling passes and reconciles stay within a bound a hot loop
// would pass in milliseconds.
func (h *harness) bounded(t *testing.T, objs ...client.Object) {
	t.Helper()
	before := h.writesOf(objs...)
	passes := counter(h.registry, "koord_queue_scheduling_passes_total")
	reconciles := counter(ctrlmetrics.Registry, "controller_runtime_reconcile_total")
	h.probe(t)
	h.probe(t)
	after := h.writesOf(objs...)
	const maxWrites = 3
	for k, n := range after {
		if n-before[k] > maxWrites {
			t.Errorf("%s was written %d times across two probes: a hot loop", k, n-before[k])
		}
	}
	// The counters must be live, or the checks below would pass vacuously.
	if passes <= 0 || reconciles <= 0 {
		t.Fatalf("no scheduling passes (%v) or reconciles (%v) counted: the metrics are not read", passes, reconciles)
	}
	h.mu.Lock()
	seen := len(h.writes)
	h.mu.Unlock()
	if seen == 0 {
		t.Fatal("the watch saw no update at all: writes are not counted")
	}
	if d := counter(h.registry, "koord_queue_scheduling_passes_total") - passes; d > 100 {
		t.Errorf("%v scheduling passes across two probes: a hot loop", d)
	}
	if d := counter(ctrlmetrics.Registry, "controller_runtime_reconcile_total") - reconciles; d > 100 {
		t.Errorf("%v reconciles across two probes: a hot loop", d)
	}
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := shared.c.Create(context.Background(), o); err != nil {
			t.Fatalf("create %s %s: %v", writeKey(o), o.GetName(), err)
		}
	}
}

func quota(ns, name, parent, min, max string) *eqv1alpha1.ElasticQuota {
	eq := &eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{eqv1alpha1.ParentLabel: parent}},
	}
	if min != "" {
		eq.Spec.Min = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(min)}
	}
	if max != "" {
		eq.Spec.Max = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(max)}
	}
	return eq
}

// job is a suspended batch Job of one pod asking cpu ("" asks nothing),
// labelled with quota q.
func job(ns, name, q, cpu string) *batchv1.Job {
	c := corev1.Container{Name: "c", Image: "busybox"}
	if cpu != "" {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{schedv1alpha1.QuotaNameLabel: q}},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{c},
			}},
		},
	}
}

func eventually(t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := framework.Eventually(context.Background(), waitTimeout, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func waitJobResumed(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, "job "+ns+"/"+name+" resumed", func(ctx context.Context) (bool, error) {
		j := &batchv1.Job{}
		if err := shared.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, err
		}
		return !ptr.Deref(j.Spec.Suspend, true), nil
	})
}

// unitOf waits for the QueueUnit of job ns/name and for cond on it.
func unitOf(t *testing.T, ns, name, what string, cond func(*schedv1alpha1.QueueUnit) bool) *schedv1alpha1.QueueUnit {
	t.Helper()
	var found *schedv1alpha1.QueueUnit
	eventually(t, what+" (unit of job "+ns+"/"+name+")", func(ctx context.Context) (bool, error) {
		list := &schedv1alpha1.QueueUnitList{}
		if err := shared.c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for i := range list.Items {
			u := &list.Items[i]
			if u.Spec.ConsumerRef != nil && u.Spec.ConsumerRef.Kind == "Job" && u.Spec.ConsumerRef.Name == name {
				found = u
				return cond(u), nil
			}
		}
		return false, nil
	})
	return found
}

// waitingWith is a unit that is not admitted and whose message says want.
func waitingWith(want string) func(*schedv1alpha1.QueueUnit) bool {
	return func(u *schedv1alpha1.QueueUnit) bool {
		return u.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued && strings.Contains(u.Status.Message, want)
	}
}

func admitted(u *schedv1alpha1.QueueUnit) bool {
	return u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued || u.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning
}

// warning waits for a Warning event of reason on the object of kind ns/name
// whose message says want.
func warning(t *testing.T, kind, ns, name, reason, want string) {
	t.Helper()
	var seen []string
	eventually(t, "Warning "+reason+" on "+kind+" "+ns+"/"+name+" saying "+want, func(ctx context.Context) (bool, error) {
		list := &corev1.EventList{}
		if err := shared.c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, e := range list.Items {
			if e.InvolvedObject.Kind != kind || e.InvolvedObject.Name != name {
				continue
			}
			seen = append(seen, e.Type+" "+e.Reason+": "+e.Message)
			if e.Type == corev1.EventTypeWarning && e.Reason == reason && strings.Contains(e.Message, want) {
				return true, nil
			}
		}
		return false, fmt.Errorf("events seen: %q", seen)
	})
}

// refused checks that err is the API server's refusal naming field.
func refused(t *testing.T, err error, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want a refusal naming %s", field)
	}
	if !strings.Contains(err.Error(), field) {
		t.Fatalf("refused without naming %s: %v", field, err)
	}
	t.Logf("refused: %v", err)
}

// impersonatedConfig is the admin's configuration acting as user.
func impersonatedConfig(user string) *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	return cfg
}

// waitFor polls cond until it holds or the wait times out.
func waitFor(ctx context.Context, cond func(context.Context) bool) error {
	return framework.Eventually(ctx, waitTimeout, func(ctx context.Context) (bool, error) { return cond(ctx), nil })
}
