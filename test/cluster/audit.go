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
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	coordinationv1 "k8s.io/api/coordination/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// auditPolicy records what the chaos checker needs and what explains its
// findings: every write of a Lease in namespace koord-queue with its
// response (holder and renew time), and every write of a QueueUnit, its
// status or a Job with its request (who, with which user agent, when, what,
// with what result).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: RequestResponse
  verbs: ["create", "update", "patch", "delete"]
  namespaces: ["` + Namespace + `"]
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
- level: Request
  verbs: ["create", "update", "patch", "delete"]
  resources:
  - group: scheduling.x-k8s.io
    resources: ["queueunits", "queueunits/status"]
  - group: batch
    resources: ["jobs"]
- level: None
`

// AuditLog is the kube-apiserver's audit log of a cluster started with
// Options.AuditLog ("" without it).
func (c *Cluster) AuditLog() string {
	if !c.opts.AuditLog {
		return ""
	}
	return filepath.Join(c.opts.StateDir, "audit.log")
}

func (c *Cluster) auditArgs() ([]string, error) {
	if !c.opts.AuditLog {
		return nil, nil
	}
	policy := filepath.Join(c.opts.StateDir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("write audit policy: %w", err)
	}
	return []string{
		"--audit-policy-file", policy,
		"--audit-log-path", c.AuditLog(),
		"--audit-log-format", "json",
		// One file for the whole run: the checker reads it from the start.
		"--audit-log-maxsize", "0",
		"--audit-log-mode", "blocking",
	}, nil
}

// AuditReader reads an audit log as it grows, one complete line at a time.
type AuditReader struct {
	path   string
	offset int64
}

// NewAuditReader reads path from its start.
func NewAuditReader(path string) *AuditReader { return &AuditReader{path: path} }

// Next returns the events written since the last call (a line still being
// written is left for the next call). A log not yet created is empty.
func (r *AuditReader) Next() ([]auditv1.Event, error) {
	f, err := os.Open(r.path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(r.offset, io.SeekStart); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	var out []auditv1.Event
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			return out, nil // an unterminated tail is read again next time
		}
		if err != nil {
			return out, err
		}
		r.offset += int64(len(line))
		var ev auditv1.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return out, fmt.Errorf("audit log %s at byte %d: %w", r.path, r.offset-int64(len(line)), err)
		}
		out = append(out, ev)
	}
}

// LeaseOf decodes the Lease an audited Lease write answered with; ok is
// false for other events, refused writes and deletions.
func LeaseOf(ev *auditv1.Event) (lease *coordinationv1.Lease, ok bool) {
	if ev.ObjectRef == nil || ev.ObjectRef.Resource != "leases" || ev.ResponseObject == nil ||
		ev.ResponseStatus == nil || ev.ResponseStatus.Code >= 300 || ev.Verb == "delete" {
		return nil, false
	}
	l := &coordinationv1.Lease{}
	if err := json.Unmarshal(ev.ResponseObject.Raw, l); err != nil || l.Kind != "Lease" {
		return nil, false
	}
	return l, true
}
