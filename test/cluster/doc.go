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
// The control-plane binaries come from hack/tools.sh (Options.ToolsDir); the
// stage documents kwok plays are this package's own (stages/*.yaml).
package cluster
