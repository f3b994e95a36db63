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
	"fmt"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// The processes of a cluster can be hurt on purpose, for chaos tests: killed
// (SIGKILL), paused (SIGSTOP) and resumed (SIGCONT), and started again with
// the command line they had (Restart), kube-apiserver and etcd included (same
// data directory, same ports).

func (c *Cluster) setReady(name string, ready func(context.Context) (bool, error)) {
	if c.ready == nil {
		c.ready = map[string]func(context.Context) (bool, error){}
	}
	c.ready[name] = ready
}

// waitReady waits until the process named name serves, failing early if p
// exits.
func (c *Cluster) waitReady(ctx context.Context, name string, p *process) error {
	ready := c.ready[name]
	if ready == nil {
		return nil
	}
	return c.waitFor(ctx, name+" to serve", 2*time.Minute, ready, p)
}

// find returns the latest process started under name.
func (c *Cluster) find(name string) (*process, error) {
	for i := len(c.procs) - 1; i >= 0; i-- {
		if c.procs[i].ref.Name == name {
			return c.procs[i], nil
		}
	}
	return nil, fmt.Errorf("no process named %s in this cluster", name)
}

// PID is the process ID of the process named name.
func (c *Cluster) PID(name string) (int, error) {
	p, err := c.find(name)
	if err != nil {
		return 0, err
	}
	return p.ref.PID, nil
}

// Exited reports whether the process named name has ended.
func (c *Cluster) Exited(name string) (bool, error) {
	p, err := c.find(name)
	if err != nil {
		return false, err
	}
	gone, _ := p.Exited()
	return gone, nil
}

// Kill sends SIGKILL to the process named name and waits until it is gone.
func (c *Cluster) Kill(name string) error {
	p, err := c.find(name)
	if err != nil {
		return err
	}
	if gone, _ := p.Exited(); gone {
		return nil
	}
	if err := p.Kill(); err != nil {
		return fmt.Errorf("kill %s: %w", name, err)
	}
	return nil
}

// Pause stops the process named name with SIGSTOP: it keeps its sockets
// but runs nothing until Resume.
func (c *Cluster) Pause(name string) error { return c.signal(name, syscall.SIGSTOP) }

// Terminate sends SIGTERM to the process named name, as a kubelet stops a
// pod; it does not wait.
func (c *Cluster) Terminate(name string) error { return c.signal(name, syscall.SIGTERM) }

// ExitError is how the process named name ended: nil for exit status 0,
// and an error too while it still runs.
func (c *Cluster) ExitError(name string) error {
	p, err := c.find(name)
	if err != nil {
		return err
	}
	gone, exitErr := p.Exited()
	if !gone {
		return fmt.Errorf("%s still runs", name)
	}
	return exitErr
}

// Resume continues a paused process with SIGCONT.
func (c *Cluster) Resume(name string) error { return c.signal(name, syscall.SIGCONT) }

func (c *Cluster) signal(name string, sig syscall.Signal) error {
	p, err := c.find(name)
	if err != nil {
		return err
	}
	if gone, _ := p.Exited(); gone {
		return fmt.Errorf("%s has exited: cannot send %s", name, sig)
	}
	if err := p.Signal(sig); err != nil {
		return fmt.Errorf("send %s to %s: %w", sig, name, err)
	}
	return nil
}

// Restart stops the process named name if it still runs (SIGTERM, SIGKILL
// after 10 s), starts it again with the same binary, environment and
// arguments, records the new PID in state.json, and waits until it serves
// (etcd's health, kube-apiserver's /readyz, a koord-queue replica's metrics
// or readiness endpoint).
func (c *Cluster) Restart(ctx context.Context, name string) error {
	old, err := c.find(name)
	if err != nil {
		return err
	}
	old.Stop(10 * time.Second)
	p, err := startProcessEnv(c.opts.StateDir, name, old.ref.Binary, old.env, old.args, c.opts.DieWithParent)
	if err != nil {
		return err
	}
	for i := range c.procs {
		if c.procs[i] == old {
			c.procs[i] = p
		}
	}
	for i := range c.state.Processes {
		if c.state.Processes[i].Name == name {
			c.state.Processes[i] = p.ref
		}
	}
	if err := writeState(c.opts.StateDir, &c.state); err != nil {
		return fmt.Errorf("record process %s: %w", name, err)
	}
	return c.waitReady(ctx, name, p)
}

// Replicas are the process names of binary's replicas (QueueBinary or
// ControllersBinary).
func (c *Cluster) Replicas(binary string) []string {
	var out []string
	for i := range c.replicasOf(binary) {
		out = append(out, ReplicaName(binary, i))
	}
	return out
}

// Lease reads the leader election Lease of binary (named like it, in
// namespace koord-queue, the binaries' defaults).
func (c *Cluster) Lease(ctx context.Context, binary string) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	if err := c.Client.Get(ctx, keyOf(Namespace, binary), l); err != nil {
		return nil, fmt.Errorf("read the lease of %s: %w", binary, err)
	}
	return l, nil
}

// Leader names the replica of binary that holds its Lease now, "" when
// nobody does. A holder's identity (host name and a random suffix chosen at
// each start) is tied to a replica by the audit log, which records the user
// of every Lease write: the cluster must run with Options.AuditLog and
// several replicas.
func (c *Cluster) Leader(ctx context.Context, binary string) (string, error) {
	if c.AuditLog() == "" || c.replicasOf(binary) < 2 {
		return "", fmt.Errorf("leader of %s: needs Options.AuditLog and more than one replica", binary)
	}
	l, err := c.Lease(ctx, binary)
	if err != nil {
		return "", err
	}
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	if holder == "" {
		return "", nil
	}
	if c.auditReader == nil {
		c.auditReader, c.holders = NewAuditReader(c.AuditLog()), map[string]string{}
	}
	events, err := c.auditReader.Next()
	if err != nil {
		return "", err
	}
	for i := range events {
		if w, ok := LeaseOf(&events[i]); ok && w.Spec.HolderIdentity != nil && *w.Spec.HolderIdentity != "" {
			c.holders[w.Name+"/"+*w.Spec.HolderIdentity] = events[i].User.Username
		}
	}
	if user, ok := c.holders[binary+"/"+holder]; ok {
		return user, nil
	}
	return "", fmt.Errorf("leader of %s: no write of holder %q in the audit log yet", binary, holder)
}
