// Package sparkapp is the sparkoperator.k8s.io/v1beta2 SparkApplication
// extension ("sparkapp"). It owns the takeover rule (annotation
// scheduling.x-k8s.io/suspend "true" and an empty
// status.applicationState.state), suspension by that annotation ("true" /
// "false"), the driver and executor pod sets built from the cores,
// coreRequest, coreLimit, memory, memoryOverhead, memoryOverheadFactor and gpu
// fields (Spark's JVM memory units), and pod counts from the application and
// executor states.
package sparkapp
