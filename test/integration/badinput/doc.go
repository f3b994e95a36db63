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
