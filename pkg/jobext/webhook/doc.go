// Package webhook is the mutating admission webhook of koord-queue-controllers:
// it suspends every job koord-queue will manage at creation, by the kind's
// native field, so a stock operator never starts it before its unit is
// admitted. It owns the handler, the webhook's serving certificate when the
// binary manages it (through pkg/util/certrotation), and the runtime fields of
// the MutatingWebhookConfiguration it serves: the CA bundle and the namespace
// selector, which it derives from the --manage-all-jobs selector.
package webhook
