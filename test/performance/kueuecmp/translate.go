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

package kueuecmp

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/koordinator-sh/koord-queue/test/performance/harness"
)

// Generator is the part of Kueue's generator config (its runner's
// --generatorConfig) that the comparison uses: cohorts of ClusterQueues with
// one CPU quota each, and per queue sets of workloads created one per
// interval.
type Generator struct {
	Cohorts []CohortSet `json:"cohorts"`
}

// CohortSet is Count cohorts of the same queues.
type CohortSet struct {
	ClassName  string      `json:"className"`
	Count      int         `json:"count"`
	QueuesSets []QueuesSet `json:"queuesSets"`
}

// QueuesSet is Count ClusterQueues of one cohort.
type QueuesSet struct {
	ClassName           string         `json:"className"`
	Count               int            `json:"count"`
	NominalQuota        intOrString    `json:"nominalQuota"`
	BorrowingLimit      intOrString    `json:"borrowingLimit"`
	ReclaimWithinCohort string         `json:"reclaimWithinCohort"`
	WithinClusterQueue  string         `json:"withinClusterQueue"`
	WorkloadsSets       []WorkloadsSet `json:"workloadsSets"`
}

// WorkloadsSet creates Count workloads of each template, one every
// CreationIntervalMs (sleep, then create).
type WorkloadsSet struct {
	Count              int        `json:"count"`
	CreationIntervalMs int64      `json:"creationIntervalMs"`
	Workloads          []Workload `json:"workloads"`
}

// Workload is one workload template: a single pod asking for Request CPUs.
type Workload struct {
	ClassName string      `json:"className"`
	RuntimeMs int64       `json:"runtimeMs"`
	Priority  int32       `json:"priority"`
	Request   intOrString `json:"request"`
}

// intOrString reads Kueue's quantities, written as numbers or strings.
type intOrString string

func (v *intOrString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = intOrString(s)
		return nil
	}
	*v = intOrString(b)
	return nil
}

// Translate writes our config as Kueue's generator config. A parent quota is
// a cohort, a child quota a ClusterQueue with nominal quota = children.min
// and borrowing limit = children.max - children.min; a class is a workloads
// set of one template. It fails, naming the field, on a config Kueue's shape
// cannot express: a parent's max must equal the sum of its children's min
// (a cohort's capacity is its queues' nominal quotas), preemption within
// a queue must be LowerPriority (what Kueue's configs use), and room must be
// held for higher priority (Kueue's order across sizes).
func Translate(cfg *harness.Config) (*Generator, error) {
	childMin, childMax, parentMax := cfg.Children.Min.MilliValue(), cfg.Children.Max.MilliValue(), cfg.Parents.Max.MilliValue()
	if childMin%1000 != 0 || childMax%1000 != 0 {
		return nil, fmt.Errorf("config %s: children.min and children.max must be whole CPUs", cfg.Name)
	}
	if parentMax != int64(cfg.Children.Count)*childMin {
		return nil, fmt.Errorf("config %s: parents.max %s must equal children.count x children.min (%d x %s): a Kueue cohort's capacity is its queues' nominal quotas",
			cfg.Name, cfg.Parents.Max.String(), cfg.Children.Count, cfg.Children.Min.String())
	}
	if cfg.PreemptionPolicy != "LowerPriority" {
		return nil, fmt.Errorf("config %s: preemptionPolicy must be LowerPriority (Kueue's withinClusterQueue), not %q", cfg.Name, cfg.PreemptionPolicy)
	}
	if !cfg.HoldRoomForHigherPriority {
		return nil, fmt.Errorf("config %s: holdRoomForHigherPriority must be true, so that units of lower priority do not pass a waiting one of higher priority, as in Kueue's ordering", cfg.Name)
	}
	if cfg.EnablePreemption != nil && !*cfg.EnablePreemption || cfg.EnableReclaim != nil && !*cfg.EnableReclaim {
		return nil, fmt.Errorf("config %s: preemption and reclaim must be on to match Kueue's configs", cfg.Name)
	}
	q := QueuesSet{
		ClassName: "cq", Count: cfg.Children.Count,
		NominalQuota:        intOrString(strconv.FormatInt(childMin/1000, 10)),
		BorrowingLimit:      intOrString(strconv.FormatInt((childMax-childMin)/1000, 10)),
		ReclaimWithinCohort: "Any", WithinClusterQueue: "LowerPriority",
	}
	for i, k := range cfg.Classes {
		if k.Interval.Milliseconds()*int64(1e6) != k.Interval.Nanoseconds() || k.Runtime.Milliseconds()*int64(1e6) != k.Runtime.Nanoseconds() {
			return nil, fmt.Errorf("config %s: classes[%d] interval and runtime must be whole milliseconds", cfg.Name, i)
		}
		q.WorkloadsSets = append(q.WorkloadsSets, WorkloadsSet{
			Count: k.Count, CreationIntervalMs: k.Interval.Milliseconds(),
			Workloads: []Workload{{ClassName: k.Name, RuntimeMs: k.Runtime.Milliseconds(), Priority: k.Priority, Request: intOrString(k.CPU.String())}},
		})
	}
	return &Generator{Cohorts: []CohortSet{{ClassName: "cohort", Count: cfg.Parents.Count, QueuesSets: []QueuesSet{q}}}}, nil
}

// LoadGenerator reads a Kueue generator config.
func LoadGenerator(path string) (*Generator, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	g := &Generator{}
	if err := yaml.Unmarshal(data, g); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if len(g.Cohorts) == 0 {
		return nil, fmt.Errorf("%s: no cohorts", path)
	}
	return g, nil
}

// Same reports how two generator configs differ (nil when they are equal).
func Same(want, got *Generator) error {
	if reflect.DeepEqual(want, got) {
		return nil
	}
	a, _ := yaml.Marshal(want)
	b, _ := yaml.Marshal(got)
	return fmt.Errorf("generator configs differ:\n--- ours translated\n%s--- Kueue's\n%s", a, b)
}

// Write stores g as YAML at path.
func (g *Generator) Write(path string) error {
	data, err := yaml.Marshal(g)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
