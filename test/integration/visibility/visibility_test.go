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

package visibility

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/debugapi"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
	"github.com/koordinator-sh/koord-queue/test/util/proc"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, &env, framework.WithAggregator()))
}

const (
	ns        = "visibility"
	otherNS   = "visibility-b"
	unitsPath = "/apis/visibility.koord-queue.x-k8s.io/v1alpha1/queues/team-a/queueunits"
)

func startScheduler(t *testing.T, visibilityPort, debugPort int, mutate ...func(*app.Options)) {
	t.Helper()
	o := app.NewOptions()
	o.LeaderElect = false
	for _, m := range mutate {
		m(o)
	}
	o.MetricsBindAddress = "0"
	o.MetricsRegistry = prometheus.NewRegistry()
	o.EnableVisibilityServer = true
	o.VisibilityBindAddress = "127.0.0.1:" + strconv.Itoa(visibilityPort)
	o.EnableAPIHandler = true
	o.APIHandlerAddress = "127.0.0.1:" + strconv.Itoa(debugPort)
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	framework.RunScheduler(t, env.Config, o)
}

// registerAPIService points the aggregator at the in-process server, as the
// chart does with Service koord-queue-visibility-server, here an ExternalName
// Service (localhost) because nothing routes cluster IPs.
func registerAPIService(t *testing.T, port int) {
	t.Helper()
	ctx := context.Background()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "koord-queue"}},
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "koord-queue-visibility-server", Namespace: "koord-queue"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
				Ports: []corev1.ServicePort{{Name: "https", Port: int32(port)}}},
		},
	} {
		if err := env.Client.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1alpha1.visibility.koord-queue.x-k8s.io"},
		"spec": map[string]any{
			"group": visibilityv1alpha1.GroupName, "version": "v1alpha1",
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100), "insecureSkipTLSVerify": true,
			"service": map[string]any{"namespace": "koord-queue", "name": "koord-queue-visibility-server", "port": int64(port)},
		},
	}}
	if err := env.Client.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	var last string
	err := framework.Eventually(ctx, 60*time.Second, func(c context.Context) (bool, error) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(svc.GroupVersionKind())
		if err := env.Client.Get(c, client.ObjectKey{Name: svc.GetName()}, got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Available" {
				last = fmt.Sprintf("%v: %v", m["reason"], m["message"])
				return m["status"] == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("APIService not Available (%s): %v", last, err)
	}
}

// kubectl runs the built kubectl with a kubeconfig and returns stdout, or
// the error with stderr.
func kubectl(t *testing.T, kubeconfig string, args ...string) ([]byte, error) {
	t.Helper()
	bin := os.Getenv("KUBECTL")
	if bin == "" {
		bin = filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

func getRaw(t *testing.T, kubeconfig, path string) visibilityv1alpha1.QueueUnitsSummary {
	t.Helper()
	out, err := kubectl(t, kubeconfig, "get", "--raw", path)
	if err != nil {
		t.Fatal(err)
	}
	var s visibilityv1alpha1.QueueUnitsSummary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	return s
}

func waitPhase(t *testing.T, name string, phase schedv1alpha1.QueueUnitPhase, withMessage bool) {
	t.Helper()
	u := &schedv1alpha1.QueueUnit{}
	err := framework.Eventually(context.Background(), 30*time.Second, func(c context.Context) (bool, error) {
		if err := env.Client.Get(c, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			return false, err
		}
		return u.Status.Phase == phase && (!withMessage || u.Status.Message != ""), nil
	})
	if err != nil {
		t.Fatalf("unit %s: phase %q message %q, want %s: %v", name, u.Status.Phase, u.Status.Message, phase, err)
	}
}

type entry struct {
	Name     string
	Position int32
	Priority int32
}

func entries(s visibilityv1alpha1.QueueUnitsSummary) []entry {
	var out []entry
	for _, it := range s.Items {
		out = append(out, entry{it.Name, it.PositionInQueue, it.Priority})
	}
	return out
}

func TestQueueUnitsThroughTheAggregator(t *testing.T) {
	ports, err := proc.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	visibilityPort, debugPort := ports[0], ports[1]
	startScheduler(t, visibilityPort, debugPort)
	registerAPIService(t, visibilityPort)

	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, utiltesting.MakeElasticQuota("team-a").Namespace(ns).Max("cpu", "4").Min("cpu", "4").
		Annotation(eqv1alpha1.NamespacesAnnotation, `["`+ns+`","`+otherNS+`"]`).Obj()); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, utiltesting.MakeQueueUnit("first", ns).Quota("team-a").Request("cpu", "4").Obj()); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, "first", schedv1alpha1.QueueUnitPhaseDequeued, false)
	for _, u := range []*schedv1alpha1.QueueUnit{
		utiltesting.MakeQueueUnit("low", ns).Quota("team-a").Request("cpu", "4").Priority(0).Obj(),
		utiltesting.MakeQueueUnit("high", ns).Quota("team-a").Request("cpu", "4").Priority(10).Obj(),
		utiltesting.MakeQueueUnit("mid", ns).Quota("team-a").Request("cpu", "2").Priority(5).Obj(),
	} {
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	// The first in line waits for quota; those behind it say so once tried.
	waitPhase(t, "high", schedv1alpha1.QueueUnitPhaseEnqueued, true)

	dir := t.TempDir()
	admin := filepath.Join(dir, "admin.kubeconfig")
	if err := env.WriteKubeconfig(admin); err != nil {
		t.Fatal(err)
	}

	t.Run("pending units in order with positions", func(t *testing.T) {
		var got visibilityv1alpha1.QueueUnitsSummary
		// The queue appears once the quota's Queue is seen; poll until all three wait.
		err := framework.Eventually(ctx, 20*time.Second, func(context.Context) (bool, error) {
			out, err := kubectl(t, admin, "get", "--raw", unitsPath)
			if err != nil {
				return false, err
			}
			got = visibilityv1alpha1.QueueUnitsSummary{}
			return json.Unmarshal(out, &got) == nil && got.Total == 3, nil
		})
		if err != nil {
			t.Fatalf("%v (last answer %+v)", err, got)
		}
		want := []entry{{"high", 1, 10}, {"mid", 2, 5}, {"low", 3, 0}}
		if fmt.Sprint(entries(got)) != fmt.Sprint(want) {
			t.Errorf("items %v, want %v", entries(got), want)
		}
		high := got.Items[0]
		if high.Namespace != ns || high.Queue != "team-a" || high.Quota != "team-a" || high.Phase != "Enqueued" ||
			high.Request.Cpu().String() != "4" || high.CreationTimestamp.IsZero() {
			t.Errorf("first item %+v", high)
		}
		if !strings.Contains(high.Message, "team-a") {
			t.Errorf("first item does not say why it waits: %q", high.Message)
		}
		// It waits for room in team-a, which first fills: the condition
		// reason of that wait in docs/protocol.md.
		if high.Reason != "InsufficientQuota" || !strings.HasPrefix(high.Message, "insufficient quota:") {
			t.Errorf("first item reason %q message %q, want InsufficientQuota with its message", high.Reason, high.Message)
		}
	})

	t.Run("limit and offset", func(t *testing.T) {
		got := getRaw(t, admin, unitsPath+"?offset=1&limit=1")
		if want := []entry{{"mid", 2, 5}}; fmt.Sprint(entries(got)) != fmt.Sprint(want) || got.Total != 3 || got.Offset != 1 {
			t.Errorf("got %v total %d offset %d, want %v total 3 offset 1", entries(got), got.Total, got.Offset, want)
		}
	})

	t.Run("by elastic quota", func(t *testing.T) {
		got := getRaw(t, admin, "/apis/visibility.koord-queue.x-k8s.io/v1alpha1/elasticquotas/team-a/queueunits")
		if want := []entry{{"high", 1, 10}, {"mid", 2, 5}, {"low", 3, 0}}; fmt.Sprint(entries(got)) != fmt.Sprint(want) {
			t.Errorf("items %v, want %v", entries(got), want)
		}
	})

	t.Run("admitted units by phase", func(t *testing.T) {
		got := getRaw(t, admin, unitsPath+"?phase=Dequeued")
		if len(got.Items) != 1 || got.Items[0].Name != "first" || got.Items[0].Request.Cpu().String() != "4" {
			t.Errorf("Dequeued: %+v", got)
		}
		if _, err := kubectl(t, admin, "get", "--raw", unitsPath+"?phase=Pending"); err == nil || !strings.Contains(err.Error(), "BadRequest") {
			t.Errorf("phase=Pending: %v, want BadRequest", err)
		}
	})

	t.Run("unknown queue is NotFound", func(t *testing.T) {
		_, err := kubectl(t, admin, "get", "--raw", "/apis/visibility.koord-queue.x-k8s.io/v1alpha1/queues/nope/queueunits")
		if err == nil || !strings.Contains(err.Error(), "NotFound") || !strings.Contains(err.Error(), `"nope" not found`) {
			t.Errorf("got %v, want NotFound", err)
		}
	})

	t.Run("user without RBAC is forbidden", func(t *testing.T) {
		data, _, err := env.UserKubeconfig("nobody")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "nobody.kubeconfig")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = kubectl(t, path, "get", "--raw", unitsPath)
		if err == nil || !strings.Contains(err.Error(), "Forbidden") || !strings.Contains(err.Error(), `User "nobody" cannot get resource "queues/queueunits"`) {
			t.Errorf("got %v, want Forbidden", err)
		}
	})

	t.Run("user with RBAC on queues/queueunits may look", func(t *testing.T) {
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "koord-queue-visibility-viewer"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{visibilityv1alpha1.GroupName},
					Resources: []string{"queues/queueunits", "elasticquotas/queueunits"}, Verbs: []string{"get"}},
				// Every namespace's units: QueueUnits listed cluster-wide.
				{APIGroups: []string{schedv1alpha1.GroupVersion.Group}, Resources: []string{"queueunits"}, Verbs: []string{"list"}},
			},
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "koord-queue-visibility-viewer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "viewer"}},
		}
		for _, o := range []client.Object{role, binding} {
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		data, _, err := env.UserKubeconfig("viewer")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "viewer.kubeconfig")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		// The server caches denials for a few seconds.
		err = framework.Eventually(ctx, 20*time.Second, func(context.Context) (bool, error) {
			out, err := kubectl(t, path, "get", "--raw", unitsPath+"?limit=1")
			return err == nil && strings.Contains(string(out), `"high"`), err
		})
		if err != nil {
			t.Error(err)
		}
	})

	t.Run("the server itself delegates authentication and authorization", func(t *testing.T) {
		// Straight to the server, not through the aggregator: client
		// certificates are checked against the cluster's client CA and access
		// by SubjectAccessReview.
		call := func(t *testing.T, cfg *rest.Config) (int, metav1.Status) {
			t.Helper()
			tlsCfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed serving certificate
			if cfg != nil {
				pair, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
				if err != nil {
					t.Fatal(err)
				}
				tlsCfg.Certificates = []tls.Certificate{pair}
			}
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}, Timeout: 10 * time.Second}
			resp, err := c.Get("https://127.0.0.1:" + strconv.Itoa(visibilityPort) + unitsPath)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var st metav1.Status
			_ = json.NewDecoder(resp.Body).Decode(&st)
			return resp.StatusCode, st
		}
		_, nobody, err := env.UserKubeconfig("nobody-direct")
		if err != nil {
			t.Fatal(err)
		}
		if code, st := call(t, nobody); code != http.StatusForbidden || st.Reason != metav1.StatusReasonForbidden {
			t.Errorf("nobody: %d %+v, want 403", code, st)
		}
		// Without credentials a caller is system:anonymous, whom the
		// cluster's RBAC lets read nothing here.
		if code, st := call(t, nil); code != http.StatusForbidden || !strings.Contains(st.Message, `"system:anonymous"`) {
			t.Errorf("anonymous: %d %+v, want 403 for system:anonymous", code, st)
		}
		_, admin, err := env.UserKubeconfig("admin-direct", "system:masters")
		if err != nil {
			t.Fatal(err)
		}
		if code, st := call(t, admin); code != http.StatusOK {
			t.Errorf("admin: %d %+v, want 200", code, st)
		}
	})

	t.Run("requests pass API Priority and Fairness on the cluster's FlowSchemas", func(t *testing.T) {
		// A FlowSchema and priority level of our own: the visibility server
		// classifies a caller by them, as kube-apiserver would, and says so
		// in each answer's headers.
		pl := &flowcontrolv1.PriorityLevelConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "visibility-readers"},
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
				Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
					NominalConcurrencyShares: ptr.To[int32](1),
					LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
				},
			},
		}
		fs := &flowcontrolv1.FlowSchema{
			ObjectMeta: metav1.ObjectMeta{Name: "visibility-readers"},
			Spec: flowcontrolv1.FlowSchemaSpec{
				PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: pl.Name},
				MatchingPrecedence:         100,
				Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
					Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "reader-direct"}}},
					ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
						Verbs: []string{"*"}, APIGroups: []string{visibilityv1alpha1.GroupName}, Resources: []string{"*"}, ClusterScope: true,
					}},
				}},
			},
		}
		for _, o := range []client.Object{pl, fs} {
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		direct := func(t *testing.T, user string, groups ...string) *http.Response {
			t.Helper()
			_, cfg, err := env.UserKubeconfig(user, groups...)
			if err != nil {
				t.Fatal(err)
			}
			pair, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
			if err != nil {
				t.Fatal(err)
			}
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
				InsecureSkipVerify: true, //nolint:gosec // self-signed serving certificate
				Certificates:       []tls.Certificate{pair},
			}}}
			resp, err := c.Get("https://127.0.0.1:" + strconv.Itoa(visibilityPort) + unitsPath)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			return resp
		}
		// The server watches the configuration: poll until it has ours.
		var last *http.Response
		err := framework.Eventually(ctx, 30*time.Second, func(context.Context) (bool, error) {
			last = direct(t, "reader-direct")
			return last.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID) == string(fs.UID), nil
		})
		if err != nil {
			t.Fatalf("never classified by FlowSchema %s (%s): %v; last answer %d under %q", fs.Name, fs.UID, err,
				last.StatusCode, last.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID))
		}
		if got := last.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID); got != string(pl.UID) {
			t.Errorf("priority level %q, want %s's %q", got, pl.Name, pl.UID)
		}
		// The limit comes before authorization: the reader has no RBAC.
		if last.StatusCode != http.StatusForbidden {
			t.Errorf("reader without RBAC: %d, want 403", last.StatusCode)
		}
		// system:masters falls under the cluster's own "exempt" FlowSchema.
		other := direct(t, "admin-apf", "system:masters")
		if got := other.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID); other.StatusCode != http.StatusOK || got == "" || got == string(fs.UID) {
			t.Errorf("system:masters: %d under FlowSchema %q; want 200 under one of the cluster's", other.StatusCode, got)
		}
		for _, o := range []client.Object{fs, pl} {
			if err := env.Client.Delete(ctx, o); err != nil {
				t.Error(err)
			}
		}
	})

	t.Run("a follower answers the same", func(t *testing.T) {
		// Someone else holds the lease: the second replica never admits, its
		// queues are fed by its informers only.
		now := metav1.NewMicroTime(time.Now())
		lease := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "koord-queue", Namespace: "koord-queue"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("someone-else"), LeaseDurationSeconds: ptr.To[int32](3600),
				AcquireTime: &now, RenewTime: &now},
		}
		if err := env.Client.Create(ctx, lease); err != nil {
			t.Fatal(err)
		}
		followerPorts, err := proc.FreePorts(2)
		if err != nil {
			t.Fatal(err)
		}
		followerPort, followerDebugPort := followerPorts[0], followerPorts[1]
		startScheduler(t, followerPort, followerDebugPort, func(o *app.Options) { o.LeaderElect = true })
		_, admin, err := env.UserKubeconfig("admin-follower", "system:masters")
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(admin.CertData, admin.KeyData)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, Certificates: []tls.Certificate{pair}}}} //nolint:gosec // self-signed serving certificate
		var got visibilityv1alpha1.QueueUnitsSummary
		var warning string
		err = framework.Eventually(ctx, 30*time.Second, func(context.Context) (bool, error) {
			resp, err := c.Get("https://127.0.0.1:" + strconv.Itoa(followerPort) + unitsPath)
			if err != nil {
				return false, nil // not listening yet
			}
			defer resp.Body.Close()
			got, warning = visibilityv1alpha1.QueueUnitsSummary{}, resp.Header.Get("Warning")
			return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&got) == nil && got.Total == 3, nil
		})
		if err != nil {
			t.Fatalf("follower: %v (last %+v)", err, got)
		}
		// Its answers say it does not lead; the leader's say nothing.
		if !strings.HasPrefix(warning, `299 - "`) || !strings.Contains(warning, "not the leader") {
			t.Errorf("follower's Warning header %q, want 299 saying it is not the leader", warning)
		}
		resp, err := c.Get("https://127.0.0.1:" + strconv.Itoa(visibilityPort) + unitsPath)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Warning") != "" {
			t.Errorf("leader: %d with Warning %q, want 200 and none", resp.StatusCode, resp.Header.Get("Warning"))
		}
		if want := []entry{{"high", 1, 10}, {"mid", 2, 5}, {"low", 3, 0}}; fmt.Sprint(entries(got)) != fmt.Sprint(want) {
			t.Errorf("follower items %v, want %v", entries(got), want)
		}
		if !strings.Contains(got.Items[0].Message, "team-a") {
			t.Errorf("follower does not say why %s waits: %q", got.Items[0].Name, got.Items[0].Message)
		}
		// Its quota tree is charged from the same objects: the same usage.
		var teamA visibilityv1alpha1.Quota
		err = framework.Eventually(ctx, 30*time.Second, func(context.Context) (bool, error) {
			resp, err := c.Get("https://127.0.0.1:" + strconv.Itoa(followerPort) + "/apis/visibility.koord-queue.x-k8s.io/v1alpha1/quotas/team-a")
			if err != nil {
				return false, err
			}
			defer resp.Body.Close()
			teamA = visibilityv1alpha1.Quota{}
			return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&teamA) == nil &&
				len(teamA.Resources) == 1 && teamA.Resources[0].Used.String() == "4" && teamA.AdmittedUnits == 1 && teamA.PendingUnits == 3, nil
		})
		if err != nil {
			t.Errorf("follower's quota team-a: %v (last %+v)", err, teamA)
		}
		held := &coordinationv1.Lease{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(lease), held); err != nil || *held.Spec.HolderIdentity != "someone-else" {
			t.Errorf("the second replica took the lease: %v %v", held.Spec.HolderIdentity, err)
		}
	})

	t.Run("debug API", func(t *testing.T) {
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(debugPort) + "/debug/queues/team-a")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var q debugapi.Queue
		if err := json.NewDecoder(resp.Body).Decode(&q); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || q.PendingCount != 3 || len(q.Pending) != 3 || q.Pending[0].Name != "high" || q.Pending[0].Message == "" {
			t.Errorf("debug queue: %d %+v", resp.StatusCode, q)
		}
		resp2, err := http.Get("http://127.0.0.1:" + strconv.Itoa(debugPort) + "/debug/quotas")
		if err != nil {
			t.Fatal(err)
		}
		defer resp2.Body.Close()
		var quotas struct{ Quotas []debugapi.Quota }
		if err := json.NewDecoder(resp2.Body).Decode(&quotas); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, q := range quotas.Quotas {
			if q.Name == "team-a" {
				found = true
				if q.Used.Cpu().String() != "4" || q.Max.Cpu().String() != "4" {
					t.Errorf("team-a: %+v", q)
				}
			}
		}
		if !found {
			t.Errorf("team-a not in %+v", quotas)
		}
	})

	t.Run("quotas", func(t *testing.T) {
		const quotasPath = "/apis/visibility.koord-queue.x-k8s.io/v1alpha1/quotas"
		var teamA visibilityv1alpha1.Quota
		err := framework.Eventually(ctx, 20*time.Second, func(context.Context) (bool, error) {
			out, err := kubectl(t, admin, "get", "--raw", quotasPath)
			if err != nil {
				return false, err
			}
			var list visibilityv1alpha1.QuotaList
			if err := json.Unmarshal(out, &list); err != nil {
				return false, err
			}
			for _, q := range list.Items {
				if q.Name == "team-a" {
					teamA = q
				}
			}
			return teamA.PendingUnits == 3, nil
		})
		if err != nil {
			t.Fatalf("team-a: %v (last %+v)", err, teamA)
		}
		if teamA.QuotaNamespace != ns || teamA.IsParent || teamA.AdmittedUnits != 1 || len(teamA.Resources) != 1 {
			t.Fatalf("team-a: %+v", teamA)
		}
		cpu := teamA.Resources[0]
		if got := fmt.Sprintf("%s min %s max %s used %s borrowed %s lent %s pending %s", cpu.Name, cpu.Min.String(), cpu.Max,
			cpu.Used.String(), cpu.Borrowed.String(), cpu.Lent.String(), cpu.Pending.String()); got != "cpu min 4 max 4 used 4 borrowed 0 lent 0 pending 10" {
			t.Errorf("team-a cpu: %s", got)
		}
		out, err := kubectl(t, admin, "get", "quotas.visibility.koord-queue.x-k8s.io", "team-a")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME PARENT PENDING ADMITTED CPU GPU" ||
			strings.Join(strings.Fields(lines[1]), " ") != "team-a koordinator-root-quota 3 1 4/4/4 -" {
			t.Errorf("kubectl get quotas team-a:\n%s", out)
		}
		// Reading them takes RBAC on quotas: list for all, get for one.
		data, _, err := env.UserKubeconfig("quota-reader")
		if err != nil {
			t.Fatal(err)
		}
		reader := filepath.Join(dir, "quota-reader.kubeconfig")
		if err := os.WriteFile(reader, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := kubectl(t, reader, "get", "--raw", quotasPath); err == nil ||
			!strings.Contains(err.Error(), `User "quota-reader" cannot list resource "quotas"`) {
			t.Errorf("without RBAC: %v, want Forbidden", err)
		}
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "quota-reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{visibilityv1alpha1.GroupName},
				Resources: []string{visibilityv1alpha1.ResourceQuotas}, Verbs: []string{"get"}}},
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "quota-reader"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "quota-reader"}},
		}
		for _, o := range []client.Object{role, binding} {
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		// get alone: one quota, not the list. The server caches denials briefly.
		err = framework.Eventually(ctx, 20*time.Second, func(context.Context) (bool, error) {
			_, err := kubectl(t, reader, "get", "--raw", quotasPath+"/team-a")
			return err == nil, nil
		})
		if err != nil {
			t.Errorf("get team-a with RBAC: %v", err)
		}
		if _, err := kubectl(t, reader, "get", "--raw", quotasPath); err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("list with get only: %v, want Forbidden", err)
		}
		// kubectl explain reads the quota's schema.
		err = framework.Eventually(ctx, 30*time.Second, func(context.Context) (bool, error) {
			out, err = kubectl(t, admin, "explain", "quotas.visibility.koord-queue.x-k8s.io.resources")
			return err == nil && strings.Contains(string(out), "borrowed"), nil
		})
		if err != nil {
			t.Errorf("kubectl explain quotas: %v\n%s", err, out)
		}
	})

	t.Run("kubectl get prints the Table", func(t *testing.T) {
		out, err := kubectl(t, admin, "get", "queues.visibility.koord-queue.x-k8s.io", "team-a", "--subresource", "queueunits")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 4 || strings.Join(strings.Fields(lines[0]), " ") != "NAMESPACE NAME POSITION PRIORITY PHASE QUEUE AGE MESSAGE" {
			t.Fatalf("output:\n%s", out)
		}
		for i, want := range []string{"visibility high 1 10 Enqueued team-a", "visibility mid 2 5 Enqueued team-a", "visibility low 3 0 Enqueued team-a"} {
			if got := strings.Join(strings.Fields(lines[i+1]), " "); !strings.HasPrefix(got, want) {
				t.Errorf("row %d: %q, want it to start with %q", i+1, got, want)
			}
		}
		wide, err := kubectl(t, admin, "get", "queues.visibility.koord-queue.x-k8s.io", "team-a", "--subresource", "queueunits", "-o", "wide")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(wide), "REQUEST") || !strings.Contains(string(wide), "cpu=4") {
			t.Errorf("-o wide:\n%s", wide)
		}
	})

	t.Run("OpenAPI reaches kubectl explain", func(t *testing.T) {
		// The aggregator fetches the documents when the APIService appears.
		var out []byte
		err := framework.Eventually(ctx, 30*time.Second, func(context.Context) (bool, error) {
			var err error
			out, err = kubectl(t, admin, "explain", "queues.visibility.koord-queue.x-k8s.io.items")
			return err == nil, err
		})
		if err != nil {
			t.Fatalf("kubectl explain: %v\n%s", err, out)
		}
		for _, want := range []string{"QueueUnitsSummary", "positionInQueue", "PositionInQueue counts from 1"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("explain does not mention %q:\n%s", want, out)
			}
		}
		// The aggregator merges /openapi/v2 on its own schedule.
		err = framework.Eventually(ctx, 60*time.Second, func(context.Context) (bool, error) {
			v2, err := kubectl(t, admin, "get", "--raw", "/openapi/v2")
			return strings.Contains(string(v2), "/apis/visibility.koord-queue.x-k8s.io/v1alpha1/queues/{name}/queueunits"), err
		})
		if err != nil {
			t.Errorf("the aggregated /openapi/v2 lacks the visibility paths: %v", err)
		}
	})

	t.Run("a tenant sees its namespaces, positions over the whole queue", func(t *testing.T) {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: otherNS}}); err != nil {
			t.Fatal(err)
		}
		other := utiltesting.MakeQueueUnit("other", otherNS).Quota("team-a").Request("cpu", "1").Priority(7).Obj()
		if err := env.Client.Create(ctx, other); err != nil {
			t.Fatal(err)
		}
		// Allowed to list QueueUnits in one namespace, by a RoleBinding there.
		tenant := func(name, namespace string) string {
			role := &rbacv1.Role{
				ObjectMeta: metav1.ObjectMeta{Name: "queueunit-reader", Namespace: namespace},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{schedv1alpha1.GroupVersion.Group},
					Resources: []string{"queueunits"}, Verbs: []string{"get", "list", "watch"}}},
			}
			binding := &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
				Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: name}},
			}
			for _, o := range []client.Object{role, binding} {
				if err := env.Client.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
					t.Fatal(err)
				}
			}
			data, _, err := env.UserKubeconfig(name)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name+".kubeconfig")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}
		// As the chart does: everyone may ask; the answer is cut per namespace.
		reader := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "koord-queue-visibility-reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{visibilityv1alpha1.GroupName},
				Resources: []string{"queues", "queues/queueunits", "elasticquotas", "elasticquotas/queueunits", "featuregates"}, Verbs: []string{"get"}}},
		}
		readers := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "koord-queue-visibility-reader"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "system:authenticated"}},
		}
		for _, o := range []client.Object{reader, readers} {
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		tenantA, tenantB := tenant("tenant-a", ns), tenant("tenant-b", otherNS)
		wantAll := []entry{{"high", 1, 10}, {"other", 2, 7}, {"mid", 3, 5}, {"low", 4, 0}}
		var all visibilityv1alpha1.QueueUnitsSummary
		err := framework.Eventually(ctx, 20*time.Second, func(context.Context) (bool, error) {
			all = getRaw(t, admin, unitsPath)
			return fmt.Sprint(entries(all)) == fmt.Sprint(wantAll), nil
		})
		if err != nil {
			t.Fatalf("admin sees %v, want %v", entries(all), wantAll)
		}
		// Denials are cached for a few seconds by the server: poll.
		for _, tc := range []struct {
			kubeconfig string
			want       []entry
		}{
			{tenantB, []entry{{"other", 2, 7}}},
			{tenantA, []entry{{"high", 1, 10}, {"mid", 3, 5}, {"low", 4, 0}}},
		} {
			var got visibilityv1alpha1.QueueUnitsSummary
			err := framework.Eventually(ctx, 20*time.Second, func(context.Context) (bool, error) {
				got = getRaw(t, tc.kubeconfig, unitsPath)
				return fmt.Sprint(entries(got)) == fmt.Sprint(tc.want), nil
			})
			if err != nil || got.Total != int32(len(tc.want)) {
				t.Errorf("%s sees %v (total %d), want %v", filepath.Base(tc.kubeconfig), entries(got), got.Total, tc.want)
			}
		}
		// The Table through kubectl get shows the same rows, on the queue itself too.
		out, err := kubectl(t, tenantB, "get", "queues.visibility.koord-queue.x-k8s.io", "team-a", "--no-headers")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(strings.Fields(string(out)), " "); !strings.HasPrefix(got, "visibility-b other 2 7 Enqueued team-a") {
			t.Errorf("tenant-b table: %q", out)
		}
	})
}
