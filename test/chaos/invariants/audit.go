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

package invariants

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"

	"github.com/koordinator-sh/koord-queue/test/cluster"
)

// AuditOptions configure the check of who writes QueueUnits.
type AuditOptions struct {
	// Log is the kube-apiserver audit log (test/cluster's policy: Lease
	// writes with their response, QueueUnit writes at Metadata level).
	Log string
	// Writers are the API users of the replicas of one binary, one each.
	Writers []string
	// Resources are the resources whose writes are judged: "queueunits"
	// (its status included) unless set; "jobs" for the controllers, which
	// resume and suspend them.
	Resources []string
	// LeaseName and LeaseNamespace name koord-queue's leader Lease.
	LeaseName, LeaseNamespace string
	// UnitVersionAt, when set, is the resourceVersion a unit
	// ("namespace/name") had at revision rev as far as the caller saw it (0
	// when it saw none): an admission written on an older version than the
	// unit had when its writer took the Lease was decided on a cache that
	// had not caught up (decided-on-stale-cache).
	UnitVersionAt func(unit string, rev int64) int64
	// UnitAfter, when set, is the status (JSON) a unit ("namespace/name")
	// had at the version that came right after version rv, as the caller
	// saw them one after the other; false when it did not. A status patch
	// of unknown outcome on version rv landed only if it made that version
	// (see landedLater).
	UnitAfter func(unit string, rv int64) ([]byte, bool)
	// Tolerance is how long after its last renewal a leader may still
	// write: the leader elector's renew deadline plus its retry period
	// (10 s + 2 s, controller-runtime's defaults) unless set.
	Tolerance time.Duration
}

// DefaultTolerance is controller-runtime's RenewDeadline plus RetryPeriod.
const DefaultTolerance = 12 * time.Second

// AuditFigures count what the audit check read.
type AuditFigures struct {
	LeaseWrites int `json:"leaseWrites"`
	// Takeovers are lease writes that changed the holder.
	Takeovers int `json:"takeovers"`
	// Writes are successful QueueUnit writes by the replicas, by user.
	Writes map[string]int `json:"writes"`
	// RefusedWrites are QueueUnit writes by the replicas that the API server
	// refused (4xx: they changed nothing), by user.
	RefusedWrites map[string]int `json:"refusedWrites"`
	// UnknownOutcome are writes answered with a server error or none (5xx,
	// a timeout): they may have landed, so they are judged like writes
	// and count as writes of their unit.
	UnknownOutcome map[string]int `json:"unknownOutcome,omitempty"`
	// NotLanded are writes answered with a server error (5xx) that provably
	// changed nothing: each carried a resourceVersion precondition, and a
	// later write of its object on the same version succeeded, which it
	// could not have if this one had been committed. By user.
	NotLanded map[string]int `json:"notLanded,omitempty"`
	// Unread are writes whose request body the API server could not read
	// (the client had given up and reset the stream before its held bytes
	// arrived): answered 500 before decoding, they changed nothing.
	Unread map[string]int `json:"unread,omitempty"`
	// Uncertain are writes received before another replica's takeover was
	// committed and answered after it: which came first in etcd is unknown,
	// so they are listed, not counted as violations.
	Uncertain []string `json:"uncertain,omitempty"`
	Tolerance string   `json:"tolerance"`
	// written holds the units ("namespace/name") a replica wrote with
	// success: a job whose pods ran must have one (Finish).
	written map[string]bool
}

type leaseWrite struct {
	user, holder string
	at           time.Time // when the API server answered the write
	renew        time.Time
	rv           int64 // the Lease's resourceVersion after the write: etcd's revision then
}

// CheckAudit reads the whole audit log and returns a violation for every
// successful write of a QueueUnit (or its status) by one of o.Writers that
// arrived (requestReceivedTimestamp) when
//   - no successful write of the Lease had been answered yet, or
//   - the last Lease write answered before it named another holder (or
//     none): another replica had taken over, or the writer had released
//     (the holder is compared with the identity in the user agent
//     "koord-queue/<identity>" when there is one, else by API user), or
//   - it came more than o.Tolerance after the renewTime of that last Lease
//     write (the writer's own last renewal): it wrote past its deadline.
func CheckAudit(o AuditOptions) (*AuditFigures, []Violation, error) {
	if o.Tolerance == 0 {
		o.Tolerance = DefaultTolerance
	}
	events, err := cluster.NewAuditReader(o.Log).Next()
	if err != nil {
		return nil, nil, err
	}
	resources := o.Resources
	if len(resources) == 0 {
		resources = []string{"queueunits"}
	}
	writers := map[string]bool{}
	for _, w := range o.Writers {
		writers[w] = true
	}
	fig := &AuditFigures{Writes: map[string]int{}, RefusedWrites: map[string]int{}, UnknownOutcome: map[string]int{}, NotLanded: map[string]int{}, Unread: map[string]int{}, Tolerance: o.Tolerance.String(), written: map[string]bool{}}
	var leases []leaseWrite
	var writes []*auditv1.Event
	userOf := map[string]string{} // holder identity -> user
	for i := range events {
		ev := &events[i]
		if l, ok := cluster.LeaseOf(ev); ok && l.Name == o.LeaseName && l.Namespace == o.LeaseNamespace {
			w := leaseWrite{user: ev.User.Username, at: ev.StageTimestamp.Time}
			if l.Spec.HolderIdentity != nil {
				w.holder = *l.Spec.HolderIdentity
			}
			if l.Spec.RenewTime != nil {
				w.renew = l.Spec.RenewTime.Time
			}
			w.rv, _ = strconv.ParseInt(l.ResourceVersion, 10, 64)
			if w.holder != "" {
				userOf[w.holder] = w.user
			}
			leases = append(leases, w)
			continue
		}
		if ev.ObjectRef != nil && slices.Contains(resources, ev.ObjectRef.Resource) && writers[ev.User.Username] && ev.Verb != "get" {
			writes = append(writes, ev)
		}
	}
	sort.SliceStable(leases, func(i, j int) bool { return leases[i].at.Before(leases[j].at) })
	fig.LeaseWrites = len(leases)
	for i := 1; i < len(leases); i++ {
		if leases[i].holder != leases[i-1].holder {
			fig.Takeovers++
		}
	}
	var out []Violation
	landed := landedLater(writes, o.UnitAfter)
	for _, ev := range writes {
		user := ev.User.Username
		if o.UnitVersionAt != nil && !bodyUnread(ev) {
			// Refused or not, an admission was decided.
			if v := judgeBase(ev, leases, userOf, o.UnitVersionAt); v != "" {
				out = append(out, Violation{Kind: "decided-on-stale-cache", At: ev.RequestReceivedTimestamp.Time, Message: v})
			}
		}
		switch code := responseCode(ev); {
		case bodyUnread(ev):
			fig.Unread[user]++
			continue
		case (code >= 500 || code == 0) && !landed(ev):
			fig.NotLanded[user]++
			continue
		case code >= 500 || code == 0:
			// A timeout or server error: the API server gave up waiting,
			// which does not take back what etcd may commit after (seen:
			// an admission answered 504 whose job was resumed). Judged as
			// a write.
			fig.UnknownOutcome[user]++
		case code >= 300:
			fig.RefusedWrites[user]++
			continue
		default:
			fig.Writes[user]++
		}
		if ev.ObjectRef.Resource == "queueunits" {
			fig.written[ev.ObjectRef.Namespace+"/"+ev.ObjectRef.Name] = true
		}
		if v, uncertain := judgeWrite(ev, leases, userOf, o.Tolerance); v != "" {
			out = append(out, Violation{Kind: "write-by-non-leader", At: ev.RequestReceivedTimestamp.Time, Message: v})
		} else if uncertain != "" {
			fig.Uncertain = append(fig.Uncertain, uncertain)
		}
	}
	return fig, out, nil
}

// judgeBase returns why admission ev, by the replica that held the Lease
// when it arrived, was decided on a version of its unit older than the one
// the unit had when that replica took the Lease; "" when it was not, or ev
// is not an admission. An admission is a status patch that sets
// lastAllocateTime; its base is the resourceVersion it carries (the
// writer's optimistic lock), its answer does not matter: a refused one was
// decided all the same.
func judgeBase(ev *auditv1.Event, leases []leaseWrite, userOf map[string]string, versionAt func(string, int64) int64) string {
	if ev.ObjectRef.Subresource != "status" || ev.Verb != "patch" || ev.RequestObject == nil {
		return ""
	}
	var patch struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Status map[string]json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(ev.RequestObject.Raw, &patch); err != nil {
		return ""
	}
	if _, admits := patch.Status["lastAllocateTime"]; !admits {
		return ""
	}
	base, err := strconv.ParseInt(patch.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		return ""
	}
	received := ev.RequestReceivedTimestamp.Time
	i := sort.Search(len(leases), func(i int) bool { return leases[i].at.After(received) }) - 1
	if i < 0 || !sameReplica(ev, leases[i].holder, userOf) {
		return "" // not the leader's: judged as such
	}
	// The start of the holder's term: the first of its run of lease writes.
	start := i
	for start > 0 && leases[start-1].holder == leases[i].holder {
		start--
	}
	term := leases[start]
	unit := ev.ObjectRef.Namespace + "/" + ev.ObjectRef.Name
	if v := versionAt(unit, term.rv); base < v {
		return fmt.Sprintf("admission of %s by %s received %s was made on version %d; the unit was at version %d when %q took the Lease (revision %d, %s)",
			unit, ev.User.Username, received.Format(time.RFC3339Nano), base, v, term.holder, term.rv, term.at.Format(time.RFC3339Nano))
	}
	return ""
}

// landedLater returns whether a write of unknown outcome may have landed.
// It did not when it carried a resourceVersion precondition and
//   - a write of the same object received after it, on the same version,
//     succeeded (a commit of the first would have changed the version, so
//     the second would have been refused with a conflict; the object's
//     status and main resource share one version); or
//   - it is a merge patch of a QueueUnit's status, and the version that
//     followed its precondition (after, when known) is not what the patch
//     makes: applying it there changes the status. Had it landed, that
//     version would be its own, and a merge patch applied twice changes
//     nothing the second time.
func landedLater(writes []*auditv1.Event, after func(unit string, rv int64) ([]byte, bool)) func(*auditv1.Event) bool {
	type base struct{ object, version string }
	succeeded := map[base][]time.Time{}
	for _, ev := range writes {
		if code := responseCode(ev); code < 200 || code >= 300 {
			continue
		}
		if v := preconditionOf(ev); v != "" {
			k := base{objectOf(ev), v}
			succeeded[k] = append(succeeded[k], ev.RequestReceivedTimestamp.Time)
		}
	}
	return func(ev *auditv1.Event) bool {
		v := preconditionOf(ev)
		if v == "" {
			return true
		}
		for _, at := range succeeded[base{objectOf(ev), v}] {
			if at.After(ev.RequestReceivedTimestamp.Time) {
				return false
			}
		}
		return after == nil || !madeOtherVersion(ev, v, after)
	}
}

// madeOtherVersion reports whether ev, a status patch of a QueueUnit on
// version v, provably did not make the version that followed v: applying
// it to that version's status changes it. False whenever that cannot be
// told (another kind of write, a version not seen, a body not understood).
func madeOtherVersion(ev *auditv1.Event, v string, after func(unit string, rv int64) ([]byte, bool)) bool {
	r := ev.ObjectRef
	if ev.Verb != "patch" || r.Resource != "queueunits" || r.Subresource != "status" || ev.RequestObject == nil {
		return false
	}
	rv, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return false
	}
	var patch map[string]json.RawMessage
	if json.Unmarshal(ev.RequestObject.Raw, &patch) != nil {
		return false
	}
	if _, ssa := patch["kind"]; ssa {
		return false // an apply patch, not a merge patch
	}
	for k := range patch {
		if k != "metadata" && k != "status" {
			return false
		}
	}
	statusPatch := bytes.TrimSpace(patch["status"])
	if len(statusPatch) == 0 || statusPatch[0] != '{' {
		return false
	}
	raw, ok := after(r.Namespace+"/"+r.Name, rv)
	if !ok {
		return false
	}
	var was, patched schedv1alpha1.QueueUnitStatus
	if json.Unmarshal(raw, &was) != nil {
		return false
	}
	// RFC 7386 as the API server applies it: the same library (it uses v4).
	out, err := jsonpatch.MergePatch(raw, statusPatch)
	if err != nil || json.Unmarshal(out, &patched) != nil {
		return false
	}
	return !apiequality.Semantic.DeepEqual(was, patched)
}

func objectOf(ev *auditv1.Event) string {
	r := ev.ObjectRef
	return r.APIGroup + "/" + r.Resource + "/" + r.Namespace + "/" + r.Name
}

// preconditionOf is the resourceVersion a write's body carries; "" when it
// carries none (or the audit event has no body).
func preconditionOf(ev *auditv1.Event) string {
	if ev.RequestObject == nil {
		return ""
	}
	var obj struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(ev.RequestObject.Raw, &obj) != nil {
		return ""
	}
	return obj.Metadata.ResourceVersion
}

// responseCode is the HTTP status the API server answered ev with; 0 when
// the audit event has none.
func responseCode(ev *auditv1.Event) int32 {
	if ev.ResponseStatus == nil {
		return 0
	}
	return ev.ResponseStatus.Code
}

// unreadBody are the errors the API server's handlers answer (500, with the
// error as the message) when reading a request's body fails: HTTP/2's for a
// stream the client reset, and a connection that ended mid-body. They come
// before the body is decoded, so before admission and storage.
var unreadBody = []string{"body closed by handler", "client disconnected", "unexpected EOF"}

// bodyUnread says whether ev was answered with a failure to read its body.
func bodyUnread(ev *auditv1.Event) bool {
	if ev.ResponseStatus == nil || ev.ResponseStatus.Code != 500 {
		return false
	}
	return slices.Contains(unreadBody, ev.ResponseStatus.Message)
}

// sameReplica says whether the writer of ev is the process whose identity
// holder is. A user agent "koord-queue/<identity>" (koord-queue names its
// replica there) must carry holder itself, so a restarted replica is not
// taken for its former self; otherwise the writer's user must be the one that
// wrote holder into the lease.
func sameReplica(ev *auditv1.Event, holder string, userOf map[string]string) bool {
	if holder == "" {
		return false
	}
	if id, ok := strings.CutPrefix(ev.UserAgent, "koord-queue/"); ok && strings.Contains(id, "_") && !strings.Contains(id, "/") {
		return id == holder
	}
	return userOf[holder] == ev.User.Username
}

// judgeWrite returns why ev was written by a replica that was not the
// leader, or else, when a takeover was answered while ev was in flight,
// a note saying so.
func judgeWrite(ev *auditv1.Event, leases []leaseWrite, userOf map[string]string, tolerance time.Duration) (violation, uncertain string) {
	user := ev.User.Username
	received, answered := ev.RequestReceivedTimestamp.Time, ev.StageTimestamp.Time
	resource := ev.ObjectRef.Resource
	if ev.ObjectRef.Subresource != "" {
		resource += "/" + ev.ObjectRef.Subresource
	}
	what := fmt.Sprintf("%s of %s %s/%s by %s received %s", ev.Verb, resource,
		ev.ObjectRef.Namespace, ev.ObjectRef.Name, user, received.Format(time.RFC3339Nano))
	// The last lease write answered before the write arrived.
	i := sort.Search(len(leases), func(i int) bool { return leases[i].at.After(received) }) - 1
	if i < 0 {
		return what + ": before any lease write", ""
	}
	last := leases[i]
	if !sameReplica(ev, last.holder, userOf) {
		return fmt.Sprintf("%s: the lease was held by %q (user %s) since %s", what, last.holder, userOf[last.holder],
			last.at.Format(time.RFC3339Nano)), ""
	}
	if late := received.Sub(last.renew); late > tolerance {
		return fmt.Sprintf("%s: %s after its last renewal (%s), beyond %s", what, late.Round(time.Millisecond),
			last.renew.Format(time.RFC3339Nano), tolerance), ""
	}
	for _, l := range leases[i+1:] {
		if !l.at.Before(answered) {
			break
		}
		if !sameReplica(ev, l.holder, userOf) {
			return "", fmt.Sprintf("%s, answered %s: %s took the lease at %s", what, answered.Format(time.RFC3339Nano),
				userOf[l.holder], l.at.Format(time.RFC3339Nano))
		}
	}
	return "", ""
}
