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
