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

// Command localcluster starts and stops the local cluster of package
// test/cluster for `make run` and `make down`:
//
//	localcluster up   [flags]   start a fresh cluster (stopping one already recorded in --state-dir)
//	localcluster down [flags]   stop the cluster recorded in --state-dir
//	localcluster env  [flags]   print KUBECONFIG and KUBECTL of the recorded cluster, shell syntax
//
// The processes outlive the command; their PIDs are in <state-dir>/state.json.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/koordinator-sh/koord-queue/test/cluster"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "up":
		err = up(args)
	case "down":
		fs := flag.NewFlagSet("down", flag.ExitOnError)
		stateDir := fs.String("state-dir", cluster.DefaultStateDir(), "folder holding the cluster's state")
		_ = fs.Parse(args)
		err = cluster.Down(*stateDir, os.Stdout)
	case "env":
		fs := flag.NewFlagSet("env", flag.ExitOnError)
		stateDir := fs.String("state-dir", cluster.DefaultStateDir(), "folder holding the cluster's state")
		toolsDir := fs.String("tools-dir", "", "folder with kubectl (hack/tools.sh dir)")
		_ = fs.Parse(args)
		fmt.Printf("export KUBECONFIG=%s\n", filepath.Join(*stateDir, "kubeconfig"))
		if *toolsDir != "" {
			fmt.Printf("export KUBECTL=%s\n", filepath.Join(*toolsDir, "kubectl"))
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster %s: %v\n", cmd, err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: localcluster up|down|env [flags]  (localcluster up -h lists the flags)")
	os.Exit(2)
}

func up(args []string) error {
	fs := flag.NewFlagSet("up", flag.ExitOnError)
	var o cluster.Options
	o.Ports = cluster.DefaultPorts()
	var mode, extensions, extraCRDs, operators string
	fs.StringVar(&o.StateDir, "state-dir", cluster.DefaultStateDir(), "folder for the cluster's state, logs and binaries")
	fs.StringVar(&o.ToolsDir, "tools-dir", "", "folder with etcd, kube-apiserver, ... (hack/tools.sh dir)")
	fs.StringVar(&o.KoordQueue.RepoRoot, "repo-root", ".", "koord-queue checkout: CRDs and the binaries come from here")
	fs.StringVar(&mode, "koord-queue", string(cluster.KoordQueueAuto), "run koord-queue's binaries: on, off, or auto (on when cmd/ has them)")
	fs.StringVar(&o.KoordQueue.Config, "config", "", "koord-queue --config file")
	fs.StringVar(&extensions, "extensions", strings.Join(cluster.DefaultExtensions, ","), "koord-queue-controllers --enabled-extensions")
	fs.StringVar(&extraCRDs, "extra-crds", "test/crds", "comma-separated folders of further CRDs (job kinds); empty for none")
	fs.StringVar(&operators, "operators", "", "comma-separated stock operators to start as well (training-operator, mpi-operator, kuberay-operator, spark-operator, workflow-controller, jobset-controller, lws-controller, trainer-controller, or all)")
	fs.StringVar(&o.OperatorsDir, "operators-dir", "", "folder with the operators' binaries (hack/tools.sh operators-dir)")
	fs.StringVar(&o.Koordinator.BinDir, "koordinator-dir", "", "run Koordinator v1.7.0 (koord-manager, and koord-scheduler in place of kube-scheduler) from this folder (hack/tools.sh koordinator-dir); empty for none")
	fs.IntVar(&o.Ports.EtcdClient, "etcd-port", o.Ports.EtcdClient, "etcd client port")
	fs.IntVar(&o.Ports.EtcdPeer, "etcd-peer-port", o.Ports.EtcdPeer, "etcd peer port")
	fs.IntVar(&o.Ports.APIServer, "apiserver-port", o.Ports.APIServer, "kube-apiserver secure port")
	fs.IntVar(&o.Ports.QueueMetrics, "queue-metrics-port", o.Ports.QueueMetrics, "koord-queue metrics port")
	fs.IntVar(&o.Ports.ControllersMetrics, "controllers-metrics-port", o.Ports.ControllersMetrics, "koord-queue-controllers metrics port")
	fs.IntVar(&o.Ports.ControllersHealth, "controllers-health-port", o.Ports.ControllersHealth, "koord-queue-controllers health probe port")
	fs.IntVar(&o.Ports.ControllersWebhook, "controllers-webhook-port", o.Ports.ControllersWebhook, "koord-queue-controllers admission webhook port")
	fs.IntVar(&o.Ports.Visibility, "visibility-port", o.Ports.Visibility, "koord-queue visibility API port (behind the APIService)")
	fs.IntVar(&o.Nodes.Count, "nodes", 4, "number of fake nodes")
	fs.StringVar(&o.Nodes.CPU, "node-cpu", "32", "CPU of each fake node")
	fs.StringVar(&o.Nodes.Memory, "node-memory", "256Gi", "memory of each fake node")
	fs.DurationVar(&o.PodRunTime, "pod-run-time", 30*time.Second, "how long a Job's pod runs on a fake node")
	fs.IntVar(&o.MaxRequestsInflight, "max-requests-inflight", 400, "kube-apiserver --max-requests-inflight")
	fs.IntVar(&o.MaxMutatingRequestsInflight, "max-mutating-requests-inflight", 200, "kube-apiserver --max-mutating-requests-inflight")
	_ = fs.Parse(args)
	if o.ToolsDir == "" {
		return errors.New("--tools-dir is required (the folder 'hack/tools.sh dir' prints)")
	}
	ops, err := cluster.ParseOperators(operators)
	if err != nil {
		return err
	}
	o.Operators = ops
	if len(o.Operators) > 0 && o.OperatorsDir == "" {
		return errors.New("--operators needs --operators-dir (the folder 'hack/tools.sh operators-dir' prints)")
	}
	o.KoordQueue.Mode = cluster.KoordQueueMode(mode)
	o.KoordQueue.Extensions = strings.Split(extensions, ",")
	root, err := filepath.Abs(o.KoordQueue.RepoRoot)
	if err != nil {
		return err
	}
	o.KoordQueue.RepoRoot = root
	for _, d := range strings.Split(extraCRDs, ",") {
		if d = strings.TrimSpace(d); d != "" {
			if !filepath.IsAbs(d) {
				d = filepath.Join(root, d)
			}
			o.ExtraCRDDirs = append(o.ExtraCRDDirs, d)
		}
	}
	o.Log = os.Stdout
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	c, err := cluster.Start(ctx, o)
	if err != nil {
		if strings.Contains(err.Error(), "already in use") {
			err = fmt.Errorf("%w\n(with make, pass the flag as: make run RUN_FLAGS='--apiserver-port=N ...')", err)
		}
		return err
	}
	fmt.Printf("cluster: kubeconfig %s\n", c.Kubeconfig)
	if o.Koordinator.On() {
		fmt.Printf("cluster: Koordinator runs: koord-manager (webhooks on loopback) and koord-scheduler (the cluster's scheduler, debug port %d) from %s; its CRDs replace koord-queue's ElasticQuota CRD (no short name eq)\n",
			cluster.KoordSchedulerDebugPort, o.Koordinator.BinDir)
	} else {
		fmt.Println("cluster: kube-scheduler is the cluster's scheduler (make run KOORDINATOR=1 runs Koordinator's instead)")
	}
	if !c.QueueRunning {
		fmt.Println("cluster: koord-queue is NOT running (its binaries are not in cmd/ yet)")
	}
	if c.QueueRunning {
		fmt.Printf("cluster: web view: kubectl proxy --port 8001 & then open http://127.0.0.1:8001%s\n", cluster.WebViewPath)
	}
	return nil
}
