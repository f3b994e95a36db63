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

package app

import (
	"sort"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/jobset"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/leaderworkerset"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/mpijob"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/pod"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/pytorchjob"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/raycluster"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/rayjob"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/sparkapp"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/tfjob"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/trainjob"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/workflow"
)

// NewRegistry lists every job extension this build has. It is the only place
// extensions are named.
func NewRegistry() framework.Registry {
	return framework.Registry{
		job.Name:             job.New,
		tfjob.Name:           tfjob.New,
		pytorchjob.Name:      pytorchjob.New,
		mpijob.Name:          mpijob.New,
		pod.Name:             pod.New,
		rayjob.Name:          rayjob.New,
		rayjob.NameV1alpha1:  rayjob.NewV1alpha1,
		raycluster.Name:      raycluster.New,
		sparkapp.Name:        sparkapp.New,
		workflow.Name:        workflow.New,
		jobset.Name:          jobset.New,
		leaderworkerset.Name: leaderworkerset.New,
		trainjob.Name:        trainjob.New,
	}
}

// names lists a registry's extension names, sorted.
func names(reg framework.Registry) []string {
	out := make([]string, 0, len(reg))
	for n := range reg {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
