package schedtypes

import "strings"

// UnitKey names one QueueUnit as "namespace/name".
type UnitKey string

// NewUnitKey is the key of the unit name in namespace.
func NewUnitKey(namespace, name string) UnitKey {
	return UnitKey(namespace + "/" + name)
}

// Split returns the key's namespace and name; a key without a slash has no
// namespace.
func (k UnitKey) Split() (namespace, name string) {
	ns, n, ok := strings.Cut(string(k), "/")
	if !ok {
		return "", ns
	}
	return ns, n
}

// QueueName names a Queue.
type QueueName string

// QuotaName names a quota (an ElasticQuota).
type QuotaName string

// CohortName names a cohort: the group of quotas whose freed capacity can
// help each other. The queue-map plugin names cohorts; the elastic quota
// plugin names each after the top-level quota above its members.
type CohortName string
