/*
Copyright 2026 The Koordinator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package trainjob is the trainer.kubeflow.org/v1alpha1 TrainJob extension
// ("trainjob", Kubeflow Trainer v2). A TrainJob's pods are decided by the
// training runtime it names (a ClusterTrainingRuntime or a namespaced
// TrainingRuntime): the extension resolves it and builds one pod set per
// replicated job of the runtime's JobSet template, with the TrainJob's
// overrides applied as the trainer v2.1.0 controller applies them. The
// TrainJob is held and released through spec.suspend, which the trainer
// passes on to the JobSet it makes.
package trainjob
