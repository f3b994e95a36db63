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
