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

package kubectlplugin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// listPhases are the phases `list --phase` takes: those of unfinished units.
var listPhases = []schedv1alpha1.QueueUnitPhase{
	schedv1alpha1.QueueUnitPhaseEnqueued, schedv1alpha1.QueueUnitPhaseReserved, schedv1alpha1.QueueUnitPhaseDequeued,
	schedv1alpha1.QueueUnitPhaseRunning, schedv1alpha1.QueueUnitPhaseTimeoutBackoff,
}

// ListFilter keeps the rows of `list` of one queue, quota or phase; an
// empty field keeps every row.
type ListFilter struct {
	Queue, Quota, Phase string
}

func (f *ListFilter) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.Queue, "queue", "", "Only units of this queue.")
	cmd.Flags().StringVar(&f.Quota, "quota", "", "Only units of this quota (ElasticQuota).")
	cmd.Flags().StringVar(&f.Phase, "phase", "", "Only units in this phase: "+phaseNames()+".")
	_ = cmd.RegisterFlagCompletionFunc("phase", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return strings.Split(phaseNames(), ", "), cobra.ShellCompDirectiveNoFileComp
	})
}

// validate checks --phase and spells it as the API does.
func (f *ListFilter) validate() error {
	if f.Phase == "" {
		return nil
	}
	i := slices.IndexFunc(listPhases, func(p schedv1alpha1.QueueUnitPhase) bool { return strings.EqualFold(string(p), f.Phase) })
	if i < 0 {
		return fmt.Errorf("--phase %q is not the phase of an unfinished unit: use one of %s", f.Phase, phaseNames())
	}
	f.Phase = string(listPhases[i])
	return nil
}

// Keep returns the rows the filter keeps, in order.
func (f ListFilter) Keep(rows []UnitRow) []UnitRow {
	var out []UnitRow
	for _, r := range rows {
		if (f.Queue == "" || r.Queue == f.Queue) && (f.Quota == "" || r.Quota == f.Quota) && (f.Phase == "" || r.Phase == f.Phase) {
			out = append(out, r)
		}
	}
	return out
}

func phaseNames() string {
	names := make([]string, 0, len(listPhases))
	for _, p := range listPhases {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}
