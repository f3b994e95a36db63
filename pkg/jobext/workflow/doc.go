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
