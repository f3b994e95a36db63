package jobext

import (
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
)

type appOptions = app.Options

// cmpQuantities compares quantities by value.
var cmpQuantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// quiet waits for things that should not happen.
func quiet(t interface{ Helper() }) {
	t.Helper()
	time.Sleep(quietPeriod)
}
