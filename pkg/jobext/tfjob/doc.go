// Package tfjob is the kubeflow.org/v1 TFJob extension ("tfjob"): it maps a
// TFJob's replica specs (Chief, Master, PS, Worker, Evaluator, then others)
// onto the shared kubeflow helper.
package tfjob
