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

package cluster

import (
	"context"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

//go:embed stages/*.yaml
var stages embed.FS

// Fake nodes carry this annotation; kwok manages exactly these.
const (
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	kwokNodeValue      = "fake"
)

func (c *Cluster) startEtcd(ctx context.Context) error {
	o := c.opts
	client := "http://127.0.0.1:" + strconv.Itoa(o.Ports.EtcdClient)
	peer := "http://127.0.0.1:" + strconv.Itoa(o.Ports.EtcdPeer)
	p, err := c.run("etcd", c.tool("etcd"),
		"--name", "default",
		"--data-dir", filepath.Join(o.StateDir, "etcd"),
		"--listen-client-urls", client,
		"--advertise-client-urls", client,
		"--listen-peer-urls", peer,
		"--initial-advertise-peer-urls", peer,
		"--initial-cluster", "default="+peer,
		"--unsafe-no-fsync",
		"--log-level", "warn",
	)
	if err != nil {
		return err
	}
	c.setReady("etcd", httpOK(client+"/health"))
	return c.waitReady(ctx, "etcd", p)
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	o := c.opts
	k := c.pki
	audit, err := c.auditArgs()
	if err != nil {
		return err
	}
	args := []string{
		"--etcd-servers", "http://127.0.0.1:" + strconv.Itoa(o.Ports.EtcdClient),
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--endpoint-reconciler-type", "none",
		"--secure-port", strconv.Itoa(o.Ports.APIServer),
		"--cert-dir", k.dir,
		"--tls-cert-file", k.servingCert,
		"--tls-private-key-file", k.servingKey,
		"--client-ca-file", k.caCert,
		"--token-auth-file", k.tokens,
		"--authorization-mode", "RBAC",
		"--service-cluster-ip-range", "10.96.0.0/16",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", k.saPub,
		"--service-account-signing-key-file", k.saKey,
		"--requestheader-client-ca-file", k.proxyCACert,
		"--requestheader-allowed-names", "front-proxy-client",
		"--requestheader-username-headers", "X-Remote-User",
		"--requestheader-group-headers", "X-Remote-Group",
		"--requestheader-extra-headers-prefix", "X-Remote-Extra-",
		"--proxy-client-cert-file", k.proxyClientCert,
		"--proxy-client-key-file", k.proxyClientKey,
		// No --enable-aggregator-routing: the aggregator dials a Service's
		// name, so the visibility APIService reaches koord-queue on loopback
		// through an ExternalName Service (localhost); endpoint routing
		// refuses ExternalName and loopback endpoints.
		"--max-requests-inflight", strconv.Itoa(o.MaxRequestsInflight),
		"--max-mutating-requests-inflight", strconv.Itoa(o.MaxMutatingRequestsInflight),
		"--allow-privileged",
	}
	p, err := c.run("kube-apiserver", c.tool("kube-apiserver"), append(args, audit...)...)
	if err != nil {
		return err
	}
	c.setReady("kube-apiserver", func(ctx context.Context) (bool, error) {
		body, err := c.Clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return false, err
		}
		return strings.TrimSpace(string(body)) == "ok", nil
	})
	return c.waitReady(ctx, "kube-apiserver", p)
}

// startControllers starts kube-controller-manager, kube-scheduler (unless
// Koordinator's koord-scheduler replaces it, started later) and kwok.
// None of them waits here: readiness is judged by what they produce (the
// default ServiceAccount, Ready nodes).
func (c *Cluster) startControllers() error {
	if _, err := c.run("kube-controller-manager", c.tool("kube-controller-manager"),
		"--kubeconfig", c.Kubeconfig,
		"--secure-port", "0",
		"--leader-elect=false",
		"--service-account-private-key-file", c.pki.saKey,
		"--root-ca-file", c.pki.caCert,
		"--use-service-account-credentials=false",
		"--controllers", "*,-node-ipam-controller,-persistentvolume-binder-controller,-persistentvolume-expander-controller,-persistentvolume-attach-detach-controller,-horizontal-pod-autoscaler-controller",
		"--concurrent-job-syncs", "20",
		"--kube-api-qps", "200", "--kube-api-burst", "400",
	); err != nil {
		return err
	}
	if !c.opts.Koordinator.On() {
		if _, err := c.run("kube-scheduler", c.tool("kube-scheduler"),
			"--kubeconfig", c.Kubeconfig,
			"--secure-port", "0",
			"--leader-elect=false",
			"--kube-api-qps", "200", "--kube-api-burst", "400",
		); err != nil {
			return err
		}
	}
	stagesFile, err := c.writeStages()
	if err != nil {
		return err
	}
	_, err = c.run("kwok", c.tool("kwok"),
		"--kubeconfig", c.Kubeconfig,
		"--config", stagesFile,
		"--manage-nodes-with-annotation-selector", kwokNodeAnnotation+"="+kwokNodeValue,
		"--node-lease-duration-seconds", "40",
		"--cidr", "10.244.0.0/16",
		"--node-ip", "10.240.0.1",
	)
	return err
}

// writeStages writes the embedded stage documents into one kwok config file,
// with the default pod run time filled in.
func (c *Cluster) writeStages() (string, error) {
	var docs []string
	for _, name := range []string{"stages/node.yaml", "stages/pod.yaml"} {
		data, err := stages.ReadFile(name)
		if err != nil {
			return "", err
		}
		docs = append(docs, string(data))
	}
	all := strings.Join(docs, "\n---\n")
	all = strings.ReplaceAll(all, "{{POD_RUN_MILLISECONDS}}", strconv.FormatInt(c.opts.PodRunTime.Milliseconds(), 10))
	path := filepath.Join(c.opts.StateDir, "kwok-stages.yaml")
	return path, os.WriteFile(path, []byte(all), 0o644)
}

// NodeName is the name of the i-th fake node.
func NodeName(i int) string { return fmt.Sprintf("kwok-node-%d", i) }

func (c *Cluster) createNodes(ctx context.Context) error {
	n := c.opts.Nodes
	capacity := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: n.CPU, corev1.ResourceMemory: n.Memory, corev1.ResourcePods: n.Pods} {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return fmt.Errorf("node %s %q: %w", name, v, err)
		}
		capacity[name] = q
	}
	for i := 0; i < n.Count; i++ {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        NodeName(i),
				Annotations: map[string]string{kwokNodeAnnotation: kwokNodeValue, "node.alpha.kubernetes.io/ttl": "0"},
				Labels: map[string]string{
					"type":                   "kwok",
					"kubernetes.io/hostname": NodeName(i),
					"kubernetes.io/os":       "linux",
					"kubernetes.io/arch":     "amd64",
				},
			},
			Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
		}
		if err := c.Client.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", node.Name, err)
		}
	}
	return nil
}

// waitWorkloadReady waits until pods can be created and run: the default
// ServiceAccount exists (the ServiceAccount admission plugin refuses pods
// without it) and every fake node is Ready.
func (c *Cluster) waitWorkloadReady(ctx context.Context) error {
	if err := c.waitFor(ctx, "the default ServiceAccount in namespace default", time.Minute, func(ctx context.Context) (bool, error) {
		sa := &corev1.ServiceAccount{}
		err := c.Client.Get(ctx, keyOf("default", "default"), sa)
		return err == nil, client404(err)
	}, c.procs...); err != nil {
		return err
	}
	return c.waitFor(ctx, fmt.Sprintf("%d Ready fake nodes", c.opts.Nodes.Count), time.Minute, func(ctx context.Context) (bool, error) {
		nodes := &corev1.NodeList{}
		if err := c.Client.List(ctx, nodes); err != nil {
			return false, err
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready >= c.opts.Nodes.Count, nil
	}, c.procs...)
}
