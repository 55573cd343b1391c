package distributor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
)

// Roles of cluster members, in NodeMeta.Role.
const (
	RoleMain   = "main"
	RoleWorker = "worker"
)

// NodeMeta is what a member advertises in its memberlist node metadata,
// msgpack-encoded (memberlist allows 512 bytes).
type NodeMeta struct {
	// Role is RoleMain or RoleWorker.
	Role string
	// Addr is a worker's data-plane address, host:port.
	Addr string
	// Name is the member's name as its operator gave it (the worker's name), the
	// same across restarts. NewMembership sets it.
	Name string
	// Incarnation tells the processes that carried one Name apart: the
	// start time of this one, in nanoseconds since the Unix epoch, so a
	// restarted process has a larger one. NewMembership sets it.
	Incarnation uint64
	// Leaving is set by Leave just before the member leaves, so that the
	// others tell a departure from a failure.
	Leaving bool
}

// Validate reports every reason the other members could not read m, as
// the metadata it encodes to: a Role, Addr or Name over 256 bytes (the
// decoder's limit), or an encoding over memberlist.MetaMaxSize (512
// bytes). Each error gives the encoded size and the limit; NewMembership
// returns them.
func (m NodeMeta) Validate() error {
	size := len(encodeMeta(m))
	var errs []error
	for _, f := range [...]struct{ what, v string }{{"role", m.Role}, {"data-plane address", m.Addr}, {"name", m.Name}} {
		if len(f.v) > maxNameBytes {
			errs = append(errs, fmt.Errorf("distributor: node metadata of %d bytes that no member could read: its %s is %d bytes, limit %d",
				size, f.what, len(f.v), maxNameBytes))
		}
	}
	if size > memberlist.MetaMaxSize {
		errs = append(errs, fmt.Errorf("distributor: node metadata of %d bytes, memberlist allows %d", size, memberlist.MetaMaxSize))
	}
	return errors.Join(errs...)
}

// EventKind says what happened to a member.
type EventKind int

const (
	// Joined: the member joined the cluster.
	Joined EventKind = iota
	// Left: the member said it was leaving (Leave).
	Left
	// Updated: the member's metadata changed.
	Updated
	// Failed: the cluster declared the member dead: it stopped
	// answering probes without leaving.
	Failed
)

func (k EventKind) String() string {
	switch k {
	case Joined:
		return "joined"
	case Left:
		return "left"
	case Updated:
		return "updated"
	case Failed:
		return "failed"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// MemberEvent is a membership change.
type MemberEvent struct {
	Kind EventKind
	// Name is the member's name, Meta.Name (the memberlist node name when
	// the metadata cannot be read). Two processes may carry one Name, one
	// after the other: Meta.Incarnation tells them apart.
	Name string
	// Node is the memberlist node name: Name and the incarnation, unique
	// per process.
	Node string
	// Gossip is the member's memberlist address.
	Gossip string
	// Meta is the member's metadata; MetaErr says why it could not be
	// decoded.
	Meta    NodeMeta
	MetaErr error
}

// MembershipConfig configures a Membership. A zero field takes its
// default.
type MembershipConfig struct {
	// Name is the node's name, unique in the cluster among the processes
	// alive, and the same when a process is restarted (a host name, say).
	// Empty means role-hostname-random. memberlist knows the node as
	// Name#incarnation (NodeMeta.Incarnation in hexadecimal), unique per
	// process, because it refuses a name that a live member holds at
	// another address: a worker restarted at once under its old name
	// would be locked out until the cluster declared the old process
	// dead, and then still refused (memberlist issue #157).
	Name string
	// BindAddr is the gossip address, host:port, for UDP and TCP. Port 0
	// picks a free port (Addr reports it). Empty means 0.0.0.0:7946.
	BindAddr string
	// AdvertiseHost is the IP other members reach this node's gossip at,
	// when BindAddr's host is unspecified (0.0.0.0 or ::). Empty lets
	// memberlist pick a private address of the host, which may be one
	// the other members cannot reach (an IPv6 address when the cluster
	// gossips over IPv4 loopback, say).
	AdvertiseHost string
	// Meta is advertised to the other members.
	Meta NodeMeta
	// Key encrypts the gossip (AES-GCM; 16, 24 or 32 bytes). Nil means
	// plain text. Members with another key cannot join.
	Key []byte
	// Local selects memberlist's DefaultLocalConfig timings (loopback and
	// tests) instead of DefaultLANConfig.
	Local bool
	// Logger receives memberlist's log lines at their own levels; nil
	// discards them.
	Logger *slog.Logger
}

// Membership is this node's membership in the cluster, over
// hashicorp/memberlist: gossip membership and failure detection. Its
// methods are safe for concurrent use.
type Membership struct {
	ml     *memberlist.Memberlist
	meta   NodeMeta
	deleg  *metaDelegate
	events chan MemberEvent
	raw    chan memberlist.NodeEvent
	quit   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
	err    error
	log    *slog.Logger
	// refused holds the members refused for another cluster key: the
	// reasons memberlist gave, with the peers' hosts.
	refused refusals
}

// eventQueue sizes memberlist's event channel. memberlist's
// ChannelEventDelegate blocks its callback when the channel is full; a
// goroutine of ours drains it at once into events, so the callback blocks
// only if the consumer of Events stops reading for this many events.
const eventQueue = 1024

// NewMembership starts memberlist on cfg.BindAddr. The node is alone in
// its cluster until Join.
func NewMembership(cfg MembershipConfig) (*Membership, error) {
	if err := checkKey(cfg.Key); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := memberlist.DefaultLANConfig()
	if cfg.Local {
		c = memberlist.DefaultLocalConfig()
	}
	host, port := "0.0.0.0", 7946
	if cfg.BindAddr != "" {
		h, p, err := net.SplitHostPort(cfg.BindAddr)
		if err != nil {
			return nil, fmt.Errorf("distributor: gossip address %q: %w", cfg.BindAddr, err)
		}
		if port, err = strconv.Atoi(p); err != nil || port < 0 || port > 65535 {
			return nil, fmt.Errorf("distributor: gossip address %q: bad port", cfg.BindAddr)
		}
		if h != "" {
			host = h
		}
	}
	c.BindAddr, c.BindPort = host, port
	c.AdvertisePort = port // memberlist replaces 0 with the bound port
	if ip := net.ParseIP(host); cfg.AdvertiseHost != "" && ip != nil && ip.IsUnspecified() {
		c.AdvertiseAddr = cfg.AdvertiseHost
	}
	cfg.Meta.Name = cfg.Name
	if cfg.Meta.Name == "" {
		cfg.Meta.Name = defaultName(cfg.Meta.Role)
	}
	cfg.Meta.Incarnation = uint64(time.Now().UnixNano())
	if err := cfg.Meta.Validate(); err != nil {
		return nil, err
	}
	c.Name = nodeName(cfg.Meta.Name, cfg.Meta.Incarnation)
	meta := encodeMeta(cfg.Meta)
	deleg := &metaDelegate{log: cfg.Logger}
	deleg.meta.Store(&meta)
	c.Delegate = deleg
	m := &Membership{meta: cfg.Meta, deleg: deleg, log: cfg.Logger, events: make(chan MemberEvent, eventQueue), raw: make(chan memberlist.NodeEvent, eventQueue),
		quit: make(chan struct{})}
	c.Events = &memberlist.ChannelEventDelegate{Ch: m.raw}
	if len(cfg.Key) > 0 {
		c.SecretKey = cfg.Key
	}
	c.LogOutput = nil
	c.Logger = slog.NewLogLogger(levelHandler{h: cfg.Logger.Handler(), keyMismatch: m.keyMismatch}, slog.LevelDebug)
	ml, err := memberlist.Create(c)
	if err != nil {
		return nil, fmt.Errorf("distributor: cannot start memberlist on %s:%d: %w", host, port, err)
	}
	m.ml = ml
	m.wg.Go(m.pump)
	return m, nil
}

// nodeName is the memberlist name of incarnation inc of the member
// called name.
func nodeName(name string, inc uint64) string { return fmt.Sprintf("%s#%016x", name, inc) }

func defaultName(role string) string {
	if role == "" {
		role = "node"
	}
	h, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b)
	return role + "-" + h + "-" + hex.EncodeToString(b)
}

// pump turns memberlist's events into MemberEvents. It runs in its own
// goroutine until Shutdown.
//
// memberlist reports a node that left and one declared dead alike
// (NotifyLeave, with the node as it was last alive). A member that leaves
// through Leave first advertises NodeMeta.Leaving; pump remembers the
// nodes that did, and reports their departure as Left, any other as
// Failed.
func (m *Membership) pump() {
	leaving := map[string]bool{}
	for {
		select {
		case <-m.quit:
			return
		case e := <-m.raw:
			ev := memberEvent(e.Node)
			switch e.Event {
			case memberlist.NodeJoin:
				ev.Kind = Joined
			case memberlist.NodeLeave:
				ev.Kind = Failed
				if leaving[ev.Node] || ev.Meta.Leaving {
					ev.Kind = Left
				}
				delete(leaving, ev.Node)
			default:
				ev.Kind = Updated
			}
			if ev.Kind != Left && ev.Kind != Failed && ev.Meta.Leaving {
				leaving[ev.Node] = true
			}
			select {
			case m.events <- ev:
			case <-m.quit:
				return
			}
		}
	}
}

// memberEvent describes node n; the caller sets Kind.
func memberEvent(n *memberlist.Node) MemberEvent {
	ev := MemberEvent{Name: n.Name, Node: n.Name, Gossip: n.Address()}
	ev.Meta, ev.MetaErr = decodeMeta(n.Meta)
	if ev.MetaErr == nil && ev.Meta.Name != "" {
		ev.Name = ev.Meta.Name
	}
	return ev
}

// Events returns the membership changes, this node's own join included.
// Read it promptly: when it is full, memberlist blocks.
func (m *Membership) Events() <-chan MemberEvent { return m.events }

// Name returns this node's name (MembershipConfig.Name or the default).
func (m *Membership) Name() string { return m.meta.Name }

// Incarnation returns this process's NodeMeta.Incarnation.
func (m *Membership) Incarnation() uint64 { return m.meta.Incarnation }

// Addr returns the gossip address other nodes join through, host:port.
func (m *Membership) Addr() string { return m.ml.LocalNode().Address() }

// Join contacts the given gossip addresses and joins their cluster. It
// returns the number of nodes reached, and an error when none was; the
// error wraps ErrAuth when a node refused this node's cluster key (or its
// lack of one), or could not read its answer for that reason: retrying
// will not help.
func (m *Membership) Join(addrs ...string) (int, error) {
	n, err := m.ml.Join(addrs)
	if err != nil {
		// memberlist's multierror spreads over lines; keep one, without
		// its "1 error occurred: *" preamble.
		msg := strings.Join(strings.Fields(err.Error()), " ")
		msg = multiErrorPreamble.ReplaceAllString(msg, "")
		if isKeyMismatch(msg) {
			return n, fmt.Errorf("distributor: cannot join the cluster at %s: the cluster key differs (%s): %w",
				strings.Join(addrs, ","), msg, ErrAuth)
		}
		return n, fmt.Errorf("distributor: cannot join the cluster at %s: %s", strings.Join(addrs, ","), msg)
	}
	return n, nil
}

// JoinRetry calls Join every interval until it succeeds, fails for the
// cluster key (ErrAuth: at once), or ctx is done, and returns the last
// error then. A failure to reach the cluster is logged at warn once, and
// again every 10 s while it lasts.
func (m *Membership) JoinRetry(ctx context.Context, interval time.Duration, addrs ...string) error {
	var logged time.Time
	for {
		_, err := m.Join(addrs...)
		if err == nil || errors.Is(err, ErrAuth) {
			return err
		}
		if time.Since(logged) >= 10*time.Second {
			m.log.Warn("cannot join the cluster yet; retrying", "every", interval, "err", err)
			logged = time.Now()
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(interval):
		}
	}
}

// Refused returns why each member that tried to join was refused for its
// cluster key (its key differs, or it has none while this node has one,
// or the reverse), with its host, joined by "; " in the order seen, or ""
// if none was.
func (m *Membership) Refused() string { return m.refused.String() }

// multiErrorPreamble matches the "1 error occurred: * " that
// go-multierror puts before each of memberlist's errors.
var multiErrorPreamble = regexp.MustCompile(`\d+ errors? occurred: \* `)

// isKeyMismatch reports whether a memberlist error or log line says that
// the peer uses another cluster key, or none while this node has one, or
// one while this node has none.
func isKeyMismatch(s string) bool {
	s = strings.ToLower(s)
	for _, k := range [...]string{"no installed keys could decrypt", "remote state is encrypted and encryption is not configured",
		"encryption is configured but remote state is not encrypted"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// keyMismatch handles a memberlist log line that says a peer uses another
// cluster key: it records it for Refused and logs it at warn, each new
// one at once and repeats at most once a second (a refused peer retries).
func (m *Membership) keyMismatch(msg string) {
	if !m.refused.add(msg, time.Now()) {
		return
	}
	m.log.Warn("refused a member with another cluster key; check that the main node and every worker have the same cluster key",
		"reason", msg)
}

// Members returns the members alive now, this node included.
func (m *Membership) Members() []MemberEvent {
	var out []MemberEvent
	for _, n := range m.ml.Members() {
		ev := memberEvent(n)
		ev.Kind = Joined
		out = append(out, ev)
	}
	return out
}

// Leave tells the cluster that this node leaves, waiting at most timeout
// in all for the messages to spread: first its metadata with
// NodeMeta.Leaving (so the others report Left rather than Failed), then
// memberlist's leave. With no other member alive it returns at once.
func (m *Membership) Leave(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	meta := m.meta
	meta.Leaving = true
	b := encodeMeta(meta)
	m.deleg.meta.Store(&b)
	// UpdateNode blocks until the new metadata has gone out as often as
	// memberlist retransmits a message (a few gossip intervals); half the
	// time is enough for the first transmission.
	m.ml.UpdateNode(timeout / 2)
	return m.ml.Leave(max(time.Until(deadline), time.Millisecond))
}

// Close leaves the cluster (Leave, within timeout) and shuts memberlist
// down, returning after timeout plus closeSlack at most. memberlist takes
// its locks before its own timeout starts, which on a loaded machine took
// seconds; past the bound Close returns ErrLeaving and the leave goes on
// spreading in the background, and shuts memberlist down when it ends
// (Shutdown during a Leave that has not yet taken its lock would make it
// panic). Otherwise it returns Leave's error, which with the other members
// gone is the usual timeout: nobody needs the news. Call it once, instead
// of Leave and Shutdown.
func (m *Membership) Close(timeout time.Duration) error {
	left := make(chan error, 1)
	go func() {
		err := m.Leave(timeout)
		m.Shutdown()
		left <- err
	}()
	t := time.NewTimer(timeout + closeSlack)
	defer t.Stop()
	select {
	case err := <-left:
		return err
	case <-t.C:
		return ErrLeaving
	}
}

// closeSlack is how long past its leave's timeout Close waits for the
// leave to return.
const closeSlack = 100 * time.Millisecond

// ErrLeaving is Close's error when the process goes with its leave still
// spreading.
var ErrLeaving = errors.New("distributor: the leave is still spreading")

// Shutdown stops memberlist and the event goroutine, without telling the
// cluster (Close does both). It is idempotent.
func (m *Membership) Shutdown() error {
	m.once.Do(func() {
		m.err = m.ml.Shutdown()
		close(m.quit)
		m.wg.Wait()
	})
	return m.err
}

// metaDelegate advertises the node metadata and ignores user messages.
type metaDelegate struct {
	meta atomic.Pointer[[]byte]
	log  *slog.Logger
}

// NodeMeta returns the metadata, which memberlist's Delegate contract
// limits to limit bytes: msgpack cut short is unreadable, so metadata over
// the limit is not advertised at all (memberlist panics on more). It
// cannot happen with memberlist's limit, which NewMembership checks the
// metadata against.
func (d *metaDelegate) NodeMeta(limit int) []byte {
	b := *d.meta.Load()
	if len(b) > limit {
		d.log.Error("node metadata over memberlist's limit; advertising none", "bytes", len(b), "limit", limit)
		return nil
	}
	return b
}

func (d *metaDelegate) NotifyMsg([]byte)                           {}
func (d *metaDelegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (d *metaDelegate) LocalState(join bool) []byte                { return nil }
func (d *metaDelegate) MergeRemoteState(buf []byte, join bool)     {}

// levelHandler gives memberlist's log lines, which slog.NewLogLogger
// passes at one level, the level of their "[ERR]"-style prefix. A line
// that says a peer uses another cluster key goes to keyMismatch instead,
// and to the log at debug; so do the write errors on a closed socket that
// Shutdown causes. A failed push/pull with a peer is a warning: it is how
// a dead peer first shows, before the failure detector declares it.
type levelHandler struct {
	h           slog.Handler
	keyMismatch func(msg string)
}

func (l levelHandler) Enabled(context.Context, slog.Level) bool { return true }

func (l levelHandler) Handle(ctx context.Context, r slog.Record) error {
	msg := r.Message
	level := slog.LevelDebug
	for _, p := range [...]struct {
		prefix string
		level  slog.Level
	}{{"[ERR] ", slog.LevelError}, {"[ERROR] ", slog.LevelError}, {"[WARN] ", slog.LevelWarn},
		{"[INFO] ", slog.LevelInfo}, {"[DEBUG] ", slog.LevelDebug}} {
		if strings.HasPrefix(msg, p.prefix) {
			msg, level = strings.TrimPrefix(msg, p.prefix), p.level
			break
		}
	}
	switch {
	case level >= slog.LevelWarn && l.keyMismatch != nil && isKeyMismatch(msg):
		l.keyMismatch(strings.TrimPrefix(msg, "memberlist: "))
		level = slog.LevelDebug
	case strings.Contains(msg, "use of closed network connection"):
		// memberlist's gossip and probe goroutines write on the socket
		// that Shutdown has just closed: the normal end of a node.
		level = slog.LevelDebug
	case level >= slog.LevelError && strings.HasPrefix(msg, "memberlist: Push/Pull with "):
		// The periodic state exchange met a peer that has just died
		// (SIGKILL, a lost host): the failure detector will declare it,
		// and nothing is wrong with this node.
		level = slog.LevelWarn
	}
	if !l.h.Enabled(ctx, level) {
		return nil
	}
	nr := slog.NewRecord(r.Time, level, msg, r.PC)
	r.Attrs(func(a slog.Attr) bool { nr.AddAttrs(a); return true })
	return l.h.Handle(ctx, nr.Clone())
}

func (l levelHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return levelHandler{l.h.WithAttrs(as), l.keyMismatch}
}
func (l levelHandler) WithGroup(g string) slog.Handler {
	return levelHandler{l.h.WithGroup(g), l.keyMismatch}
}
