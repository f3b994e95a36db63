// Package schedtypes holds the plain values the scheduler's plugin API
// (pkg/scheduler/framework), its plugins, the quota tree (pkg/quota) and the
// pending queues (pkg/queue) hand each other: amounts of resources, what an
// admitted unit holds, the victims of a preemption, a view of one quota, and
// a pending unit as a sort function sees it.
//
// It sits below all of them so that the framework need import no
// implementation: it has no logic beyond conversions and simple methods on
// its values, and imports nothing of ours but pkg/util/resources. pkg/quota
// and pkg/queue keep aliases of these types under their old names.
package schedtypes
