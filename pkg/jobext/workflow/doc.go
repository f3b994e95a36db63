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

// Package workflow is the argoproj.io/v1alpha1 Workflow extension
// ("workflow"), read and written as unstructured objects (no Argo module). It
// owns the opt-in (a koord-queue-suspend template with a suspend field in
// spec.templates or status.storedTemplates asks for the queue even without a
// quota label; the framework then manages the workflow whatever its state),
// suspension by spec.suspend (suspended also while a koord-queue-suspend node
// runs), resumption (spec.suspend false and the running koord-queue-suspend
// nodes marked Succeeded, which is what resuming them means to Argo), the
// single pod set "workflow" whose demand is the koord-queue/min-resources
// annotation (YAML or JSON), and pod counts from the Pod nodes in
// status.nodes.
package workflow
