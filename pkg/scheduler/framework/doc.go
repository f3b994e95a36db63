// Package framework is the public plugin API of the koord-queue scheduler:
// small one-method interfaces (queue sort, queue mapping, filter, reserve,
// usage), the Status they return, an explicit Registry from plugin name to
// factory, and the Framework that runs the enabled plugins in order.
//
// A plugin implements Plugin plus any of the extension-point interfaces; the
// framework finds them by type assertion. Optional powers are declared
// interfaces too (PriorityMajorSorter, Syncer, Runnable). Filters, reserve
// and usage plugins may be many and run in the configuration's order; the
// roles that decide alone (sorting, mapping, preemption, fair share, listing
// quotas) go to at most one plugin, and New refuses two, naming both.
//
// The package imports no implementation: the values it exchanges with the
// plugins, the quota tree and the queues are those of pkg/schedtypes, and a
// plugin's settings are its own arguments, never the Handle's.
package framework
