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

// Package foreign tells, for one pod, which quota Koordinator charges it to
// and whether that usage is koord-queue's own, with no client: the
// ElasticQuotaV2 plugin counts the rest against the quota tree as usage it
// does not manage (SPEC 5.1, docs/protocol.md). It also slims pods down to
// what that needs, for the scheduler's pod informer.
package foreign
