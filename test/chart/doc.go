// Package chart tests the Helm chart charts/koord-queue: helm lint and helm
// template over several value sets with assertions on the rendered objects,
// the drift check of hack/verify-chart.sh, a server-side apply of the rendered
// manifests to a real kube-apiserver (envtest) with each ServiceAccount's RBAC
// proven there by impersonation, and koord-queue plus koord-queue-controllers
// run as the chart's ServiceAccounts admitting a job.
//
// helm and kubectl come from HELM and KUBECTL, else from the folder
// `hack/tools.sh dir` prints; etcd and kube-apiserver from KUBEBUILDER_ASSETS.
// A missing tool fails the tests: run them with `make test-chart`.
package chart
