// Package metricsserving builds the controller-runtime metrics server options
// both binaries share: HTTPS with callers authenticated by TokenReview and
// authorized by SubjectAccessReview (get on the non-resource URL asked for,
// e.g. /metrics), or plain HTTP when the operator opts out for local use.
// Health paths stay open on either, so kubelet probes need no credentials.
// It owns no state.
package metricsserving
