// Package visibility tests the visibility aggregated API through the real
// kube-apiserver aggregation layer, as the user guide calls it:
// kubectl get --raw /apis/visibility.koord-queue.x-k8s.io/v1alpha1/queues/team-a/queueunits.
// The scheduler runs in-process with its visibility server on loopback; an
// APIService points at an ExternalName Service (localhost) so the aggregator
// reaches it without kube-proxy. It also calls the debug API.
package visibility
