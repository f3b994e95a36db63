package framework

// WithInflightLimits sets kube-apiserver's --max-requests-inflight and
// --max-mutating-requests-inflight (default 2000 and 1000), for runs that
// must match another harness's control plane.
func WithInflightLimits(reads, mutating int) Option {
	return func(c *startConfig) { c.maxInflight, c.maxMutatingInflight = reads, mutating }
}
