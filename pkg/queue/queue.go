package queue

import (
	"sort"

	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// Settings are a Queue's policy and tuning.
type Settings struct {
	Name     string
	Policy   v1alpha1.QueuePolicy
	Priority int32
	// MaxDepth bounds the units one pass looks at; 0 means no bound. Ignored
	// by Intelligent.
	MaxDepth int
	// Threshold splits Intelligent's bands: priority >= Threshold is high.
	Threshold int32
	// WaitForPodsRunning holds the queue until the last unit it admitted has
	// its pods running. Ignored by Intelligent.
	WaitForPodsRunning bool
}

type pendingQueue struct {
	Settings
	units []*Unit
	// waitingFor is the last admitted unit whose pods do not run yet.
	waitingFor string
}

func (q *pendingQueue) index(u *Unit, less Less) int {
	return sort.Search(len(q.units), func(i int) bool { return !less(q.units[i], u) })
}

func (q *pendingQueue) insert(u *Unit, less Less) {
	i := q.index(u, less)
	q.units = append(q.units, nil)
	copy(q.units[i+1:], q.units[i:])
	q.units[i] = u
}

func (q *pendingQueue) remove(u *Unit, less Less) bool {
	i := q.index(u, less)
	// Units equal under less sit together; find this one among them.
	for j := i; j < len(q.units); j++ {
		if q.units[j] == u {
			q.units = append(q.units[:j], q.units[j+1:]...)
			return true
		}
		if less(u, q.units[j]) {
			break
		}
	}
	// The order may have changed under us (a stale key); fall back to a scan.
	for j, x := range q.units {
		if x == u {
			q.units = append(q.units[:j], q.units[j+1:]...)
			return true
		}
	}
	return false
}

// highBand reports whether u is handled like Block in this queue.
func (q *pendingQueue) blocks(u *Unit) bool {
	switch q.Policy {
	case v1alpha1.QueuePolicyBlock:
		return true
	case v1alpha1.QueuePolicyIntelligent:
		return u.Priority >= q.Threshold
	default:
		return false
	}
}
