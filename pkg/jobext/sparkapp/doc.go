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

// Package sparkapp is the sparkoperator.k8s.io/v1beta2 SparkApplication
// extension ("sparkapp"). It owns suspension by spec.suspend (the field
// spark-operator v2 obeys), with the scheduling.x-k8s.io/suspend annotation
// also written ("true" / "false") for tools that read it; a state past New
// as the sign an application started; the driver and executor pod sets built
// from the cores, coreRequest, coreLimit, memory, memoryOverhead,
// memoryOverheadFactor and gpu fields (Spark's JVM memory units); and pod
// counts from the application and executor states. Which applications are
// managed is the framework's rule (a quota label, or --manage-all-jobs for
// one not yet started or suspended).
package sparkapp
