// Package rayjob holds the two RayJob extensions, "rayjob" (ray.io/v1) and
// "rayjobv1alpha1" (ray.io/v1alpha1). Both own the takeover rule
// (spec.suspend true and no status.startTime), suspension by spec.suspend,
// pod sets from spec.rayClusterSpec (head plus worker groups, via the
// raycluster package) and pod counts from status.jobDeploymentStatus. The two
// versions are one stored resource: when both extensions run, each serves
// the jobs created in its own version (read from metadata.managedFields).
//
// One Job type serves both versions: versions.go is the only code that
// differs between them, reading each version's fields into one view.
package rayjob
