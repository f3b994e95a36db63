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

package invariants

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

func newModel() *Checker {
	return emptyChecker()
}

// charged is a unit of quota admitted with cpu milli-CPUs (one replica).
func charged(job, quota, phase string, cpu int64) *unitState {
	u := unit(job, phase, 1)
	u.quota, u.charge = quota, amounts{corev1.ResourceCPU: cpu}
	return u
}

func pod(job, quota string, cpu int64, phase corev1.PodPhase, deleting bool) *podState {
	finished := phase == corev1.PodSucceeded || phase == corev1.PodFailed
	return &podState{
		quota: quota, job: job, requests: amounts{corev1.ResourceCPU: cpu},
		live: !finished && !deleting, terminating: !finished && deleting,
		running: !finished && !deleting && phase == corev1.PodRunning,
	}
}

// attempt sets the unit's status.attempts.
func attempt(u *unitState, n int64) *unitState {
	u.attempts = n
	return u
}

func unit(job string, phase string, replicas int64) *unitState {
	return &unitState{job: job, phase: phaseOf(phase), replicas: replicas}
}

// TestModel feeds events out of order and checks that they are judged in
// resourceVersion order, and that each broken rule is found once.
func TestModel(t *testing.T) {
	cases := []struct {
		name   string
		events []event
		want   map[string]int
	}{
		{
			name: "admitted then running, in rv order though pushed backwards",
			events: []event{
				{rv: 3, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 1000, corev1.PodRunning, false)},
				{rv: 2, key: "ns/j1", unit: unit("ns/j1", "Dequeued", 1)},
				{rv: 1, key: "ns/j1", unit: unit("ns/j1", "Enqueued", 0)},
			},
			want: map[string]int{},
		},
		{
			name: "running before admission",
			events: []event{
				{rv: 1, key: "ns/j1", unit: unit("ns/j1", "Enqueued", 0)},
				{rv: 2, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 1000, corev1.PodRunning, false)},
				{rv: 3, key: "ns/j1", unit: unit("ns/j1", "Dequeued", 1)},
			},
			want: map[string]int{"running-without-admission": 1},
		},
		{
			name: "quota of the parent exceeded by two leaves; deleting pods counted apart",
			events: []event{
				{rv: 1, key: "ns/j1", unit: unit("ns/j1", "Running", 1)},
				{rv: 2, key: "ns/j2", unit: unit("ns/j2", "Running", 1)},
				{rv: 3, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 3000, corev1.PodRunning, false)},
				{rv: 4, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 3000, corev1.PodRunning, true)},
				{rv: 5, key: "ns/p2", isPod: true, pod: pod("ns/j2", "other", 3000, corev1.PodRunning, false)},
				{rv: 6, key: "ns/p3", isPod: true, pod: pod("ns/j1", "leaf", 3000, corev1.PodPending, false)},
			},
			want: map[string]int{"quota-exceeded": 1, "more-pods-than-admitted": 0},
		},
		{
			name: "units admitted above the parent's max before any pod starts",
			events: []event{
				{rv: 1, key: "ns/a", unit: charged("ns/j1", "leaf", "Reserved", 3000)},
				{rv: 2, key: "ns/b", unit: charged("ns/j2", "other", "Dequeued", 3000)},
				{rv: 3, key: "ns/b", unit: charged("ns/j2", "other", "Succeed", 3000)},
				{rv: 4, key: "ns/c", unit: charged("ns/j3", "other", "Dequeued", 1000)},
			},
			want: map[string]int{"quota-overcharged": 1, "quota-exceeded": 0},
		},
		{
			name: "units within the max, one given back before the next",
			events: []event{
				{rv: 1, key: "ns/a", unit: charged("ns/j1", "leaf", "Dequeued", 3000)},
				{rv: 2, key: "ns/a", unit: charged("ns/j1", "leaf", "Enqueued", 3000)},
				{rv: 3, key: "ns/b", unit: charged("ns/j2", "other", "Dequeued", 4000)},
			},
			want: map[string]int{},
		},
		{
			name: "two units of one job admitted at once, and more pods than admitted",
			events: []event{
				{rv: 1, key: "ns/a", unit: unit("ns/j1", "Dequeued", 1)},
				{rv: 2, key: "ns/b", unit: unit("ns/j1", "Dequeued", 1)},
				{rv: 3, key: "ns/b", unit: unit("ns/j1", "Succeed", 1)},
				{rv: 4, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 1000, corev1.PodRunning, false)},
				{rv: 5, key: "ns/p2", isPod: true, pod: pod("ns/j1", "leaf", 1000, corev1.PodPending, false)},
			},
			want: map[string]int{"admitted-twice": 1, "more-pods-than-admitted": 1},
		},
		{
			name: "a unit admitted again while it holds quota; and once more after an eviction (allowed)",
			events: []event{
				{rv: 1, key: "ns/a", unit: attempt(unit("ns/j1", "Dequeued", 1), 1)},
				{rv: 2, key: "ns/a", unit: attempt(unit("ns/j1", "Running", 1), 1)},
				{rv: 3, key: "ns/a", unit: attempt(unit("ns/j1", "Dequeued", 1), 2)},
				{rv: 4, key: "ns/a", unit: attempt(unit("ns/j1", "Enqueued", 0), 2)},
				{rv: 5, key: "ns/a", unit: attempt(unit("ns/j1", "Enqueued", 0), 3)},
				{rv: 6, key: "ns/a", unit: attempt(unit("ns/j1", "Dequeued", 1), 4)},
			},
			want: map[string]int{"admitted-again": 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newModel()
			c.quotas["parent"] = quotaNode{max: amounts{corev1.ResourceCPU: 4000}}
			c.quotas["leaf"] = quotaNode{parent: "parent", max: amounts{corev1.ResourceCPU: 8000}}
			c.quotas["other"] = quotaNode{parent: "parent", max: amounts{corev1.ResourceCPU: 8000}}
			for i, ev := range tc.events {
				ev.seq = int64(i)
				c.buffer = append(c.buffer, ev)
			}
			c.apply(true)
			if c.report.PodEvents+c.report.UnitEvents != len(tc.events) {
				t.Fatalf("applied %d events, want %d", c.report.PodEvents+c.report.UnitEvents, len(tc.events))
			}
			for kind, n := range tc.want {
				if got := c.report.ViolationCounts[kind]; got != n {
					t.Errorf("%s: %d violations, want %d (all: %+v)", kind, got, n, c.report.Violations)
				}
			}
			if len(tc.want) == 0 && c.report.Total() != 0 {
				t.Errorf("violations %+v, want none", c.report.Violations)
			}
		})
	}
}

func TestOverMaxWithPodsBeingDeleted(t *testing.T) {
	c := newModel()
	c.quotas["leaf"] = quotaNode{max: amounts{corev1.ResourceCPU: 4000}}
	c.buffer = []event{
		{rv: 1, seq: 1, key: "ns/j1", unit: unit("ns/j1", "Running", 1)},
		{rv: 2, seq: 2, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 3000, corev1.PodRunning, false)},
		{rv: 3, seq: 3, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 3000, corev1.PodRunning, true)},
		{rv: 4, seq: 4, key: "ns/j2", unit: unit("ns/j2", "Running", 1)},
		{rv: 5, seq: 5, key: "ns/p2", isPod: true, pod: pod("ns/j2", "leaf", 3000, corev1.PodRunning, false)},
	}
	c.apply(true)
	if c.report.Total() != 0 || c.report.OverMaxWithPodsBeingDeleted != 1 {
		t.Fatalf("violations %v, over max with deleting pods %d; want none and 1", c.report.ViolationCounts, c.report.OverMaxWithPodsBeingDeleted)
	}
}

// A quota above its max counting pods being deleted is allowed for a while;
// past TerminatingBound it is a violation, found at the next event or at
// the end of the run.
func TestTerminatingExcessIsBounded(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		lastEvent time.Duration // after the excess began
		end       time.Duration
		want      int
	}{
		{name: "gone within the bound", lastEvent: TerminatingBound / 2, end: 2 * TerminatingBound, want: 0},
		{name: "still there at an event past the bound", lastEvent: TerminatingBound + time.Second, end: TerminatingBound + 2*time.Second, want: 1},
		{name: "still there at the end past the bound", lastEvent: time.Second, end: TerminatingBound + time.Second, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newModel()
			c.quotas["leaf"] = quotaNode{max: amounts{corev1.ResourceCPU: 4000}}
			c.buffer = []event{
				{rv: 1, seq: 1, seen: t0, key: "ns/j1", unit: unit("ns/j1", "Running", 1)},
				{rv: 2, seq: 2, seen: t0, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 3000, corev1.PodRunning, false)},
				{rv: 3, seq: 3, seen: t0, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 3000, corev1.PodRunning, true)},
				{rv: 4, seq: 4, seen: t0, key: "ns/j2", unit: unit("ns/j2", "Running", 1)},
				{rv: 5, seq: 5, seen: t0, key: "ns/p2", isPod: true, pod: pod("ns/j2", "leaf", 3000, corev1.PodRunning, false)},
			}
			last := event{rv: 6, seq: 6, seen: t0.Add(tc.lastEvent), key: "ns/j2", unit: unit("ns/j2", "Running", 1)}
			if tc.want == 0 {
				// The pod being deleted is gone.
				last = event{rv: 6, seq: 6, seen: t0.Add(tc.lastEvent), key: "ns/p1", isPod: true}
			}
			c.buffer = append(c.buffer, last)
			c.apply(true)
			c.report.Ended = t0.Add(tc.end)
			c.judgeLeavingAtEnd()
			if got := c.report.ViolationCounts["terminating-excess"]; got != tc.want {
				t.Errorf("terminating-excess: %d, want %d (%v)", got, tc.want, c.report.Violations)
			}
			if c.report.OverMaxWithPodsBeingDeleted != 1 {
				t.Errorf("over max with pods being deleted %d times, want 1", c.report.OverMaxWithPodsBeingDeleted)
			}
		})
	}
}

// A job the webhook never stamped may run unadmitted until the backstop
// suspends it, for UnheldBound at most; a stamped one may not at all.
func TestUnheldJobsAreBounded(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		stamped   bool
		lastEvent time.Duration // after its pod began running
		gone      bool          // the last event deletes the pod
		end       time.Duration
		want      map[string]int
	}{
		{name: "missed, suspended within the bound", lastEvent: UnheldBound / 2, gone: true, end: 2 * UnheldBound, want: map[string]int{}},
		{name: "missed, running at an event past the bound", lastEvent: UnheldBound + time.Second, end: UnheldBound + 2*time.Second,
			want: map[string]int{"backstop-late": 1}},
		{name: "missed, running at the end past the bound", lastEvent: time.Second, end: UnheldBound + time.Second,
			want: map[string]int{"backstop-late": 1}},
		{name: "stamped", stamped: true, lastEvent: time.Second, gone: true, end: time.Minute,
			want: map[string]int{"running-without-admission": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newModel()
			c.quotas["leaf"] = quotaNode{max: amounts{corev1.ResourceCPU: 4000}}
			j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j1"}}
			if tc.stamped {
				j.Annotations = map[string]string{schedv1alpha1.CreatedAtAnnotation: t0.Format(time.RFC3339Nano)}
			}
			if err := c.jobs.Add(j); err != nil {
				t.Fatal(err)
			}
			last := event{rv: 3, seq: 3, seen: t0.Add(tc.lastEvent), key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 1000, corev1.PodRunning, false)}
			if tc.gone {
				last.pod = nil
			}
			c.buffer = []event{
				{rv: 1, seq: 1, seen: t0, key: "ns/j1", unit: unit("ns/j1", "Enqueued", 1)},
				{rv: 2, seq: 2, seen: t0, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 1000, corev1.PodRunning, false)},
				last,
			}
			c.apply(true)
			c.report.Ended = t0.Add(tc.end)
			c.judgeUnheldAtEnd()
			for _, kind := range []string{"backstop-late", "running-without-admission"} {
				if got := c.report.ViolationCounts[kind]; got != tc.want[kind] {
					t.Errorf("%s: %d, want %d (%v)", kind, got, tc.want[kind], c.report.Violations)
				}
			}
			if want := 1; !tc.stamped && c.report.UnheldJobs != want {
				t.Errorf("unheld jobs %d, want %d", c.report.UnheldJobs, want)
			}
		})
	}
}

// Each fault's window keeps the peaks seen while it was the last fault,
// starting from what was held when it began.
func TestPeaksPerFault(t *testing.T) {
	c := newModel()
	c.quotas["leaf"] = quotaNode{max: amounts{corev1.ResourceCPU: 4000}}
	c.buffer = []event{{rv: 1, seq: 1, key: "ns/a", unit: charged("ns/j1", "leaf", "Dequeued", 3000)}}
	c.apply(true)
	c.RecordFault("kill", "x")
	c.buffer = []event{{rv: 2, seq: 2, key: "ns/a", unit: charged("ns/j1", "leaf", "Succeed", 3000)}}
	c.apply(true)
	c.RecordFault("pause", "y")
	c.buffer = []event{
		{rv: 3, seq: 3, key: "ns/b", unit: charged("ns/j2", "leaf", "Dequeued", 1000)},
		{rv: 4, seq: 4, key: "ns/c", unit: charged("ns/j3", "leaf", "Dequeued", 2000)},
		{rv: 5, seq: 5, key: "ns/c", unit: charged("ns/j3", "leaf", "Succeed", 2000)},
	}
	c.apply(true)
	want := []int64{3000, 3000}
	for i, w := range want {
		if got := c.faultPeaks[i].held["leaf"][corev1.ResourceCPU]; got.UsedMilli != w || got.MaxMilli != 4000 {
			t.Errorf("fault %d: peak held %+v, want %dm of 4000m", i, got, w)
		}
	}
}

// A job whose pods ran needs a write of one of its units by a replica.
func TestRanWithoutAdmissionWrite(t *testing.T) {
	c := newModel()
	c.quotas["leaf"] = quotaNode{max: amounts{corev1.ResourceCPU: 4000}}
	c.buffer = []event{
		{rv: 1, seq: 1, key: "ns/u1", unit: unit("ns/j1", "Running", 1)},
		{rv: 2, seq: 2, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 1000, corev1.PodRunning, false)},
		{rv: 3, seq: 3, key: "ns/u2", unit: unit("ns/j2", "Running", 1)},
		{rv: 4, seq: 4, key: "ns/p2", isPod: true, pod: pod("ns/j2", "leaf", 1000, corev1.PodRunning, false)},
		{rv: 5, seq: 5, key: "ns/u3", unit: unit("ns/j3", "Enqueued", 0)},
		// Created while the webhook was down, it ran to its end before
		// the backstop saw it: no unit at all.
		{rv: 6, seq: 6, key: "ns/p4", isPod: true, pod: pod("ns/j4", "leaf", 1000, corev1.PodRunning, false)},
		{rv: 7, seq: 7, key: "ns/p4", isPod: true, pod: pod("ns/j4", "leaf", 1000, corev1.PodSucceeded, false)},
	}
	stamped := map[string]string{schedv1alpha1.CreatedAtAnnotation: "2026-01-01T00:00:00Z"}
	for _, j := range []*batchv1.Job{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j1", Annotations: stamped}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j2", Annotations: stamped}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j4"}},
	} {
		if err := c.jobs.Add(j); err != nil {
			t.Fatal(err)
		}
	}
	c.apply(true)
	c.judgeRanWithoutWrite(map[string]bool{"ns/u1": true})
	if got := c.report.ViolationCounts["ran-without-admission-write"]; got != 1 || !strings.Contains(c.report.Violations[0].Message, "ns/j2") {
		t.Fatalf("violations %+v, want one for ns/j2 (ns/j1 was written, ns/j3 never ran, the webhook missed ns/j4)", c.report.Violations)
	}
}

// auditTime is the audit log's timestamp s seconds into the fixtures' day.
func auditTime(s int) string {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return t0.Add(time.Duration(s) * time.Second).Format("2006-01-02T15:04:05.000000Z07:00")
}

// auditLease is the audit event of holder's renewal of the koord-queue
// lease at second s.
func auditLease(s int, holder string) string {
	return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","stage":"ResponseComplete","verb":"update",` +
		`"user":{"username":"` + holder + `"},"objectRef":{"resource":"leases","namespace":"koord-queue","name":"koord-queue"},` +
		`"responseStatus":{"code":200},"responseObject":{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"koord-queue","namespace":"koord-queue"},` +
		`"spec":{"holderIdentity":"` + holder + `_1","renewTime":"` + auditTime(s) + `"}},` +
		`"requestReceivedTimestamp":"` + auditTime(s) + `","stageTimestamp":"` + auditTime(s) + `"}`
}

// A write answered with a server error may have landed: it counts as a
// write of its unit and is judged; a 4xx answer changed nothing.
func TestCheckAuditJudgesWritesOfUnknownOutcome(t *testing.T) {
	writeSaying := func(s int, user, unit string, code int, message string) string {
		return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","stage":"ResponseComplete","verb":"patch",` +
			`"user":{"username":"` + user + `"},"objectRef":{"resource":"queueunits","subresource":"status","namespace":"chaos","name":"` + unit + `"},` +
			`"responseStatus":{"code":` + strconv.Itoa(code) + `,"message":"` + message + `"},"requestReceivedTimestamp":"` + auditTime(s) + `","stageTimestamp":"` + auditTime(s) + `"}`
	}
	write := func(s int, user, unit string, code int) string { return writeSaying(s, user, unit, code, "") }
	log := strings.Join([]string{
		auditLease(0, "kq-0"),
		write(1, "kq-0", "u1", 504), // the leader's, landed or not: a write of u1
		write(2, "kq-1", "u2", 504), // a follower's that may have landed
		write(3, "kq-1", "u3", 403), // refused: nothing
		// A deposed replica's held request, its stream reset by the client
		// before the bytes arrived: the body was never read.
		writeSaying(4, "kq-1", "u4", 500, "body closed by handler"),
		// Any other server error may have landed.
		writeSaying(5, "kq-1", "u5", 500, "etcdserver: request timed out"),
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	fig, vs, err := CheckAudit(AuditOptions{Log: path, Writers: []string{"kq-0", "kq-1"}, LeaseName: "koord-queue", LeaseNamespace: "koord-queue"})
	if err != nil {
		t.Fatal(err)
	}
	if fig.LeaseWrites != 1 {
		t.Fatalf("read %d lease writes, want 1: the fixture does not parse", fig.LeaseWrites)
	}
	if !fig.written["chaos/u1"] || !fig.written["chaos/u2"] || fig.written["chaos/u3"] || fig.written["chaos/u4"] || !fig.written["chaos/u5"] {
		t.Errorf("units written %v, want chaos/u1, chaos/u2 and chaos/u5", fig.written)
	}
	if fig.UnknownOutcome["kq-0"] != 1 || fig.UnknownOutcome["kq-1"] != 2 || fig.RefusedWrites["kq-1"] != 1 || fig.Unread["kq-1"] != 1 {
		t.Errorf("unknown outcome %v, refused %v, unread %v", fig.UnknownOutcome, fig.RefusedWrites, fig.Unread)
	}
	if len(vs) != 2 || !strings.Contains(vs[0].Message, "chaos/u2") || !strings.Contains(vs[1].Message, "chaos/u5") {
		t.Errorf("violations %+v, want two, the follower's writes of u2 and u5", vs)
	}
}

// A write answered 504 after a takeover did not land when a later write
// of its object on the same resourceVersion succeeded; without that proof
// it is judged as a write.
func TestCheckAuditProvesWritesDidNotLand(t *testing.T) {
	write := func(s int, user, unit string, code int, rv string) string {
		return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","stage":"ResponseComplete","verb":"patch",` +
			`"user":{"username":"` + user + `"},"objectRef":{"resource":"queueunits","subresource":"status","namespace":"chaos","name":"` + unit + `"},` +
			`"requestObject":{"metadata":{"resourceVersion":"` + rv + `"},"status":{}},` +
			`"responseStatus":{"code":` + strconv.Itoa(code) + `},"requestReceivedTimestamp":"` + auditTime(s) + `","stageTimestamp":"` + auditTime(s) + `"}`
	}
	log := strings.Join([]string{
		auditLease(0, "kq-0"),
		auditLease(10, "kq-1"), // kq-1 took over
		// kq-0's held writes arrive after the takeover, answered 504.
		write(11, "kq-0", "u1", 504, "7"),
		write(11, "kq-0", "u2", 504, "8"),
		write(11, "kq-0", "u3", 504, "9"),
		// u1 was written later on version 7: the 504 did not land.
		write(12, "kq-1", "u1", 200, "7"),
		// u2's later write on version 8 was refused: no proof.
		write(12, "kq-1", "u2", 409, "8"),
		// u3's write on version 9 succeeded before the 504 arrived: no proof.
		write(10, "kq-1", "u3", 200, "9"),
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	fig, vs, err := CheckAudit(AuditOptions{Log: path, Writers: []string{"kq-0", "kq-1"}, LeaseName: "koord-queue", LeaseNamespace: "koord-queue"})
	if err != nil {
		t.Fatal(err)
	}
	if fig.LeaseWrites != 2 {
		t.Fatalf("read %d lease writes, want 2: the fixture does not parse", fig.LeaseWrites)
	}
	if fig.NotLanded["kq-0"] != 1 || fig.UnknownOutcome["kq-0"] != 2 {
		t.Errorf("not landed %v, unknown outcome %v; want kq-0's write of u1 not landed, u2 and u3 unknown", fig.NotLanded, fig.UnknownOutcome)
	}
	if len(vs) != 2 || !strings.Contains(vs[0].Message, "chaos/u2") || !strings.Contains(vs[1].Message, "chaos/u3") {
		t.Errorf("violations %+v, want kq-0's writes of u2 and u3", vs)
	}
}

// A status patch answered 504 after a takeover did not land when the
// version that followed its precondition is not what the patch makes: the
// merge patch applied there changes the status. When it changes nothing
// (the patch may have made that version), or the successor is not known,
// it is judged as a write.
func TestCheckAuditProvesStatusPatchesDidNotLand(t *testing.T) {
	write := func(unit, rv, status string) string {
		return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","stage":"ResponseComplete","verb":"patch",` +
			`"user":{"username":"kq-0"},"objectRef":{"resource":"queueunits","subresource":"status","namespace":"chaos","name":"` + unit + `"},` +
			`"requestObject":{"metadata":{"resourceVersion":"` + rv + `"},"status":` + status + `},` +
			`"responseStatus":{"code":504,"message":"context canceled"},"requestReceivedTimestamp":"` + auditTime(11) + `","stageTimestamp":"` + auditTime(11) + `"}`
	}
	admit := `{"phase":"Reserved","attempts":2,"message":null}`
	log := strings.Join([]string{
		auditLease(0, "kq-0"),
		auditLease(10, "kq-1"),
		// The next version of u1 is still Enqueued: the admission did not make it.
		write("u1", "7", admit),
		// u2's next version is Reserved after two attempts with no message:
		// what the patch makes, so it may have made it.
		write("u2", "8", admit),
		// u3's next version is not known.
		write("u3", "9", admit),
		// u4's next version differs only in a field the patch sets to what
		// it already was (attempts written as 2 either way), but keeps a
		// message the patch removes: not what the patch makes.
		write("u4", "10", admit),
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	next := map[string]string{
		"chaos/u1@7":  `{"phase":"Enqueued","attempts":1,"message":"waiting for quota"}`,
		"chaos/u2@8":  `{"phase":"Reserved","attempts":2,"quota":"q1"}`,
		"chaos/u4@10": `{"phase":"Reserved","attempts":2,"message":"waiting for quota"}`,
	}
	after := func(unit string, rv int64) ([]byte, bool) {
		s, ok := next[unit+"@"+strconv.FormatInt(rv, 10)]
		return []byte(s), ok
	}
	fig, vs, err := CheckAudit(AuditOptions{Log: path, Writers: []string{"kq-0", "kq-1"}, LeaseName: "koord-queue", LeaseNamespace: "koord-queue", UnitAfter: after})
	if err != nil {
		t.Fatal(err)
	}
	if fig.LeaseWrites != 2 {
		t.Fatalf("read %d lease writes, want 2: the fixture does not parse", fig.LeaseWrites)
	}
	if fig.NotLanded["kq-0"] != 2 || fig.UnknownOutcome["kq-0"] != 2 {
		t.Errorf("not landed %v, unknown outcome %v; want u1 and u4 not landed, u2 and u3 unknown", fig.NotLanded, fig.UnknownOutcome)
	}
	if len(vs) != 2 || !strings.Contains(vs[0].Message, "chaos/u2") || !strings.Contains(vs[1].Message, "chaos/u3") {
		t.Errorf("violations %+v, want kq-0's writes of u2 and u3", vs)
	}
}

// The controllers' writes of Jobs are judged only when asked for.
func TestCheckAuditJudgesTheResourcesNamed(t *testing.T) {
	lease := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","stage":"ResponseComplete","verb":"update",` +
		`"user":{"username":"kqc-0"},"objectRef":{"resource":"leases","namespace":"koord-queue","name":"koord-queue-controllers"},` +
		`"responseStatus":{"code":200},"responseObject":{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"koord-queue-controllers","namespace":"koord-queue"},` +
		`"spec":{"holderIdentity":"kqc-0_1","renewTime":"` + auditTime(0) + `"}},"requestReceivedTimestamp":"` + auditTime(0) + `","stageTimestamp":"` + auditTime(0) + `"}`
	job := func(s int, user string) string {
		return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","stage":"ResponseComplete","verb":"patch",` +
			`"user":{"username":"` + user + `"},"objectRef":{"resource":"jobs","namespace":"chaos","name":"j1"},` +
			`"responseStatus":{"code":200},"requestReceivedTimestamp":"` + auditTime(s) + `","stageTimestamp":"` + auditTime(s) + `"}`
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(strings.Join([]string{lease, job(1, "kqc-0"), job(2, "kqc-1")}, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := AuditOptions{Log: path, Writers: []string{"kqc-0", "kqc-1"}, LeaseName: "koord-queue-controllers", LeaseNamespace: "koord-queue"}
	if fig, vs, err := CheckAudit(o); err != nil || len(vs) != 0 || sum(fig.Writes) != 0 {
		t.Errorf("queueunits only: writes %v, violations %+v, err %v; want none", fig.Writes, vs, err)
	}
	o.Resources = []string{"queueunits", "jobs"}
	fig, vs, err := CheckAudit(o)
	if err != nil {
		t.Fatal(err)
	}
	if fig.Writes["kqc-0"] != 1 || fig.Writes["kqc-1"] != 1 {
		t.Errorf("writes %v, want one by each replica", fig.Writes)
	}
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "patch of jobs chaos/j1 by kqc-1") {
		t.Errorf("violations %+v, want one: the follower's write of the job", vs)
	}
}

// An admission made by a new leader on a version of its unit older than the
// one the unit had when that leader took the Lease was decided on a cache
// that had not caught up.
func TestDecidedOnStaleCache(t *testing.T) {
	lease := func(s int, holder string, rv int) string {
		return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","stage":"ResponseComplete","verb":"update",` +
			`"user":{"username":"` + holder + `"},"objectRef":{"resource":"leases","namespace":"koord-queue","name":"koord-queue"},` +
			`"responseStatus":{"code":200},"responseObject":{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"koord-queue","namespace":"koord-queue","resourceVersion":"` + strconv.Itoa(rv) + `"},` +
			`"spec":{"holderIdentity":"` + holder + `_1","renewTime":"` + auditTime(s) + `"}},` +
			`"requestReceivedTimestamp":"` + auditTime(s) + `","stageTimestamp":"` + auditTime(s) + `"}`
	}
	patch := func(s int, user, unit string, base int, admits bool, code int) string {
		status := `{"podState":{"running":1}}`
		if admits {
			status = `{"phase":"Dequeued","lastAllocateTime":"` + auditTime(s) + `"}`
		}
		return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","stage":"ResponseComplete","verb":"patch",` +
			`"user":{"username":"` + user + `"},"objectRef":{"resource":"queueunits","subresource":"status","namespace":"chaos","name":"` + unit + `"},` +
			`"requestObject":{"metadata":{"resourceVersion":"` + strconv.Itoa(base) + `"},"status":` + status + `},` +
			`"responseStatus":{"code":` + strconv.Itoa(code) + `},"requestReceivedTimestamp":"` + auditTime(s) + `","stageTimestamp":"` + auditTime(s) + `"}`
	}
	log := strings.Join([]string{
		lease(0, "kq-0", 10),
		patch(1, "kq-0", "u1", 5, true, 200),    // its term began at 10, u1 was at 5: fine
		lease(2, "kq-0", 20),                    // a renewal: the same term
		patch(3, "kq-0", "u1", 5, true, 200),    // still fine
		lease(20, "kq-1", 50),                   // a takeover at revision 50
		patch(21, "kq-1", "u2", 40, true, 409),  // u2 was at 45 then: stale, refused or not
		patch(22, "kq-1", "u3", 45, true, 200),  // u3 was at 45: fine
		patch(23, "kq-1", "u2", 30, false, 200), // not an admission
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newModel()
	for i, ev := range []event{
		{rv: 5, key: "chaos/u1", unit: unit("", "Enqueued", 0)},
		{rv: 40, key: "chaos/u2", unit: unit("", "Enqueued", 0)},
		{rv: 45, key: "chaos/u2", unit: unit("", "Enqueued", 0)},
		{rv: 45, key: "chaos/u3", unit: unit("", "Enqueued", 0)},
		{rv: 60, key: "chaos/u3", unit: unit("", "Enqueued", 0)},
	} {
		ev.seq = int64(i)
		c.buffer = append(c.buffer, ev)
	}
	c.apply(true)
	_, vs, err := CheckAudit(AuditOptions{Log: path, Writers: []string{"kq-0", "kq-1"}, LeaseName: "koord-queue", LeaseNamespace: "koord-queue",
		UnitVersionAt: c.versionAt})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Kind != "decided-on-stale-cache" || !strings.Contains(vs[0].Message, "chaos/u2") || !strings.Contains(vs[0].Message, "version 40") {
		t.Errorf("violations %+v, want one: kq-1's admission of u2 on version 40", vs)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestFaultFigures(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	faults := []Fault{{Kind: "kill", At: at(10)}, {Kind: "pause", At: at(40)}}
	admitted := []time.Time{at(1), at(25), at(27), at(35), at(41), at(43)}
	got := faultFigures(faults, admitted, at(100))
	if got[0].FirstAdmissionAfter != "15s" || got[0].LongestWithoutAdmission != "15s" || got[0].Admissions != 3 {
		t.Errorf("first fault: %+v", got[0])
	}
	// The last window's tail after the last admission is idle time, not a gap.
	if got[1].FirstAdmissionAfter != "1s" || got[1].LongestWithoutAdmission != "2s" || got[1].Admissions != 2 {
		t.Errorf("second fault: %+v", got[1])
	}
}

func TestJudgeWrite(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	leases := []leaseWrite{
		{user: "kq-0", holder: "h0", at: at(0), renew: at(0)},
		{user: "kq-0", holder: "h0", at: at(2), renew: at(2)},
		{user: "kq-1", holder: "h1", at: at(30), renew: at(30)},
	}
	for i := range leases {
		leases[i].holder = "host_" + leases[i].holder
	}
	userOf := map[string]string{"host_h0": "kq-0", "host_h1": "kq-1"}
	write := func(user string, received, answered float64) *auditv1.Event {
		return &auditv1.Event{
			Verb: "patch", User: authUser(user), UserAgent: "koord-queue-test",
			ObjectRef:                &auditv1.ObjectReference{Resource: "queueunits", Subresource: "status", Namespace: "ns", Name: "u"},
			RequestReceivedTimestamp: metav1.NewMicroTime(at(received)),
			StageTimestamp:           metav1.NewMicroTime(at(answered)),
		}
	}
	cases := []struct {
		name                 string
		ev                   *auditv1.Event
		violation, uncertain string
	}{
		{"leader within its renewal", write("kq-0", 3, 3.1), "", ""},
		{"leader at its deadline", write("kq-0", 14, 14.1), "", ""},
		{"leader past its deadline", write("kq-0", 14.5, 14.6), "after its last renewal", ""},
		{"before any lease", write("kq-0", -1, -0.9), "before any lease write", ""},
		{"deposed leader", write("kq-0", 31, 31.1), "held by \"host_h1\"", ""},
		{"never leader", write("kq-1", 5, 5.1), "held by \"host_h0\"", ""},
		{"in flight across a takeover", write("kq-0", 13.9, 30.5), "", "took the lease"},
		{"identity in the user agent", withAgent(write("kq-0", 3, 3.1), "koord-queue/host_h0"), "", ""},
		{"restarted replica, same user, new identity", withAgent(write("kq-0", 3, 3.1), "koord-queue/host_h2"), "held by \"host_h0\"", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, u := judgeWrite(tc.ev, leases, userOf, DefaultTolerance)
			if (tc.violation == "") != (v == "") || !strings.Contains(v, tc.violation) {
				t.Errorf("violation %q, want one containing %q", v, tc.violation)
			}
			if (tc.uncertain == "") != (u == "") || !strings.Contains(u, tc.uncertain) {
				t.Errorf("uncertain %q, want one containing %q", u, tc.uncertain)
			}
		})
	}
}

func withAgent(ev *auditv1.Event, agent string) *auditv1.Event {
	ev.UserAgent = agent
	return ev
}

func authUser(name string) authnv1.UserInfo { return authnv1.UserInfo{Username: name} }

func phaseOf(p string) schedv1alpha1.QueueUnitPhase { return schedv1alpha1.QueueUnitPhase(p) }

// TestSettleWaitsForBothWatches: Finish's settle applies only what both
// watches have passed; a pod seen before its unit's admission reached the
// checker is not judged until the unit watch catches up.
func TestSettleWaitsForBothWatches(t *testing.T) {
	c := newModel()
	var frontier atomic.Int64
	frontier.Store(1)
	c.frontierFunc = frontier.Load
	c.push(event{rv: 1, key: "ns/j1", unit: unit("ns/j1", "Enqueued", 0)})
	c.push(event{rv: 3, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 1000, corev1.PodRunning, false)})

	// The unit watch stays at rv 1: the pod waits, and what is left is told.
	c.settle(context.Background(), 300*time.Millisecond)
	if c.report.PodEvents != 0 || c.report.UnitEvents != 1 || c.report.UnsettledEvents != 1 {
		t.Fatalf("with the frontier at 1: pod events %d, unit events %d, unsettled %d; want 0, 1, 1",
			c.report.PodEvents, c.report.UnitEvents, c.report.UnsettledEvents)
	}

	// The admission (rv 2) arrives and the frontier moves past the pod.
	c.push(event{rv: 2, key: "ns/j1", unit: unit("ns/j1", "Dequeued", 1)})
	frontier.Store(3)
	c.settle(context.Background(), time.Minute)
	if c.report.PodEvents != 1 || c.report.UnitEvents != 2 || c.report.UnsettledEvents != 0 {
		t.Fatalf("with the frontier at 3: pod events %d, unit events %d, unsettled %d; want 1, 2, 0",
			c.report.PodEvents, c.report.UnitEvents, c.report.UnsettledEvents)
	}
	if len(c.report.Violations) != 0 {
		t.Fatalf("a pod running after its unit's admission was judged a violation: %+v", c.report.Violations)
	}
}

// TestRelistedWindowIsJudgedAtItsEnd: inside a window a stream listed
// instead of watching, the checker has the unit's state at the list's
// version next to the pods' states of their own versions, so it may see a
// pod running beside a unit that has already finished: that is not judged.
// At the window's end everything is judged again, so a job still running
// without a unit holding quota there is found.
func TestRelistedWindowIsJudgedAtItsEnd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []event
		want   int
		unseen int // admissions seen only as finished units
	}{
		{
			// Unit j1 went Dequeued (rv 11) and Succeed (rv 14) while the
			// unit stream could not watch; its list at 15 shows Succeed.
			name: "admitted and finished inside the window",
			events: []event{
				{rv: 1, key: "ns/j1", unit: unit("ns/j1", "Enqueued", 0)},
				{rv: 12, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 1000, corev1.PodRunning, false)},
				{rv: 13, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 1000, corev1.PodSucceeded, false)},
				{rv: 14, key: "ns/j1", unit: unit("ns/j1", "Succeed", 1)},
				{rv: 15, relist: &window{resource: "queueunits", from: 10, to: 15}},
			},
			unseen: 1,
		},
		{
			name: "still running without admission at the window's end",
			events: []event{
				{rv: 1, key: "ns/j1", unit: unit("ns/j1", "Enqueued", 0)},
				{rv: 12, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 1000, corev1.PodRunning, false)},
				{rv: 15, relist: &window{resource: "queueunits", from: 10, to: 15}},
			},
			want: 1,
		},
		{
			name: "running without admission after the window",
			events: []event{
				{rv: 1, key: "ns/j1", unit: unit("ns/j1", "Enqueued", 0)},
				{rv: 15, relist: &window{resource: "queueunits", from: 10, to: 15}},
				{rv: 16, key: "ns/p1", isPod: true, pod: pod("ns/j1", "leaf", 1000, corev1.PodRunning, false)},
			},
			want: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newModel()
			c.quotas["leaf"] = quotaNode{max: amounts{corev1.ResourceCPU: 8000}}
			for _, ev := range tc.events {
				c.push(ev)
			}
			c.apply(true)
			if got := c.report.ViolationCounts["running-without-admission"]; got != tc.want {
				t.Errorf("running-without-admission %d, want %d (all: %+v)", got, tc.want, c.report.Violations)
			}
			if c.report.AdmissionsInRelists != tc.unseen {
				t.Errorf("admissions seen only finished %d, want %d", c.report.AdmissionsInRelists, tc.unseen)
			}
			if len(c.blind) != 0 {
				t.Errorf("windows left open: %+v", c.blind)
			}
			if len(c.report.Relists) != 1 {
				t.Errorf("relists reported %+v, want one", c.report.Relists)
			}
		})
	}
}
