package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/koordinator-sh/koord-queue/pkg/version"
)

func TestBuildInfo(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(NewBuildInfo(version.Info{Version: "v1.9.0", Revision: "abc", GoVersion: "go1.26.0"})); err != nil {
		t.Fatal(err)
	}
	want := `# HELP koord_queue_build_info Always 1; the labels name the running build (version, revision, Go version).
# TYPE koord_queue_build_info gauge
koord_queue_build_info{goversion="go1.26.0",revision="abc",version="v1.9.0"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), BuildInfoName); err != nil {
		t.Error(err)
	}
}

func TestRegisterBuildInfoTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	for i := range 2 {
		if err := RegisterBuildInfo(reg); err != nil {
			t.Fatalf("registration %d: %v", i+1, err)
		}
	}
	if n, err := testutil.GatherAndCount(reg, BuildInfoName); err != nil || n != 1 {
		t.Errorf("koord_queue_build_info series = %d (%v), want 1", n, err)
	}
}
