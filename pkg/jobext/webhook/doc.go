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

// Package webhook is the mutating admission webhook of koord-queue-controllers:
// it suspends every job koord-queue will manage at creation, by the kind's
// native field, so a stock operator never starts it before its unit is
// admitted. It owns the handler, the webhook's serving certificate when the
// binary manages it (through pkg/util/certrotation), and the runtime fields of
// the MutatingWebhookConfiguration it serves: the CA bundle and the namespace
// selector, which it derives from the --manage-all-jobs selector.
package webhook
