// Package jobext holds the envtest suites of koord-queue-controllers: a real
// kube-apiserver with our CRDs and the job kinds' CRDs, the manager started
// in-process, and the tests playing the scheduler by writing QueueUnit
// status themselves.
package jobext
