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

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// jobKinds maps what a user may type (kind, plural, short name, any case) to
// the kind a QueueUnit's consumerRef names.
var jobKinds = map[string]string{
	"job": "Job", "jobs": "Job",
	"tfjob": "TFJob", "tfjobs": "TFJob",
	"pytorchjob": "PyTorchJob", "pytorchjobs": "PyTorchJob",
	"mpijob": "MPIJob", "mpijobs": "MPIJob",
	"rayjob": "RayJob", "rayjobs": "RayJob",
	"raycluster": "RayCluster", "rayclusters": "RayCluster",
	"sparkapplication": "SparkApplication", "sparkapplications": "SparkApplication", "sparkapp": "SparkApplication",
	"workflow": "Workflow", "workflows": "Workflow", "wf": "Workflow",
	"pod": "Pod", "pods": "Pod", "po": "Pod",
	"jobset": "JobSet", "jobsets": "JobSet",
	"leaderworkerset": "LeaderWorkerSet", "leaderworkersets": "LeaderWorkerSet", "lws": "LeaderWorkerSet",
	"trainjob": "TrainJob", "trainjobs": "TrainJob",
}

// unitKinds name the QueueUnit itself.
var unitKinds = map[string]bool{"queueunit": true, "queueunits": true, "qu": true, "qus": true}

// Resolve finds the unit ref names among units (all of one namespace):
//
//	KIND/NAME  the unit of job NAME of that kind (job/foo, tfjob/bar, jobs.batch/foo),
//	           or the unit NAME when KIND is queueunit (qu)
//	NAME       the unit NAME, else the unit of the one job called NAME
//
// A job is matched by the unit's spec.consumerRef, else by its controller
// owner reference, so every extension's naming is covered.
func Resolve(units []schedv1alpha1.QueueUnit, namespace, ref string) (*schedv1alpha1.QueueUnit, error) {
	kindArg, name, hasKind := strings.Cut(ref, "/")
	if !hasKind {
		name, kindArg = kindArg, ""
	}
	if name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("%q is not NAME or KIND/NAME (for example job/train or tfjob/train)", ref)
	}
	if hasKind {
		short, _, _ := strings.Cut(strings.ToLower(kindArg), ".") // jobs.batch -> jobs
		if unitKinds[short] {
			return unitNamed(units, namespace, name)
		}
		kind, known := jobKinds[short]
		if !known {
			kind = kindArg
		}
		var mine []*schedv1alpha1.QueueUnit
		for i := range units {
			if jobOf(&units[i], kind, name) {
				mine = append(mine, &units[i])
			}
		}
		if len(mine) > 0 {
			return firstWaiting(mine), nil
		}
		if !known {
			return nil, fmt.Errorf("no QueueUnit in namespace %s belongs to a %s named %s (known job kinds: %s)",
				namespace, kindArg, name, strings.Join(knownKinds(), ", "))
		}
		if kind == "Pod" {
			return nil, fmt.Errorf("no QueueUnit in namespace %s belongs to Pod %s: is the pod there, labelled %s, with no controller, and extension pod on? "+
				"A member of a group gets its unit only once every member is here (see its WaitingForGroup event)",
				namespace, name, schedv1alpha1.QuotaNameLabel)
		}
		return nil, fmt.Errorf("no QueueUnit in namespace %s belongs to %s %s: is the job there, labelled %s, and of a kind koord-queue-controllers manages?",
			namespace, kind, name, schedv1alpha1.QuotaNameLabel)
	}
	if u, err := unitNamed(units, namespace, name); err == nil {
		return u, nil
	}
	var found []*schedv1alpha1.QueueUnit
	for i := range units {
		if ref := units[i].Spec.ConsumerRef; ref != nil && ref.Name == name {
			found = append(found, &units[i])
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no QueueUnit named %s in namespace %s, and no job of that name has one (try KIND/NAME, e.g. tfjob/%s)", name, namespace, name)
	case 1:
		return found[0], nil
	}
	var choices []string
	for _, u := range found {
		choices = append(choices, strings.ToLower(u.Spec.ConsumerRef.Kind)+"/"+name)
	}
	slices.Sort(choices)
	return nil, fmt.Errorf("several jobs named %s in namespace %s have a QueueUnit; say which: %s", name, namespace, strings.Join(choices, ", "))
}

// firstWaiting picks, of a job's units (a LeaderWorkerSet has one per
// group), the first by name that waits, else the first: the one a "why"
// is about.
func firstWaiting(units []*schedv1alpha1.QueueUnit) *schedv1alpha1.QueueUnit {
	slices.SortFunc(units, func(a, b *schedv1alpha1.QueueUnit) int { return strings.Compare(a.Name, b.Name) })
	for _, u := range units {
		switch u.Status.Phase {
		case schedv1alpha1.QueueUnitPhaseNone, schedv1alpha1.QueueUnitPhaseEnqueued, schedv1alpha1.QueueUnitPhaseTimeoutBackoff:
			return u
		}
	}
	return units[0]
}

func unitNamed(units []schedv1alpha1.QueueUnit, namespace, name string) (*schedv1alpha1.QueueUnit, error) {
	for i := range units {
		if units[i].Name == name {
			return &units[i], nil
		}
	}
	return nil, fmt.Errorf("no QueueUnit named %s in namespace %s", name, namespace)
}

// jobOf reports whether u stands for the job kind/name. A group of pods'
// unit is owned by every member, none its controller.
func jobOf(u *schedv1alpha1.QueueUnit, kind, name string) bool {
	if ref := u.Spec.ConsumerRef; ref != nil && strings.EqualFold(ref.Kind, kind) && ref.Name == name {
		return true
	}
	for _, o := range u.OwnerReferences {
		member := o.APIVersion == "v1" && o.Kind == "Pod"
		if (member || (o.Controller != nil && *o.Controller)) && strings.EqualFold(o.Kind, kind) && o.Name == name {
			return true
		}
	}
	return false
}

func knownKinds() []string {
	seen := map[string]bool{}
	for k, kind := range jobKinds {
		if strings.EqualFold(k, kind) {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return append(out, "queueunit (qu)")
}
