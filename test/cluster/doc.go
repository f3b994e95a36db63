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

// Package cluster runs a local Kubernetes cluster made of real processes for
// end-to-end tests, `make run` and performance runs: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok (fake nodes whose pods run
// for a configurable time), and on top of it the two koord-queue binaries.
//
// What it owns: one state directory (Options.StateDir) holding the PKI, the
// admin kubeconfig, etcd's data, one log file per process under logs/, the
// built koord-queue binaries under bin/, and state.json, which records every
// process it started (name, PID, binary) and every port it took. Down uses
// state.json alone, so a cluster started by one program (make run) is stopped
// by another (make down). Nothing outside the state directory is written.
//
// With KoordQueue.Links, each replica reaches kube-apiserver through two
// parts this process owns, for chaos faults (they do not outlive it, and
// Down knows nothing of them): a TCP link (link.go: Cut, Heal) and behind
// it an HTTP proxy (proxy.go: StallWatch, ResumeWatch), which forwards the
// replica's own credentials and can hold one resource's watches.
//
// The control-plane binaries come from hack/tools.sh (Options.ToolsDir); the
// stage documents kwok plays are this package's own (stages/*.yaml).
// Processes are started and stopped through test/util/proc.
package cluster
