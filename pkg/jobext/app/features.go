package app

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Feature gate names.
const (
	GateQueueUnitActive       = "QueueUnitActive"
	GateMaximumExecutionTime  = "MaximumExecutionTime"
	GateQueueUnitRequeueState = "QueueUnitRequeueState"
)

// ParseFeatureGates reads "Name=bool,..." into the gates struct; every gate
// defaults to off. An unknown gate or a value that is not a bool is an error
// naming the known gates.
func ParseFeatureGates(s string) (framework.FeatureGates, error) {
	var g framework.FeatureGates
	known := map[string]*bool{
		GateQueueUnitActive:       &g.QueueUnitActive,
		GateMaximumExecutionTime:  &g.MaximumExecutionTime,
		GateQueueUnitRequeueState: &g.QueueUnitRequeueState,
	}
	knownNames := make([]string, 0, len(known))
	for n := range known {
		knownNames = append(knownNames, n)
	}
	sort.Strings(knownNames)
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		if !ok {
			return g, fmt.Errorf("feature gate %q: want Name=true|false", item)
		}
		name = strings.TrimSpace(name)
		dst, found := known[name]
		if !found {
			return g, fmt.Errorf("unknown feature gate %q; known gates: %s", name, strings.Join(knownNames, ", "))
		}
		b, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return g, fmt.Errorf("feature gate %s=%q: want true or false", name, value)
		}
		*dst = b
	}
	return g, nil
}
