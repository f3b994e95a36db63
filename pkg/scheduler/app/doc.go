// Package app wires the koord-queue binary: it parses flags and the
// KoordQueueConfiguration file, builds the controller-runtime manager (leader
// election, metrics and health on one port), the plugin registry and the
// scheduler, and runs them until the process is told to stop. It hands each
// plugin its arguments, completed from the flags and top-level fields that
// set them before they were arguments (pluginargs.go).
package app
