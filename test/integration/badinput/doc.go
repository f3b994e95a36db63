// Package badinput is the catalogue of bad input: table-driven cases on a
// real kube-apiserver and etcd (envtest) with koord-queue and
// koord-queue-controllers running in-process, plus the configuration files
// and flags of both binaries. Each case is either refused by the API server
// (or the loader) with an error naming the field, or accepted with a Warning
// event naming the problem and a safe behaviour: the unit waits with a clear
// message while another unit is still admitted, and the writes and
// scheduling passes stay bounded (no hot loop). The ValidatingAdmissionPolicies
// of config/policy and the chart's tenant roles are installed first.
package badinput
