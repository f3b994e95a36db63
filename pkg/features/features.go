// Package features parses --feature-gates for both binaries into a Gates
// value that is read once at start and passed down; nothing reads gates from
// global state.
package features

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Names of the feature gates.
const (
	QueueUnitActive       = "QueueUnitActive"
	MaximumExecutionTime  = "MaximumExecutionTime"
	QueueUnitRequeueState = "QueueUnitRequeueState"
)

// Known lists every gate, in a stable order.
var Known = []string{MaximumExecutionTime, QueueUnitActive, QueueUnitRequeueState}

// Gates are the feature gates in force. All default to off.
type Gates struct {
	QueueUnitActive       bool
	MaximumExecutionTime  bool
	QueueUnitRequeueState bool
}

// Parse reads "Name=true,Other=false". An unknown name or a value that is not
// a boolean is an error that names it.
func Parse(s string) (Gates, error) {
	var g Gates
	s = strings.TrimSpace(s)
	if s == "" {
		return g, nil
	}
	for _, kv := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return g, fmt.Errorf("--feature-gates: %q is not Name=true|false", kv)
		}
		on, err := strconv.ParseBool(value)
		if err != nil {
			return g, fmt.Errorf("--feature-gates: %s=%q is not a boolean", name, value)
		}
		switch name {
		case QueueUnitActive:
			g.QueueUnitActive = on
		case MaximumExecutionTime:
			g.MaximumExecutionTime = on
		case QueueUnitRequeueState:
			g.QueueUnitRequeueState = on
		default:
			return g, fmt.Errorf("--feature-gates: unknown gate %q (known: %s)", name, strings.Join(slices.Clone(Known), ", "))
		}
	}
	return g, nil
}
