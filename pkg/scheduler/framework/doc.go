// Package framework is the public plugin API of the koord-queue scheduler:
// small one-method interfaces (queue sort, queue mapping, filter, reserve,
// usage), the Status they return, an explicit Registry from plugin name to
// factory, and the Framework that runs the enabled plugins in order.
//
// A plugin implements Plugin plus any of the extension-point interfaces; the
// framework finds them by type assertion. Plugins that need to run something
// in the background (controllers, informers) also implement Runnable.
package framework
