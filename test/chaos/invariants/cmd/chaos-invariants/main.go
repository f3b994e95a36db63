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

// Command chaos-invariants watches a cluster running koord-queue and checks
// the invariants of docs/reliability.md until it is interrupted (or
// --duration passes), then writes report.yaml and report.json into
// --output and exits 1 if any invariant was broken.
//
//	chaos-invariants --kubeconfig KC --namespace chaos --audit-log AUDIT \
//	    --writers koord-queue,koord-queue-1 --output DIR
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/koordinator-sh/koord-queue/test/chaos/invariants"
)

func main() {
	// A flag set of its own: a package linked in registers --kubeconfig on
	// the global one.
	fs := flag.NewFlagSet("chaos-invariants", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	namespace := fs.String("namespace", "", "namespace of the jobs, pods and units to watch; empty is all")
	auditLog := fs.String("audit-log", "", "kube-apiserver audit log (test/cluster's policy); empty skips the check of writers")
	writers := fs.String("writers", "", "comma-separated API users of the koord-queue replicas")
	leaseName := fs.String("lease-name", "koord-queue", "name of koord-queue's leader Lease")
	leaseNamespace := fs.String("lease-namespace", "koord-queue", "namespace of koord-queue's leader Lease")
	tolerance := fs.Duration("tolerance", invariants.DefaultTolerance, "how long after its last renewal a leader may still write")
	duration := fs.Duration("duration", 0, "stop after this long; 0 runs until SIGINT or SIGTERM")
	output := fs.String("output", ".", "folder for report.yaml and report.json")
	_ = fs.Parse(os.Args[1:])
	if err := run(*kubeconfig, *namespace, *output, *duration, invariants.AuditOptions{
		Log: *auditLog, Writers: splitList(*writers), LeaseName: *leaseName, LeaseNamespace: *leaseNamespace, Tolerance: *tolerance,
	}); err != nil {
		fmt.Fprintln(os.Stderr, "chaos-invariants:", err)
		os.Exit(1)
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func run(kubeconfig, namespace, output string, duration time.Duration, audit invariants.AuditOptions) error {
	if audit.Log != "" && len(audit.Writers) == 0 {
		return fmt.Errorf("--audit-log needs --writers (the API users of the koord-queue replicas)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, duration)
		defer cancel()
	}
	c, err := invariants.New(cfg, invariants.Options{Namespace: namespace, Audit: audit})
	if err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	finish, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := c.Finish(finish)
	if err != nil {
		return err
	}
	if err := r.WriteTo(output); err != nil {
		return err
	}
	fmt.Printf("jobs done %d/%d, admissions %d, faults %d, violations %d; report in %s\n",
		r.JobsDone, r.JobsCreated, r.Admissions, len(r.Faults), r.Total(), output)
	if r.Total() > 0 {
		return fmt.Errorf("%d invariant violations: %v", r.Total(), r.ViolationCounts)
	}
	return nil
}
