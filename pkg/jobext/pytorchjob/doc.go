// Package pytorchjob is the kubeflow.org/v1 PyTorchJob extension
// ("pytorchjob"): it maps a PyTorchJob's replica specs (Master, Worker, then
// others) onto the shared kubeflow helper.
package pytorchjob
