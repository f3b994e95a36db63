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

package mutation

// Mutation names one planted bug.
type Mutation string

// The planted bugs, each breaking one promise of docs/reliability.md.
const (
	// NoFence: neither fence holds a deposed leader back. The replica's
	// fence always allows, and the local cluster leaves the chart's leader
	// fence policies out (test/cluster).
	NoFence Mutation = "no-fence"
	// NoCatchUp: a new leader decides at once on whatever its cache holds.
	NoCatchUp Mutation = "no-catch-up"
	// LostAdmission: one admission in Every is never written nor retried,
	// while the scheduler goes on holding its quota.
	LostAdmission Mutation = "lost-admission"
	// EvictionKeepsPods: an evicted job is not suspended; its unit goes back
	// to the queue as if its pods were gone.
	EvictionKeepsPods Mutation = "eviction-keeps-pods"
	// DoubleAdmission: the answer of one landed admission in Every is taken
	// for a conflict, and the conflict for a refusal: the unit, admitted on
	// the API, is given back its quota and decided again; and an admission
	// that conflicts is made again on the object read afresh (as the other
	// writes are) instead of being decided again, so the second decision
	// lands on the unit already admitted.
	DoubleAdmission Mutation = "double-admission"
)

// All lists the planted bugs.
var All = []Mutation{NoFence, NoCatchUp, LostAdmission, EvictionKeepsPods, DoubleAdmission}

// Every is how often a planted bug that strikes now and then strikes: once
// in Every chances.
const Every = 10

// EnvVar names the planted bug in a chaosmutation build.
const EnvVar = "KOORD_QUEUE_MUTATION"
