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

package harness

import (
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// Config is a generator config: the ElasticQuota tree and, per child quota,
// the classes of units created on a fixed schedule.
type Config struct {
	// Name names the config in the summary.
	Name string `json:"name"`
	// Namespace holds the quotas and units.
	Namespace string `json:"namespace"`
	// Policy is the koord-queue/queue-policy label of every quota.
	Policy string `json:"policy"`
	// PreemptionPolicy is the koord-queue/preemption-policy annotation of every
	// quota (Never when empty). Kueue's baseline uses withinClusterQueue:
	// LowerPriority, so the comparable configs say LowerPriority.
	PreemptionPolicy string `json:"preemptionPolicy,omitempty"`
	// HoldRoomForHigherPriority sets koord-queue/hold-room-for-higher-priority
	// "true" on every quota (off when false): a waiting unit of higher
	// priority keeps lower ones of its cohort out of its room, the order
	// Kueue keeps, so the configs compared with Kueue say true.
	HoldRoomForHigherPriority bool `json:"holdRoomForHigherPriority,omitempty"`
	// ReclaimProtectionPeriod goes into the scheduler's config file.
	ReclaimProtectionPeriod Duration `json:"reclaimProtectionPeriod"`
	// EnablePreemption and EnableReclaim go into the scheduler's config file;
	// unset leaves the scheduler's default (on).
	EnablePreemption *bool      `json:"enablePreemption,omitempty"`
	EnableReclaim    *bool      `json:"enableReclaim,omitempty"`
	Parents          QuotaLevel `json:"parents"`
	// Children are per parent.
	Children QuotaLevel `json:"children"`
	// Classes are per child quota.
	Classes []Class `json:"classes"`
	// Timeout bounds the run from the first creation.
	Timeout Duration `json:"timeout"`
}

// QuotaLevel is one level of the quota tree: Count quotas with the same
// min and max CPU.
type QuotaLevel struct {
	Count int               `json:"count"`
	Min   resource.Quantity `json:"min"`
	Max   resource.Quantity `json:"max"`
}

// Class is one kind of unit: Count units per child quota, one every Interval
// (the first at time 0), each asking for CPU and running for Runtime.
type Class struct {
	Name     string            `json:"name"`
	Count    int               `json:"count"`
	CPU      resource.Quantity `json:"cpu"`
	Runtime  Duration          `json:"runtime"`
	Priority int32             `json:"priority"`
	Interval Duration          `json:"interval"`
}

// Duration reads "200ms" style durations from YAML.
type Duration struct{ time.Duration }

// UnmarshalJSON parses a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := yaml.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// LoadConfig reads and validates a generator config.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Config{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func (c *Config) validate() error {
	if c.Name == "" || c.Namespace == "" {
		return fmt.Errorf("name and namespace are required")
	}
	if c.Policy == "" {
		c.Policy = "Priority"
	}
	switch c.PreemptionPolicy {
	case "", "Never", "LowerPriority":
	default:
		return fmt.Errorf("preemptionPolicy %q is not Never or LowerPriority", c.PreemptionPolicy)
	}
	if c.Timeout.Duration <= 0 {
		c.Timeout.Duration = 30 * time.Minute
	}
	if c.Parents.Count < 1 || c.Children.Count < 1 {
		return fmt.Errorf("parents.count and children.count must be at least 1")
	}
	if c.Parents.Max.IsZero() || c.Children.Max.IsZero() {
		return fmt.Errorf("parents.max and children.max are required")
	}
	if len(c.Classes) == 0 {
		return fmt.Errorf("at least one class is required")
	}
	for i, k := range c.Classes {
		switch {
		case k.Name == "":
			return fmt.Errorf("classes[%d].name is required", i)
		case k.Count < 1:
			return fmt.Errorf("classes[%d].count must be at least 1", i)
		case k.CPU.MilliValue() <= 0:
			return fmt.Errorf("classes[%d].cpu must be positive", i)
		case k.CPU.Cmp(c.Children.Max) > 0 || k.CPU.Cmp(c.Parents.Max) > 0:
			return fmt.Errorf("classes[%d].cpu %s can never fit under children.max %s / parents.max %s", i, k.CPU.String(), c.Children.Max.String(), c.Parents.Max.String())
		case k.Runtime.Duration <= 0 || k.Interval.Duration <= 0:
			return fmt.Errorf("classes[%d].runtime and interval must be positive", i)
		}
	}
	return nil
}

// SchedulerConfig is the KoordQueueConfiguration file koord-queue runs with.
func (c *Config) SchedulerConfig() string {
	out := fmt.Sprintf("apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueConfiguration\nreclaimProtectionPeriod: %s\n", c.ReclaimProtectionPeriod.Duration)
	if c.EnablePreemption != nil {
		out += fmt.Sprintf("enablePreemption: %t\n", *c.EnablePreemption)
	}
	if c.EnableReclaim != nil {
		out += fmt.Sprintf("enableReclaim: %t\n", *c.EnableReclaim)
	}
	return out
}

// Units is the number of units the config creates.
func (c *Config) Units() int {
	n := 0
	for _, k := range c.Classes {
		n += k.Count
	}
	return n * c.Parents.Count * c.Children.Count
}

// ParentName and ChildName name the quotas (and their auto-created Queues).
func ParentName(p int) string                    { return fmt.Sprintf("parent-%d", p) }
func ChildName(p, ch int) string                 { return fmt.Sprintf("child-%d-%d", p, ch) }
func unitName(child, class string, i int) string { return fmt.Sprintf("%s-%s-%d", child, class, i) }

// Ideal is the quota-bound lower bound of the makespan and how it was found.
type Ideal struct {
	// Seconds = max(WorkBound, ArrivalBound).
	Seconds float64 `json:"seconds"`
	// WorkBound is the largest, over parent quotas, of the CPU-seconds of all
	// work charged under the parent divided by its max CPU.
	WorkBound float64 `json:"workBoundSeconds"`
	// ArrivalBound is the largest, over classes, of the creation time of the
	// class's last unit plus its runtime.
	ArrivalBound float64 `json:"arrivalBoundSeconds"`
	Formula      string  `json:"formula"`
}

// IdealMakespan computes the quota-bound ideal. Parents are identical, and a
// child may borrow up to the parent's max, so no schedule finishes the work
// of a parent before work/capacity; no schedule finishes before the last unit
// is created and has run.
func (c *Config) IdealMakespan() Ideal {
	var cpuSeconds, arrival float64
	for _, k := range c.Classes {
		cpuSeconds += float64(k.Count) * float64(k.CPU.MilliValue()) / 1000 * k.Runtime.Seconds()
		last := float64(k.Count-1)*k.Interval.Seconds() + k.Runtime.Seconds()
		arrival = max(arrival, last)
	}
	capacity := float64(c.Parents.Max.MilliValue()) / 1000
	// A child's own max also bounds it when its siblings cannot make up the rest.
	childCap := float64(c.Children.Max.MilliValue()) / 1000
	perParent := cpuSeconds * float64(c.Children.Count)
	work := perParent / min(capacity, childCap*float64(c.Children.Count))
	return Ideal{
		Seconds: max(work, arrival), WorkBound: work, ArrivalBound: arrival,
		Formula: "max( max over parents p of sum_{units u under p} cpu(u)*runtime(u) / min(max(p), sum of children's max) , max over classes k of (count_k-1)*interval_k + runtime_k )",
	}
}

// cpuList is a ResourceList of cpu only.
func cpuList(q resource.Quantity) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: q}
}
