package webhook

import (
	"strings"
	"testing"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/pytorchjob"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/raycluster"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/rayjob"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/sparkapp"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/tfjob"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/workflow"
)

// TestRulesNameTheServedResources: each rule's resource is the plural the
// API serves: for a CRD, the first part of its name (<plural>.<group>).
func TestRulesNameTheServedResources(t *testing.T) {
	opts := framework.ExtensionOptions{}
	exts := []framework.Extension{job.New(opts), tfjob.New(opts), pytorchjob.New(opts), rayjob.New(opts), rayjob.NewV1alpha1(opts),
		raycluster.New(opts), sparkapp.New(opts), workflow.New(opts)}
	rules := Rules(exts)
	for i, ext := range exts {
		r := rules[i]
		want := "jobs"
		if ext.CRD != "" {
			want = strings.SplitN(ext.CRD, ".", 2)[0]
		}
		if got := r.Resources[0]; got != want || r.APIGroups[0] != ext.GVK.Group || r.APIVersions[0] != ext.GVK.Version {
			t.Errorf("%s: rule %v/%v/%v, want resource %s in %s", ext.Name, r.APIGroups, r.APIVersions, r.Resources, want, ext.GVK.GroupVersion())
		}
	}
}
