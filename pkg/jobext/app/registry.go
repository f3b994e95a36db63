package app

import (
	"sort"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
)

// NewRegistry lists every job extension this build has. It is the only place
// extensions are named.
func NewRegistry() framework.Registry {
	return framework.Registry{
		job.Name: job.New,
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
