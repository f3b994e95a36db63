// Package app assembles koord-queue-controllers: it owns the command-line
// options, the feature gates, the registry of job extensions (registry.go is
// the only place an extension is named), the scheme of every job kind, the
// start-up check that each enabled extension's CRD is installed, and the
// controller-runtime manager that runs one generic reconciler per enabled
// extension.
package app
