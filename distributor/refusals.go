package distributor

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// refusals records the members a node refused for another cluster key:
// each distinct reason from each peer host once (a refused peer retries
// from new ports), in the order seen, at most maxRefusals of them. Its
// methods are safe for concurrent use.
type refusals struct {
	mu   sync.Mutex
	seen []string
	more bool      // distinct refusals past maxRefusals were dropped
	last time.Time // the last one worth logging
}

// maxRefusals bounds the refusals kept.
const maxRefusals = 16

// peerPort matches the port of memberlist's "from=HOST:PORT".
var peerPort = regexp.MustCompile(`(from=(?:\[[^\]]*\]|[^\s:\]]+)):\d+`)

// add records the refusal msg (memberlist's, with its from=HOST:PORT) at
// now, and says whether to log it: a refusal not seen before, or a repeat
// a second or more after the last one logged.
func (r *refusals) add(msg string, now time.Time) bool {
	key := peerPort.ReplaceAllString(msg, "$1")
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.seen, key) {
		if len(r.seen) < maxRefusals {
			r.seen = append(r.seen, key)
		} else {
			r.more = true
		}
		r.last = now
		return true
	}
	if now.Sub(r.last) < time.Second {
		return false
	}
	r.last = now
	return true
}

// String returns the refusals seen, joined by "; ", ending with "; and
// more" when some were dropped; "" when there was none.
func (r *refusals) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.Join(r.seen, "; ")
	if r.more {
		s += "; and more"
	}
	return s
}
