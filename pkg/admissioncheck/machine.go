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

package admissioncheck

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// Backoff of requeues: base, doubling, capped, with +-10 % jitter.
const (
	BackoffBase = 10 * time.Second
	BackoffMax  = 30 * time.Minute
)

// Matching returns the checks of a queue that a unit with these labels needs,
// by name. A nil selector matches every unit.
func Matching(checks []schedv1alpha1.AdmissionCheckWithSelector, unitLabels map[string]string) ([]string, error) {
	var out []string
	for _, c := range checks {
		if c.LabelSelector != nil {
			sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
			if err != nil {
				return nil, fmt.Errorf("admission check %s: label selector: %w", c.Name, err)
			}
			if !sel.Matches(labels.Set(unitLabels)) {
				continue
			}
		}
		out = append(out, c.Name)
	}
	return out, nil
}

// Check is what the scheduler knows of one AdmissionCheck object.
type Check struct {
	Exists bool
	// RetryDelay is how long a unit waits after a Retry answer.
	RetryDelay time.Duration
}

// Action is what to do with a reserved unit.
type Action int

const (
	// Wait: answers are missing; look again after RequeueAfter (0: on change).
	Wait Action = iota
	// Admit: every check is Ready.
	Admit
	// Backoff: release the reservation until RequeueAt.
	Backoff
)

// Decision is the outcome for a reserved unit.
type Decision struct {
	Action Action
	// Reason and Message explain a Backoff, or why the unit waits.
	Reason, Message string
	// RequeueAt is when a backed-off unit goes back to its queue.
	RequeueAt time.Time
	// RequeueAfter is when to look again at a waiting unit.
	RequeueAfter time.Duration
	// Missing lists checks that name no AdmissionCheck object.
	Missing []string
}

// Decide looks at a Reserved unit. timeout bounds the wait for answers,
// counted from the reservation (lastAllocateTime), also for checks whose
// AdmissionCheck object does not exist (the unit says so while it waits).
func Decide(u *schedv1alpha1.QueueUnit, checks map[string]Check, now time.Time, timeout time.Duration, backoff time.Duration) Decision {
	var pending, missing []string
	for _, st := range u.Status.AdmissionChecks {
		c := checks[st.Name]
		if !c.Exists {
			missing = append(missing, st.Name)
		}
		switch st.State {
		case schedv1alpha1.CheckStateRejected:
			return Decision{Action: Backoff, Reason: queueunit.ReasonAdmissionCheckRejected, RequeueAt: now.Add(backoff),
				Message: fmt.Sprintf("admission check %s rejected the unit: %s", st.Name, st.Message)}
		case schedv1alpha1.CheckStateRetry:
			delay := max(c.RetryDelay, backoff)
			return Decision{Action: Backoff, Reason: queueunit.ReasonAdmissionCheckRetry, RequeueAt: now.Add(delay),
				Message: fmt.Sprintf("admission check %s asked to retry: %s", st.Name, st.Message)}
		case schedv1alpha1.CheckStateReady:
		default:
			pending = append(pending, st.Name)
		}
	}
	if len(pending) == 0 {
		return Decision{Action: Admit}
	}
	sort.Strings(missing)
	waitMsg := "waiting for admission checks " + strings.Join(pending, ", ")
	if len(missing) > 0 {
		waitMsg += "; AdmissionCheck " + strings.Join(missing, ", ") + " not found"
	}
	var since time.Time
	if u.Status.LastAllocateTime != nil {
		since = u.Status.LastAllocateTime.Time
	}
	if timeout <= 0 || since.IsZero() {
		return Decision{Action: Wait, Missing: missing, Message: waitMsg}
	}
	// The timeout holds whether or not the checks exist: a check nobody
	// answers never keeps quota reserved for longer.
	left := since.Add(timeout).Sub(now)
	if left > 0 {
		return Decision{Action: Wait, Missing: missing, RequeueAfter: left, Message: waitMsg}
	}
	msg := fmt.Sprintf("admission checks %s did not answer within %s", strings.Join(pending, ", "), timeout)
	if len(missing) > 0 {
		msg += fmt.Sprintf(" (AdmissionCheck %s not found)", strings.Join(missing, ", "))
	}
	return Decision{Action: Backoff, Reason: queueunit.ReasonAdmissionCheckTimeout, RequeueAt: now.Add(backoff), Missing: missing, Message: msg}
}

// BackoffFor is the wait before requeue number count (1, 2, ...): base
// doubling, capped, with jitter drawn from jitter (a number in [0, 1)).
func BackoffFor(count int32, jitter float64) time.Duration {
	if count < 1 {
		count = 1
	}
	d := float64(BackoffBase) * math.Pow(2, float64(count-1))
	if d > float64(BackoffMax) {
		d = float64(BackoffMax)
	}
	d *= 0.9 + 0.2*jitter
	return time.Duration(d)
}

// RandomJitter is the jitter source of production code.
func RandomJitter() float64 { return rand.Float64() }
