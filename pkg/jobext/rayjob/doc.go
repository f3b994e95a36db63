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

// Package rayjob holds the two RayJob extensions, "rayjob" (ray.io/v1) and
// "rayjobv1alpha1" (ray.io/v1alpha1). Both own suspension by spec.suspend,
// status.startTime as the sign a job started (KubeRay sets it on its first
// reconcile, suspended or not, so a labelled job is managed whatever its
// state: the framework's rule), pod sets from spec.rayClusterSpec (head plus
// worker groups, via the raycluster package) and pod counts from
// status.jobDeploymentStatus. The two versions are one stored resource: when
// both extensions run, each serves the jobs created in its own version (read
// from metadata.managedFields).
//
// One Job type serves both versions: versions.go is the only code that
// differs between them, reading each version's fields into one view.
package rayjob
