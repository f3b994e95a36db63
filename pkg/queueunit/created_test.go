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

package queueunit

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

func TestJobCreated(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 7, 0, time.UTC))
	cases := map[string]struct {
		stamp string
		want  time.Time
	}{
		"no stamp":                 {"", created.Time},
		"not a time":               {"soon", created.Time},
		"within the second":        {"2026-12-01T10:00:07.250Z", time.Date(2026, 12, 1, 10, 0, 7, 250e6, time.UTC)},
		"just before the second":   {"2026-12-01T10:00:06.999Z", time.Date(2026, 12, 1, 10, 0, 6, 999e6, time.UTC)},
		"five seconds before":      {"2026-12-01T10:00:02Z", time.Date(2026, 12, 1, 10, 0, 2, 0, time.UTC)},
		"more than five before":    {"2026-12-01T10:00:01.999Z", created.Time},
		"the next second":          {"2026-12-01T10:00:08Z", created.Time},
		"an hour earlier, claimed": {"2026-12-01T09:00:07Z", created.Time},
		"another zone, same time":  {"2026-12-01T18:00:07.5+08:00", time.Date(2026, 12, 1, 10, 0, 7, 500e6, time.UTC)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := JobCreated(created, map[string]string{schedv1alpha1.CreatedAtAnnotation: tc.stamp})
			if !got.Equal(tc.want) {
				t.Errorf("JobCreated = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCreated(t *testing.T) {
	own := time.Date(2026, 12, 1, 10, 0, 9, 0, time.UTC)
	cases := map[string]struct {
		recorded string
		want     time.Time
	}{
		"nothing recorded":           {"", own},
		"garbage":                    {"yesterday", own},
		"the job's, seconds earlier": {"2026-12-01T10:00:07.25Z", time.Date(2026, 12, 1, 10, 0, 7, 250e6, time.UTC)},
		"within the unit's second":   {"2026-12-01T10:00:09.9Z", time.Date(2026, 12, 1, 10, 0, 9, 900e6, time.UTC)},
		"after the unit's creation":  {"2026-12-01T10:00:10Z", own},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &schedv1alpha1.QueueUnit{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(own),
				Annotations: map[string]string{schedv1alpha1.JobCreatedAtAnnotation: tc.recorded}}}
			if got := Created(u); !got.Equal(tc.want) {
				t.Errorf("Created = %s, want %s", got, tc.want)
			}
		})
	}
	if got := Created(&schedv1alpha1.QueueUnit{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(own)}}); !got.Equal(own) {
		t.Errorf("no annotations: %s", got)
	}
}

func TestFormatCreatedRoundTrips(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 7, 123456789, time.FixedZone("x", 3600))
	back, err := time.Parse(time.RFC3339Nano, FormatCreated(at))
	if err != nil || !back.Equal(at) {
		t.Errorf("FormatCreated %q parses to %s, %v", FormatCreated(at), back, err)
	}
}
