package app

import "testing"

func TestAdmissionWindow(t *testing.T) {
	for _, tc := range []struct {
		name          string
		flag, workers int
		qps           float32
		want          int
	}{
		{name: "one second of the default client", qps: 100, workers: 8, want: 100},
		{name: "at least one per status worker", qps: 5, workers: 8, want: 8},
		{name: "set by hand", flag: 3, qps: 100, workers: 8, want: 3},
		{name: "negative: no bound", flag: -1, qps: 100, workers: 8, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.AdmissionWindow, o.QPS, o.StatusWorkers = tc.flag, tc.qps, tc.workers
			if got := o.admissionWindow(); got != tc.want {
				t.Errorf("admission window %d, want %d", got, tc.want)
			}
		})
	}
}
