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
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// GateRefusal says why spec.active may not be set, or nil when it may:
// gates are the scheduler's (nil when unknown, with why). force sets it when
// the gates are unknown, never when the gate is known to be off.
func GateRefusal(gates map[string]bool, unknownWhy string, active, force bool) error {
	verb := "stop"
	if active {
		verb = "resume"
	}
	if gates == nil {
		if force {
			return nil
		}
		return fmt.Errorf("cannot tell whether koord-queue runs with feature gate %s (%s), without which spec.active is ignored; "+
			"pass --force to %s the unit anyway", features.QueueUnitActive, unknownWhy, verb)
	}
	if !gates[features.QueueUnitActive] {
		return fmt.Errorf("refused: koord-queue runs without feature gate %s, so spec.active=%t would be ignored "+
			"(--force does not override a gate known to be off; start koord-queue with --feature-gates=%s=true, "+
			"Helm value controller.featureGates)",
			features.QueueUnitActive, active, features.QueueUnitActive)
	}
	return nil
}

// SetActive writes spec.active of the unit key.
func SetActive(ctx context.Context, c client.Client, key types.NamespacedName, active bool) error {
	u := &schedv1alpha1.QueueUnit{}
	u.Namespace, u.Name = key.Namespace, key.Name
	patch := fmt.Appendf(nil, `{"spec":{"active":%t}}`, active)
	if err := c.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("set spec.active of queueunit %s: %w", key, err)
	}
	return nil
}

// activeCommand is `stop` (active false) or `resume` (active true).
func (o *options) activeCommand(active bool) *cobra.Command {
	var force bool
	verb, short, long := "stop", "Stop a unit: set its spec.active to false",
		`Set the unit's spec.active to false: a waiting unit is never admitted, an
admitted one is evicted (its job suspended, its quota released). It needs
koord-queue's feature gate QueueUnitActive, which the plugin reads from the
visibility API; it refuses when the gate is off (even with --force), and
when it cannot tell unless --force is given.`
	if active {
		verb, short, long = "resume", "Resume a stopped unit: set its spec.active to true",
			`Set the unit's spec.active to true, so that it is queued and admitted again.
Like stop, it needs koord-queue's feature gate QueueUnitActive.`
	}
	cmd := &cobra.Command{
		Use:     verb + " (KIND/NAME | NAME)",
		Short:   short,
		Long:    long,
		Example: fmt.Sprintf("  kubectl koord-queue %s job/train\n  kubectl koord-queue %s tfjob/mnist -n research", verb, verb),
		Args:    exactlyOne(verb),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, ns, err := o.reader()
			if err != nil {
				return err
			}
			s, err := r.Gather(cmd.Context(), ns, o.now())
			if err != nil {
				return err
			}
			u, err := Resolve(s.Units, ns, args[0])
			if err != nil {
				return err
			}
			why := "the visibility API, which publishes the gates, is not served"
			if o.source == sourceObjects {
				why = "--source=objects does not read the visibility API, which publishes the gates"
			}
			if err := GateRefusal(s.Gates, why, active, force); err != nil {
				return err
			}
			if queueunit.IsActive(u) == active {
				_, err := fmt.Fprintf(o.streams.Out, "queueunit %s/%s already has spec.active=%t\n", u.Namespace, u.Name, active)
				return err
			}
			if err := SetActive(cmd.Context(), r.Client, types.NamespacedName{Namespace: u.Namespace, Name: u.Name}, active); err != nil {
				return err
			}
			done := "stopped"
			if active {
				done = "resumed"
			}
			_, err = fmt.Fprintf(o.streams.Out, "queueunit %s/%s %s (spec.active=%t)\n", u.Namespace, u.Name, done, active)
			return err
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "Set spec.active when the plugin cannot tell whether the QueueUnitActive gate is on (a gate known to be off is still refused).")
	return cmd
}
