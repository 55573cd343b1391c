package distributor

import (
	"errors"
	"fmt"
	"time"
)

// roster decides which workers the main node keeps a connection to, and
// when a lost connection is made again. It is a plain value in the manner
// of raft's core: no goroutine, no socket, no lock and no clock of its own.
// The Pool feeds it one input at a time (membership news, Add and Remove,
// a connection that passed its handshake or ended, a back-off that ran
// out), under Pool.mu, and carries out the actions each input returns
// once it has let go of the lock. roster_test.go drives it from scripts.
//
// A worker is a member while it is to be kept connected: from Add or its
// join until Remove or its departure. It has at most one live connection
// (dialling or connected); a connection the roster has let go of (dropped,
// replaced) may still be ending, and its end changes nothing.
type roster struct {
	maxBackoff time.Duration // Config.RedialBackoff
	workers    map[string]*rosterWorker
	conns      map[connID]rosterConn // connections not yet ended
	last       uint64                // the last connection id or re-dial token handed out
	closed     bool                  // Close or Abandon: no more dials
}

// connID names one connection (one distributor) for the roster's life.
type connID uint64

// rosterConn is what the roster knows of a connection not yet ended.
type rosterConn struct {
	name string
	inc  uint64
}

// rosterWorker is the roster's state for one worker name.
type rosterWorker struct {
	addr    string
	inc     uint64 // NodeMeta.Incarnation of the member; 0 when unknown
	member  bool
	conn    connID // the live connection; 0 when none
	up      bool   // conn has passed its handshake
	backoff time.Duration
	redial  uint64 // the token of the re-dial waiting for its back-off; 0 when none
	// goodbye is set, with goodbyeInc, when the incarnation said it was
	// leaving (metadata or goodbye frame): the cluster's later news of
	// its departure is a leave, whatever the gossip says.
	goodbye    bool
	goodbyeInc uint64
}

// firstRedial is the wait before the first re-dial of a worker.
const firstRedial = 100 * time.Millisecond

// actionKind says what an action asks of the Pool.
type actionKind int

const (
	actDial    actionKind = iota // connect to addr as conn, for incarnation inc
	actDrop                      // end conn now with err
	actDismiss                   // tell conn's worker to stop with reason, then end conn with err
	actStop                      // ask conn's writer to send what it holds, then stop
	actRedial                    // feed due(name, token) after wait
	actJoined                    // news: the worker joined (logged)
	actIgnored                   // news about an old process of the worker, ignored (reason is the log message)
	actLeft                      // the worker left the cluster (counted)
	actFailed                    // the cluster declared the worker dead (counted)
)

var actionNames = [...]string{"dial", "drop", "dismiss", "stop", "redial", "joined", "ignored", "left", "failed"}

func (k actionKind) String() string { return actionNames[k] }

// action is one thing the roster asks the Pool to do; which fields count
// depends on kind.
type action struct {
	kind   actionKind
	name   string
	addr   string
	inc    uint64
	conn   connID
	wait   time.Duration // actRedial; actDial after a back-off
	token  uint64        // actRedial
	reason string        // actDismiss, actIgnored, actLeft, actFailed
	err    error         // actDrop, actDismiss
}

func newRoster(maxBackoff time.Duration) roster {
	return roster{maxBackoff: maxBackoff, workers: map[string]*rosterWorker{}, conns: map[connID]rosterConn{}}
}

func (r *roster) worker(name string) *rosterWorker {
	w := r.workers[name]
	if w == nil {
		w = &rosterWorker{}
		r.workers[name] = w
	}
	return w
}

func (r *roster) next() uint64 { r.last++; return r.last }

// dial opens a new live connection for w.
func (r *roster) dial(name string, w *rosterWorker, wait time.Duration) action {
	id := connID(r.next())
	w.conn, w.up, w.redial = id, false, 0
	r.conns[id] = rosterConn{name: name, inc: w.inc}
	return action{kind: actDial, name: name, addr: w.addr, inc: w.inc, conn: id, wait: wait}
}

// join is a worker's join (or metadata update) at data-plane address addr
// as incarnation inc (0: unknown, as from Add). A newer incarnation
// replaces the live connection of an older one: a connected one is told
// why it must go, as two processes may share a name. News older than the
// member or its connection is ignored.
func (r *roster) join(name, addr string, inc uint64) []action {
	if r.closed {
		return nil
	}
	w := r.worker(name)
	old := r.conns[w.conn]
	if w.member && inc < w.inc || w.conn != 0 && inc <= old.inc {
		if w.conn != 0 && inc == old.inc {
			return []action{{kind: actJoined, name: name, addr: addr, inc: inc}}
		}
		return []action{{kind: actIgnored, name: name, inc: inc, reason: "ignoring an old process of the worker"}}
	}
	if !w.member || w.inc != inc || w.addr != addr {
		w.member, w.addr, w.inc, w.backoff = true, addr, inc, firstRedial
	}
	oldID, oldUp := w.conn, w.up
	acts := []action{r.dial(name, w, 0), {kind: actJoined, name: name, addr: addr, inc: inc}}
	switch {
	case oldID == 0:
	case oldUp:
		acts = append(acts, action{kind: actDismiss, name: name, conn: oldID,
			reason: "another worker process took this worker's name (two workers started with one name?)",
			err: fmt.Errorf("%w: incarnation %d replaced %d while %d was still connected (two workers started with one name?)",
				errReplaced, inc, old.inc, old.inc)})
	default:
		acts = append(acts, action{kind: actDrop, name: name, conn: oldID,
			err: fmt.Errorf("%w: incarnation %d replaced %d (a restart)", errReplaced, inc, old.inc)})
	}
	return acts
}

// leaving records that incarnation inc of the worker said it is leaving.
func (r *roster) leaving(name string, inc uint64) []action {
	w := r.worker(name)
	w.goodbye, w.goodbyeInc = true, inc
	return nil
}

// depart is the cluster's news that incarnation inc of the worker left
// (failed false) or was declared dead (failed true). A departure of an
// incarnation that said goodbye is a leave.
func (r *roster) depart(name string, inc uint64, failed bool) []action {
	w := r.worker(name)
	if w.goodbye && w.goodbyeInc == inc {
		failed, w.goodbye = false, false
	}
	kind, reason, news := actLeft, "the worker left the cluster", "worker left the cluster"
	if failed {
		kind, reason, news = actFailed, "the cluster declared the worker dead", "worker failed"
	}
	acts, ok := r.remove(name, inc, reason)
	if !ok {
		return append(acts, action{kind: actIgnored, name: name, inc: inc, reason: news + "; a newer process of it has replaced it"})
	}
	return append(acts, action{kind: kind, name: name, inc: inc, reason: reason})
}

// remove stops keeping incarnation inc of the worker (0: any) and drops
// its connection. It returns false, dropping nothing, when a newer
// incarnation is the member or holds the live connection: the news is
// about a process that has been replaced (even while the newer one waits
// for its re-dial, with no connection).
func (r *roster) remove(name string, inc uint64, reason string) ([]action, bool) {
	w := r.workers[name]
	if w == nil {
		return nil, true
	}
	if inc != 0 && w.member && w.inc > inc {
		return nil, false
	}
	if w.member && (inc == 0 || w.inc == inc) {
		w.member, w.redial = false, 0
	}
	if w.conn == 0 {
		return nil, true
	}
	if c := r.conns[w.conn]; inc != 0 && c.inc != inc {
		return nil, false
	}
	id := w.conn
	w.conn, w.up = 0, false
	return []action{{kind: actDrop, name: name, conn: id, err: fmt.Errorf("%w: %s", errRemoved, reason)}}, true
}

// connected is the news that connection id passed its handshake.
func (r *roster) connected(id connID) []action {
	if c, ok := r.conns[id]; ok {
		if w := r.workers[c.name]; w.conn == id {
			w.up = true
		}
	}
	return nil
}

// ended is the news that connection id ended with err after lasting for
// lived. A live connection of a member is made again after its back-off
// (see redialable for which errors are worth it); the back-off doubles
// up to maxBackoff, and starts over after a connection that lasted
// longer than that.
func (r *roster) ended(id connID, err error, lived time.Duration) []action {
	c, ok := r.conns[id]
	if !ok {
		return nil
	}
	delete(r.conns, id)
	w := r.workers[c.name]
	if errors.Is(err, errWorkerLeft) {
		w.goodbye, w.goodbyeInc = true, c.inc
	}
	if w.conn != id {
		return nil // dropped or replaced already
	}
	w.conn, w.up = 0, false
	if r.closed || !w.member || w.inc != c.inc || !redialable(err) {
		return nil
	}
	if lived > r.maxBackoff {
		w.backoff = firstRedial // it worked for a while: start over
	}
	wait := w.backoff
	w.backoff = min(2*w.backoff, r.maxBackoff)
	w.redial = r.next()
	return []action{{kind: actRedial, name: c.name, wait: wait, token: w.redial}}
}

// due is the news that the back-off of re-dial token ran out: the worker
// is dialled again unless it has gone, been dialled since or the roster
// closed.
func (r *roster) due(name string, token uint64, wait time.Duration) []action {
	w := r.workers[name]
	if r.closed || w == nil || w.redial != token || !w.member || w.conn != 0 {
		return nil
	}
	return []action{r.dial(name, w, wait)}
}

// close makes the roster dial no more and asks every connection not yet
// ended to stop: dismissed (told reason, sent nothing more, ended with
// err) when err is not nil, else sent what it holds first (a plain stop).
func (r *roster) close(reason string, err error) []action {
	r.closed = true
	acts := make([]action, 0, len(r.conns))
	for id, c := range r.conns {
		if err != nil {
			acts = append(acts, action{kind: actDismiss, name: c.name, conn: id, reason: reason, err: err})
		} else {
			acts = append(acts, action{kind: actStop, name: c.name, conn: id})
		}
	}
	return acts
}

// redialable reports whether a connection that ended with err is worth
// making again: not after a stop, a goodbye, an interruption, a restart
// of the worker, or a refusal (key, parameters, protocol). A frame that
// failed its integrity check is a broken link, not a refusal: the
// worker is dialled again.
func redialable(err error) bool {
	var pe *PeerError
	var pr *ProtocolError
	switch {
	case errors.Is(err, ErrIntegrity):
		return true
	case err == nil, errors.Is(err, errStopped), errors.Is(err, errWorkerLeft), errors.Is(err, errAbandoned),
		errors.Is(err, errReplaced), errors.Is(err, errRemoved), errors.As(err, &pe), errors.As(err, &pr),
		errors.Is(err, ErrAuth), errors.Is(err, ErrParams), errors.Is(err, ErrVersion), errors.Is(err, ErrFrame):
		return false
	}
	return true
}
