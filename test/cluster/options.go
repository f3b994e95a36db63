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
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/koordinator-sh/koord-queue/pkg/util/mutation"
	"github.com/koordinator-sh/koord-queue/test/util/proc"
)

// Ports are the TCP ports the cluster listens on, all on 127.0.0.1. The
// controller-manager and the scheduler serve nothing (--secure-port 0).
type Ports struct {
	EtcdClient         int
	EtcdPeer           int
	APIServer          int
	QueueMetrics       int // koord-queue --metrics-bind-address
	ControllersMetrics int // koord-queue-controllers --metrics-bind-address
	ControllersHealth  int // koord-queue-controllers --health-probe-bind-address
	ControllersWebhook int // koord-queue-controllers --webhook-port (the admission webhook)
	Visibility         int // koord-queue --visibility-bind-address (the aggregated API)
}

// DefaultPorts are the fixed ports `make run` uses.
func DefaultPorts() Ports {
	return Ports{
		EtcdClient:         12379,
		EtcdPeer:           12380,
		APIServer:          16443,
		QueueMetrics:       10259,
		ControllersMetrics: 18080,
		ControllersHealth:  18081,
		ControllersWebhook: 19443,
		Visibility:         18443,
	}
}

// portUse names each port with the option (and command-line flag of the
// localcluster command) that sets it, for messages about a port in use.
func (p *Ports) uses() []portUse {
	return []portUse{
		{"etcd client", "--etcd-port", &p.EtcdClient},
		{"etcd peer", "--etcd-peer-port", &p.EtcdPeer},
		{"kube-apiserver", "--apiserver-port", &p.APIServer},
		{"koord-queue metrics", "--queue-metrics-port", &p.QueueMetrics},
		{"koord-queue-controllers metrics", "--controllers-metrics-port", &p.ControllersMetrics},
		{"koord-queue-controllers health probe", "--controllers-health-port", &p.ControllersHealth},
		{"koord-queue-controllers webhook", "--controllers-webhook-port", &p.ControllersWebhook},
		{"koord-queue visibility API", "--visibility-port", &p.Visibility},
	}
}

type portUse struct {
	what, flag string
	port       *int
}

// FreePorts picks unused ports for every field, for tests that run beside
// other clusters.
func FreePorts() (Ports, error) {
	var p Ports
	uses := p.uses()
	free, err := proc.FreePorts(len(uses))
	if err != nil {
		return p, err
	}
	for i, u := range uses {
		*u.port = free[i]
	}
	return p, nil
}

// Nodes describes the fake nodes kwok runs.
type Nodes struct {
	Count  int
	CPU    string
	Memory string
	Pods   string
}

// KoordQueue says whether and how to run the two koord-queue binaries.
type KoordQueue struct {
	// Mode is KoordQueueOn (build and start both binaries, fail if they do
	// not build), KoordQueueAuto (the same when cmd/koord-queue and
	// cmd/koord-queue-controllers exist, else skip with a note) or
	// KoordQueueOff.
	Mode KoordQueueMode
	// RepoRoot is the koord-queue checkout the binaries are built from.
	RepoRoot string
	// Config, when set, is passed to koord-queue as --config.
	Config string
	// Extensions is koord-queue-controllers' --enabled-extensions.
	Extensions []string
	// ExtraQueueArgs and ExtraControllersArgs are appended to each command line.
	ExtraQueueArgs       []string
	ExtraControllersArgs []string
	// QueueReplicas and ControllersReplicas run that many processes of each
	// binary (0 means 1). With more than one, the replicas elect a leader
	// (--leader-elect) and each talks to the API as a user of its own named
	// like its process (ReplicaName), so the audit log tells them apart.
	// Replica 0 alone serves the visibility API and the webhook; the others
	// have metrics and health ports picked at start.
	QueueReplicas       int
	ControllersReplicas int
	// DebugAPI serves koord-queue's debug HTTP API (--enableApiHandler) on a
	// loopback port of each replica's own; DebugURL tells where.
	DebugAPI bool
	// Mutation, when set, builds both binaries with the build tag
	// chaosmutation and plants that bug in every replica
	// (pkg/util/mutation); with mutation.NoFence the chart's leader fence
	// policies are left out too.
	Mutation mutation.Mutation
	// Links, with several replicas, has each replica reach kube-apiserver
	// through a loopback TCP link of this process, which Cut and Heal
	// partition, and behind it an HTTP proxy of this process, which
	// StallWatch and ResumeWatch use to lag one resource's watches (both
	// live as long as this process).
	Links bool
}

// KoordQueueMode selects whether the koord-queue binaries run.
type KoordQueueMode string

// The KoordQueue modes.
const (
	KoordQueueOn   KoordQueueMode = "on"
	KoordQueueAuto KoordQueueMode = "auto"
	KoordQueueOff  KoordQueueMode = "off"
)

// Options configure a cluster. Zero fields take the defaults of Defaults().
type Options struct {
	// StateDir holds everything the cluster writes (see the package doc).
	StateDir string
	// ToolsDir holds etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler, kwok and kubectl (`hack/tools.sh dir`).
	ToolsDir string
	Ports    Ports
	Nodes    Nodes
	// PodRunTime is how long a Job's pod runs on a fake node before it
	// succeeds, unless the pod says otherwise with the annotation
	// pod-complete.stage.kwok.x-k8s.io/delay.
	PodRunTime time.Duration
	// MaxRequestsInflight and MaxMutatingRequestsInflight are the
	// kube-apiserver's limits of the same names.
	MaxRequestsInflight         int
	MaxMutatingRequestsInflight int
	// ExtraCRDDirs are installed after koord-queue's own CRDs (for example
	// test/crds for the job kinds).
	ExtraCRDDirs []string
	KoordQueue   KoordQueue
	// OperatorsDir holds the stock operators' binaries (`hack/tools.sh
	// operators-dir`); Operators are started once koord-queue runs (more can
	// be started later with StartOperators).
	OperatorsDir string
	Operators    []Operator
	// Koordinator, when its BinDir is set, runs Koordinator beside
	// koord-queue (its CRDs, koord-manager, koord-scheduler in place of
	// kube-scheduler).
	Koordinator Koordinator
	// AdmissionCheckWriters are the ServiceAccounts (namespace/name) the
	// chart's queueUnitStatusPolicy.admissionCheckWriters lists when the
	// cluster installs the chart's policies (from KoordQueue.RepoRoot);
	// nil means GuideCheckWriter.
	AdmissionCheckWriters []string
	// AuditLog makes kube-apiserver write an audit log (Cluster.AuditLog) of
	// Lease writes in namespace koord-queue and of QueueUnit writes.
	AuditLog bool
	// DieWithParent kills every process when the calling process dies (tests);
	// without it the cluster outlives the caller (make run).
	DieWithParent bool
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// DefaultStateDir is where `make run` keeps its cluster:
// $KOORD_QUEUE_CACHE/run, by default $HOME/.cache/koord-queue/run.
func DefaultStateDir() string {
	if c := os.Getenv("KOORD_QUEUE_CACHE"); c != "" {
		return filepath.Join(c, "run")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "koord-queue", "run")
}

// DefaultExtensions are the job extensions enabled by default: every kind
// whose CRD the local cluster can install.
var DefaultExtensions = []string{"job", "tfjob", "pytorchjob", "workflow"}

func (o *Options) setDefaults() {
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir()
	}
	if o.Ports == (Ports{}) {
		o.Ports = DefaultPorts()
	}
	if o.Nodes.Count == 0 {
		o.Nodes.Count = 4
	}
	if o.Nodes.CPU == "" {
		o.Nodes.CPU = "32"
	}
	if o.Nodes.Memory == "" {
		o.Nodes.Memory = "256Gi"
	}
	if o.Nodes.Pods == "" {
		o.Nodes.Pods = "110"
	}
	if o.PodRunTime == 0 {
		o.PodRunTime = 30 * time.Second
	}
	if o.MaxRequestsInflight == 0 {
		o.MaxRequestsInflight = 400
	}
	if o.MaxMutatingRequestsInflight == 0 {
		o.MaxMutatingRequestsInflight = 200
	}
	if o.KoordQueue.Mode == "" {
		o.KoordQueue.Mode = KoordQueueAuto
	}
	o.KoordQueue.QueueReplicas = max(o.KoordQueue.QueueReplicas, 1)
	o.KoordQueue.ControllersReplicas = max(o.KoordQueue.ControllersReplicas, 1)
	if len(o.KoordQueue.Extensions) == 0 {
		o.KoordQueue.Extensions = DefaultExtensions
	}
	if o.AdmissionCheckWriters == nil {
		o.AdmissionCheckWriters = []string{GuideCheckWriter}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}
