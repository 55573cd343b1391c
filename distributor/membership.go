package distributor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
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
	// Threads is a worker's delta goroutines.
	Threads int
}

// EventKind says what happened to a member.
type EventKind int

const (
	// Joined: the member joined the cluster.
	Joined EventKind = iota
	// Left: the member left gracefully or was declared dead.
	Left
	// Updated: the member's metadata changed.
	Updated
)

func (k EventKind) String() string {
	switch k {
	case Joined:
		return "joined"
	case Left:
		return "left"
	case Updated:
		return "updated"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// MemberEvent is a membership change.
type MemberEvent struct {
	Kind EventKind
	// Name is the member's unique node name.
	Name string
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
	// Name is the node's unique name. Empty means role-hostname-random.
	Name string
	// BindAddr is the gossip address, host:port, for UDP and TCP. Port 0
	// picks a free port (Addr reports it). Empty means 0.0.0.0:7946.
	BindAddr string
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
	events chan MemberEvent
	raw    chan memberlist.NodeEvent
	quit   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
	err    error
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
	c.Name = cfg.Name
	if c.Name == "" {
		c.Name = defaultName(cfg.Meta.Role)
	}
	meta := encodeMeta(cfg.Meta)
	if len(meta) > memberlist.MetaMaxSize {
		return nil, fmt.Errorf("distributor: node metadata of %d bytes, memberlist allows %d", len(meta), memberlist.MetaMaxSize)
	}
	c.Delegate = metaDelegate(meta)
	m := &Membership{events: make(chan MemberEvent, eventQueue), raw: make(chan memberlist.NodeEvent, eventQueue),
		quit: make(chan struct{})}
	c.Events = &memberlist.ChannelEventDelegate{Ch: m.raw}
	if len(cfg.Key) > 0 {
		c.SecretKey = cfg.Key
	}
	c.LogOutput = nil
	c.Logger = slog.NewLogLogger(levelHandler{cfg.Logger.Handler()}, slog.LevelDebug)
	ml, err := memberlist.Create(c)
	if err != nil {
		return nil, fmt.Errorf("distributor: cannot start memberlist on %s:%d: %w", host, port, err)
	}
	m.ml = ml
	m.wg.Go(m.pump)
	return m, nil
}

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
func (m *Membership) pump() {
	for {
		select {
		case <-m.quit:
			return
		case e := <-m.raw:
			ev := MemberEvent{Name: e.Node.Name, Gossip: e.Node.Address()}
			switch e.Event {
			case memberlist.NodeJoin:
				ev.Kind = Joined
			case memberlist.NodeLeave:
				ev.Kind = Left
			default:
				ev.Kind = Updated
			}
			ev.Meta, ev.MetaErr = decodeMeta(e.Node.Meta)
			select {
			case m.events <- ev:
			case <-m.quit:
				return
			}
		}
	}
}

// Events returns the membership changes, this node's own join included.
// Read it promptly: when it is full, memberlist blocks.
func (m *Membership) Events() <-chan MemberEvent { return m.events }

// Name returns this node's name.
func (m *Membership) Name() string { return m.ml.LocalNode().Name }

// Addr returns the gossip address other nodes join through, host:port.
func (m *Membership) Addr() string { return m.ml.LocalNode().Address() }

// Join contacts the given gossip addresses and joins their cluster. It
// returns the number of nodes reached, and an error when none was.
func (m *Membership) Join(addrs ...string) (int, error) {
	n, err := m.ml.Join(addrs)
	if err != nil {
		// memberlist's multierror spreads over lines; keep one.
		msg := strings.Join(strings.Fields(err.Error()), " ")
		return n, fmt.Errorf("distributor: cannot join the cluster at %s: %s", strings.Join(addrs, ","), msg)
	}
	return n, nil
}

// JoinRetry calls Join every interval until it succeeds or ctx is done,
// and returns the last error then.
func (m *Membership) JoinRetry(ctx context.Context, interval time.Duration, addrs ...string) error {
	for {
		_, err := m.Join(addrs...)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(interval):
		}
	}
}

// Members returns the members alive now, this node included.
func (m *Membership) Members() []MemberEvent {
	var out []MemberEvent
	for _, n := range m.ml.Members() {
		ev := MemberEvent{Kind: Joined, Name: n.Name, Gossip: n.Address()}
		ev.Meta, ev.MetaErr = decodeMeta(n.Meta)
		out = append(out, ev)
	}
	return out
}

// Leave tells the cluster that this node leaves, waiting at most timeout
// for the message to spread.
func (m *Membership) Leave(timeout time.Duration) error { return m.ml.Leave(timeout) }

// Shutdown stops memberlist and the event goroutine, without telling the
// cluster (call Leave first for that). It is idempotent.
func (m *Membership) Shutdown() error {
	m.once.Do(func() {
		m.err = m.ml.Shutdown()
		close(m.quit)
		m.wg.Wait()
	})
	return m.err
}

// metaDelegate advertises fixed node metadata and ignores user messages.
type metaDelegate []byte

func (d metaDelegate) NodeMeta(limit int) []byte                  { return d }
func (d metaDelegate) NotifyMsg([]byte)                           {}
func (d metaDelegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (d metaDelegate) LocalState(join bool) []byte                { return nil }
func (d metaDelegate) MergeRemoteState(buf []byte, join bool)     {}

// levelHandler gives memberlist's log lines, which slog.NewLogLogger
// passes at one level, the level of their "[ERR]"-style prefix.
type levelHandler struct{ h slog.Handler }

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
	if !l.h.Enabled(ctx, level) {
		return nil
	}
	nr := slog.NewRecord(r.Time, level, msg, r.PC)
	r.Attrs(func(a slog.Attr) bool { nr.AddAttrs(a); return true })
	return l.h.Handle(ctx, nr.Clone())
}

func (l levelHandler) WithAttrs(as []slog.Attr) slog.Handler { return levelHandler{l.h.WithAttrs(as)} }
func (l levelHandler) WithGroup(g string) slog.Handler       { return levelHandler{l.h.WithGroup(g)} }
