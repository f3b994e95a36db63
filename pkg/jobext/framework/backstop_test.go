package framework

import (
	"context"
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

// TestBackstop: a job that asked for the queue but runs unsuspended without a
// unit (created before the install, or while the webhook was down) is
// suspended and queued, even after it started and even with
// --manage-all-jobs, which alone would leave a started job alone.
func TestBackstop(t *testing.T) {
	s := testScheme()
	sets := []PodSet{{Name: "main", Count: 1}}
	running := JobStatus{PodSets: []PodSetStatus{{Name: "main", Running: 1}}}
	finished := JobStatus{Finished: true}
	labelled := map[string]string{schedv1alpha1.QuotaNameLabel: "q"}
	cases := map[string]struct {
		labels    map[string]string
		namespace string
		status    JobStatus
		manageAll bool
		wantHeld  bool
	}{
		"labelled, started, not suspended":    {labels: labelled, status: running, wantHeld: true},
		"labelled, never started":             {labels: labelled, wantHeld: true},
		"labelled, started, manage-all":       {labels: labelled, status: running, manageAll: true, wantHeld: true},
		"labelled in kube-system":             {labels: labelled, namespace: KubeSystemNamespace, status: running, wantHeld: true},
		"labelled but finished":               {labels: labelled, status: finished},
		"unlabelled, started":                 {status: running},
		"unlabelled, started, manage-all":     {status: running, manageAll: true},
		"unlabelled, not started, manage-all": {manageAll: true, wantHeld: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := tc.namespace
			if ns == "" {
				ns = "team"
			}
			job := newFakeJob("j", tc.labels, nil, sets)
			job.cm.Namespace = ns
			job.cm.Data["suspend"] = "false"
			ext := &Extension{
				Name:      "fake",
				GVK:       corev1.SchemeGroupVersion.WithKind("ConfigMap"),
				NewObject: func() client.Object { return &corev1.ConfigMap{} },
				Wrap: func(o client.Object) (GenericJob, error) {
					return &fakeJob{cm: o.(*corev1.ConfigMap), sets: sets, status: tc.status}, nil
				},
			}
			c := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&schedv1alpha1.QueueUnit{}).
				WithObjects(job.cm, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}).Build()
			r := NewReconciler(c, ext, events.NewFakeRecorder(10), clocktesting.NewFakeClock(time.Now()), ReconcilerOptions{
				ManageAllJobs:     tc.manageAll,
				ManagedNamespaces: DefaultNamespaceSelector("kq"),
			})
			ctx := context.Background()
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "j"}}); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(job.cm), cm); err != nil {
				t.Fatal(err)
			}
			if got := cm.Data["suspend"] == "true"; got != tc.wantHeld {
				t.Errorf("job suspended = %v, want %v", got, tc.wantHeld)
			}
			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "j-fake"}, &schedv1alpha1.QueueUnit{})
			if gotUnit := err == nil; gotUnit != tc.wantHeld {
				t.Errorf("unit exists = %v (%v), want %v", gotUnit, err, tc.wantHeld)
			}
		})
	}
}
