package app

import (
	"sort"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/pytorchjob"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/raycluster"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/rayjob"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/sparkapp"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/tfjob"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/workflow"
)

// NewRegistry lists every job extension this build has. It is the only place
// extensions are named.
func NewRegistry() framework.Registry {
	return framework.Registry{
		job.Name:            job.New,
		tfjob.Name:          tfjob.New,
		pytorchjob.Name:     pytorchjob.New,
		rayjob.Name:         rayjob.New,
		rayjob.NameV1alpha1: rayjob.NewV1alpha1,
		raycluster.Name:     raycluster.New,
		sparkapp.Name:       sparkapp.New,
		workflow.Name:       workflow.New,
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
