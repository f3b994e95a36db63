// Package framework starts a real control plane (etcd and kube-apiserver,
// through controller-runtime's envtest) for integration tests, installs
// koord-queue's CRDs, the ElasticQuota CRD and the job kinds' CRDs, and hands
// out clients. It never skips: without the binaries it fails and says how to
// build them.
package framework
