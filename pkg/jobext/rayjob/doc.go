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
