package framework

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// TestManageAllJobs checks what --manage-all-jobs takes over: only jobs in the
// selected namespaces, never a started job, and unlabelled jobs in
// --default-quota when set.
func TestManageAllJobs(t *testing.T) {
	s := testScheme()
	sets := []PodSet{{Name: "main", Count: 1}}
	running := JobStatus{PodSets: []PodSetStatus{{Name: "main", Running: 1}}}
	cases := map[string]struct {
		namespace    string
		suspended    bool
		status       JobStatus
		defaultQuota string
		wantUnit     bool
		wantSuspend  bool
		wantQuota    string
		wantEvent    string
	}{
		"user namespace, unsuspended": {namespace: "team", wantUnit: true, wantSuspend: true},
		"kube-system":                 {namespace: "kube-system"},
		"release namespace":           {namespace: "kq"},
		"started job left alone":      {namespace: "team", status: running, wantEvent: EventLeftAlone},
		"started but suspended":       {namespace: "team", suspended: true, status: running, wantUnit: true, wantSuspend: true},
		"default quota":               {namespace: "team", defaultQuota: "dq", wantUnit: true, wantSuspend: true, wantQuota: "dq"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := newFakeJob("j", nil, nil, sets)
			job.cm.Namespace = tc.namespace
			job.cm.Data["suspend"] = boolString(tc.suspended)
			ext := &Extension{
				Name:      "fake",
				GVK:       corev1.SchemeGroupVersion.WithKind("ConfigMap"),
				NewObject: func() client.Object { return &corev1.ConfigMap{} },
				Wrap: func(o client.Object) (GenericJob, error) {
					return &fakeJob{cm: o.(*corev1.ConfigMap), sets: sets, status: tc.status}, nil
				},
			}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(job.cm,
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.namespace}}).Build()
			rec := events.NewFakeRecorder(10)
			r := NewReconciler(c, ext, rec, clocktesting.NewFakeClock(time.Now()), ReconcilerOptions{
				ManageAllJobs:     true,
				ManagedNamespaces: DefaultNamespaceSelector("kq"),
				DefaultQuota:      tc.defaultQuota,
			})
			ctx := context.Background()
			req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: tc.namespace, Name: "j"}}
			for range 2 {
				if _, err := r.Reconcile(ctx, req); err != nil {
					t.Fatalf("reconcile: %v", err)
				}
			}
			unit := &schedv1alpha1.QueueUnit{}
			err := c.Get(ctx, client.ObjectKey{Namespace: tc.namespace, Name: "j-fake"}, unit)
			if gotUnit := err == nil; gotUnit != tc.wantUnit {
				t.Fatalf("unit exists = %v (%v), want %v", gotUnit, err, tc.wantUnit)
			}
			if tc.wantUnit {
				if got := unit.Labels[schedv1alpha1.QuotaNameLabel]; got != tc.wantQuota || unit.Spec.Queue != tc.wantQuota {
					t.Errorf("unit quota label %q queue %q, want %q", got, unit.Spec.Queue, tc.wantQuota)
				}
				if _, noQuota := unit.Annotations[NoQuotaAnnotation]; noQuota != (tc.wantQuota == "") {
					t.Errorf("annotations %v, want %s only without a quota", unit.Annotations, NoQuotaAnnotation)
				}
			}
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(job.cm), cm); err != nil {
				t.Fatal(err)
			}
			if got := cm.Data["suspend"] == "true"; got != tc.wantSuspend {
				t.Errorf("job suspended = %v, want %v", got, tc.wantSuspend)
			}
			var got []string
			for len(rec.Events) > 0 {
				if e := <-rec.Events; !strings.Contains(e, EventQueueUnitCreated) && !strings.Contains(e, EventSuspended) {
					got = append(got, e)
				}
			}
			switch {
			case tc.wantEvent == "" && len(got) > 0:
				t.Errorf("events %q, want none", got)
			case tc.wantEvent != "" && (len(got) != 1 || !strings.Contains(got[0], tc.wantEvent)):
				t.Errorf("events %q, want one %s over two reconciles", got, tc.wantEvent)
			}
		})
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestDefaultQuotaGivesWaitingUnitsAHome: units made without a quota get
// --default-quota once the controllers run with it, while they wait.
func TestDefaultQuotaGivesWaitingUnitsAHome(t *testing.T) {
	s := testScheme()
	sets := []PodSet{{Name: "main", Count: 1}}
	job := newFakeJob("j", nil, nil, sets)
	ext := &Extension{
		Name:      "fake",
		GVK:       corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		NewObject: func() client.Object { return &corev1.ConfigMap{} },
		Wrap: func(o client.Object) (GenericJob, error) {
			return &fakeJob{cm: o.(*corev1.ConfigMap), sets: sets}, nil
		},
	}
	c := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&schedv1alpha1.QueueUnit{}).
		WithObjects(job.cm, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}).Build()
	ctx := context.Background()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "j"}}
	unitKey := client.ObjectKey{Namespace: "ns", Name: "j-fake"}
	run := func(defaultQuota string) *schedv1alpha1.QueueUnit {
		t.Helper()
		r := NewReconciler(c, ext, events.NewFakeRecorder(10), clocktesting.NewFakeClock(time.Now()),
			ReconcilerOptions{ManageAllJobs: true, DefaultQuota: defaultQuota})
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		u := &schedv1alpha1.QueueUnit{}
		if err := c.Get(ctx, unitKey, u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	if u := run(""); u.Labels[schedv1alpha1.QuotaNameLabel] != "" || u.Annotations[NoQuotaAnnotation] != NoQuotaMessage {
		t.Fatalf("unit without --default-quota: labels %v annotations %v", u.Labels, u.Annotations)
	}
	u := run("dq")
	if u.Labels[schedv1alpha1.QuotaNameLabel] != "dq" || u.Spec.Queue != "dq" {
		t.Errorf("waiting unit after --default-quota: label %q queue %q, want dq", u.Labels[schedv1alpha1.QuotaNameLabel], u.Spec.Queue)
	}
	if _, ok := u.Annotations[NoQuotaAnnotation]; ok {
		t.Errorf("unit in the default quota still says it has none")
	}
}
