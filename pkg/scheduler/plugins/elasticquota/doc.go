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

// Package elasticquota is the ElasticQuotaV2 plugin. It owns the quota tree
// (pkg/quota) built from Koordinator ElasticQuotas and the usage charged to
// it, maps each unit to its queue and quota, admits a unit only when it fits
// its quota and every ancestor, and says in Warning events what it cannot
// read of an ElasticQuota as asked. It only reads the quotas: their Queues
// are kept by pkg/quotaqueues, a controller of its own.
//
// Its settings are its own arguments, configv1.ElasticQuotaArgs: sharedQuotas
// (tenancy), oversellRate (the factor on every max) and
// reclaimProtectionPeriod; the scheduler app fills the last two from the
// --oversellrate flag and the top-level reclaimProtectionPeriod when unset.
package elasticquota
