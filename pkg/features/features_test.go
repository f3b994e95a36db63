package features

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	g, err := Parse("QueueUnitActive=true, MaximumExecutionTime=false,QueueUnitRequeueState=true")
	if err != nil {
		t.Fatal(err)
	}
	if !g.QueueUnitActive || g.MaximumExecutionTime || !g.QueueUnitRequeueState {
		t.Errorf("gates = %+v", g)
	}
	for in, want := range map[string]string{
		"Nope=true":            `unknown gate "Nope"`,
		"QueueUnitActive=yes!": `QueueUnitActive="yes!" is not a boolean`,
		"QueueUnitActive":      "is not Name=true|false",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want error containing %q", in, err, want)
		}
	}
}
