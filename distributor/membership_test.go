package distributor

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// testMembership starts a member on 127.0.0.1:0 with memberlist's local
// timings (memberlist's testConfig); the test's cleanup shuts it down.
func testMembership(t *testing.T, name string, meta NodeMeta, key []byte) *Membership {
	t.Helper()
	m, err := NewMembership(MembershipConfig{Name: name, BindAddr: "127.0.0.1:0", Meta: meta, Key: key,
		Local: true, Logger: testLogger(t).With("node", name)})
	requireNoError(t, err)
	t.Cleanup(func() { m.Shutdown() })
	return m
}

// nextEvent waits for the next membership event of another node, other
// than a metadata update.
func nextEvent(t *testing.T, m *Membership) MemberEvent {
	t.Helper()
	for {
		select {
		case ev := <-m.Events():
			if ev.Name == m.Name() || ev.Kind == Updated {
				continue
			}
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no membership event in 10 s")
		}
	}
}

func TestMembershipJoinLeave(t *testing.T) {
	checkNoLeaks(t)
	key := bytes.Repeat([]byte{3}, 32)
	main := testMembership(t, "main", NodeMeta{Role: RoleMain}, key)
	if !strings.HasPrefix(main.Addr(), "127.0.0.1:") || strings.HasSuffix(main.Addr(), ":0") {
		t.Fatalf("main node address %q", main.Addr())
	}
	w := testMembership(t, "w1", NodeMeta{Role: RoleWorker, Addr: "127.0.0.1:7100"}, key)
	if _, err := w.Join(main.Addr()); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, main)
	if ev.Kind != Joined || ev.Name != "w1" || ev.MetaErr != nil ||
		ev.Meta != (NodeMeta{Role: RoleWorker, Addr: "127.0.0.1:7100", Name: "w1", Incarnation: w.Incarnation()}) ||
		ev.Node != fmt.Sprintf("w1#%016x", w.Incarnation()) {
		t.Fatalf("event %+v, want w1 joined with its metadata", ev)
	}
	// Leave spends half its time spreading the Leaving metadata, which
	// must reach main before the leave itself: give it room on a loaded
	// machine.
	requireNoError(t, w.Leave(5*time.Second))
	requireNoError(t, w.Shutdown())
	if ev := nextEvent(t, main); ev.Kind != Left || ev.Name != "w1" {
		t.Fatalf("event %+v, want w1 left", ev)
	}
}

// joinOf joins w to main's cluster and waits for main's event of it.
func joinOf(t *testing.T, main, w *Membership) {
	t.Helper()
	if _, err := w.Join(main.Addr()); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, main); ev.Kind != Joined || ev.Meta.Incarnation != w.Incarnation() {
		t.Fatalf("event %+v, want %s joined", ev, w.Name())
	}
}

// TestMembershipFailed: a member that stops without leaving is reported
// Failed, not Left.
func TestMembershipFailed(t *testing.T) {
	checkNoLeaks(t)
	main := testMembership(t, "main", NodeMeta{Role: RoleMain}, nil)
	w := testMembership(t, "w1", NodeMeta{Role: RoleWorker}, nil)
	joinOf(t, main, w)
	requireNoError(t, w.Shutdown())
	if ev := nextEvent(t, main); ev.Kind != Failed || ev.Name != "w1" {
		t.Fatalf("event %+v, want w1 failed", ev)
	}
}

// TestMembershipRestartSameName: a second process under a member's name,
// started while the cluster still counts the first one alive, joins at
// once (memberlist refuses a live name at a new address); the first
// one's failure is reported with its own incarnation.
func TestMembershipRestartSameName(t *testing.T) {
	checkNoLeaks(t)
	main := testMembership(t, "main", NodeMeta{Role: RoleMain}, nil)
	first := testMembership(t, "w1", NodeMeta{Role: RoleWorker, Addr: "127.0.0.1:1"}, nil)
	joinOf(t, main, first)
	requireNoError(t, first.Shutdown())
	second := testMembership(t, "w1", NodeMeta{Role: RoleWorker, Addr: "127.0.0.1:2"}, nil)
	if second.Incarnation() <= first.Incarnation() {
		t.Fatalf("incarnation %d after %d", second.Incarnation(), first.Incarnation())
	}
	t0 := time.Now()
	if _, err := second.Join(main.Addr()); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, main)
	if ev.Kind != Joined || ev.Name != "w1" || ev.Meta.Incarnation != second.Incarnation() || ev.Meta.Addr != "127.0.0.1:2" {
		t.Fatalf("event %+v, want the second w1 joined", ev)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("the second process joined after %v", d)
	}
	ev = nextEvent(t, main)
	if ev.Kind != Failed || ev.Meta.Incarnation != first.Incarnation() {
		t.Fatalf("event %+v, want the first w1 failed", ev)
	}
}

func TestMembershipWrongKey(t *testing.T) {
	checkNoLeaks(t)
	main := testMembership(t, "main", NodeMeta{Role: RoleMain}, bytes.Repeat([]byte{1}, 16))
	for _, key := range [][]byte{bytes.Repeat([]byte{2}, 16), nil} {
		w := testMembership(t, fmt.Sprintf("w-%d", len(key)), NodeMeta{Role: RoleWorker}, key)
		if _, err := w.Join(main.Addr()); err == nil {
			t.Errorf("a member with key %x joined a cluster keyed otherwise", key)
		}
	}
	if n := len(main.Members()); n != 1 {
		t.Errorf("main node sees %d members, want itself only", n)
	}
}

func TestMembershipBadKeySize(t *testing.T) {
	_, err := NewMembership(MembershipConfig{BindAddr: "127.0.0.1:0", Key: []byte("short")})
	if err == nil || !strings.Contains(err.Error(), "16, 24 or 32") {
		t.Errorf("got %v", err)
	}
}

// A member bound to the unspecified address gossips at AdvertiseHost, so a
// main node on loopback can reach it (memberlist alone may pick another
// address of the host, an IPv6 one say, that the cluster cannot use).
func TestMembershipAdvertiseHost(t *testing.T) {
	main := testMembership(t, "main", NodeMeta{Role: RoleMain}, nil)
	w, err := NewMembership(MembershipConfig{Name: "w", BindAddr: "0.0.0.0:0", AdvertiseHost: "127.0.0.1",
		Meta: NodeMeta{Role: RoleWorker, Addr: "127.0.0.1:1"}, Local: true, Logger: testLogger(t).With("node", "w")})
	requireNoError(t, err)
	t.Cleanup(func() { w.Shutdown() })
	if !strings.HasPrefix(w.Addr(), "127.0.0.1:") {
		t.Fatalf("gossip advertised at %s, want 127.0.0.1:PORT", w.Addr())
	}
	if _, err := w.Join(main.Addr()); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, main); ev.Kind != Joined || ev.Meta.Name != "w" {
		t.Fatalf("main node saw %+v, want w joined", ev)
	}
}

// TestMemberlistLogLevels: memberlist's log lines reach the log at the
// level of their prefix, a failed push/pull with a dead peer as a warning,
// the writes on a socket Shutdown closed at debug (hidden here), and a
// key mismatch at the callback instead.
func TestMemberlistLogLevels(t *testing.T) {
	var b bytes.Buffer
	var mismatches []string
	h := levelHandler{
		h:           slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelInfo}),
		keyMismatch: func(msg string) { mismatches = append(mismatches, msg) },
	}
	l := slog.NewLogLogger(h, slog.LevelDebug)
	l.Print("[ERR] memberlist: Push/Pull with w1 failed: dial tcp 127.0.0.1:7946: connect: connection refused")
	l.Print("[ERR] memberlist: Failed to receive: EOF")
	l.Print("[WARN] memberlist: Refuting a suspect message (from: w2)")
	l.Print("[INFO] memberlist: Marking w1 as failed, suspect timeout reached")
	l.Print("[ERR] memberlist: Failed to send gossip to 127.0.0.1:7946: write udp: use of closed network connection")
	l.Print("[DEBUG] memberlist: Stream connection from=127.0.0.1:5000")
	l.Print("[ERR] memberlist: Failed to decrypt packet: No installed keys could decrypt the message")
	out := b.String()
	for _, want := range []string{
		`level=WARN msg="memberlist: Push/Pull with w1 failed`,
		`level=ERROR msg="memberlist: Failed to receive: EOF"`,
		`level=WARN msg="memberlist: Refuting a suspect message`,
		`level=INFO msg="memberlist: Marking w1 as failed`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, hidden := range []string{"closed network connection", "Stream connection", "decrypt"} {
		if strings.Contains(out, hidden) {
			t.Errorf("log shows %q at info:\n%s", hidden, out)
		}
	}
	if len(mismatches) != 1 {
		t.Errorf("key mismatches reported: %q, want the decrypt line", mismatches)
	}
}

// TestNodeMetaValidate: metadata the other members could not read (a
// field over the decoder's limit, a --advertise host of 253 characters
// say) is refused at NewMembership with its encoded size and the limit;
// at the limit it is accepted, and decodes.
func TestNodeMetaValidate(t *testing.T) {
	host := strings.Repeat("h", 253)
	_, err := NewMembership(MembershipConfig{Name: "w", BindAddr: "127.0.0.1:0",
		Meta: NodeMeta{Role: RoleWorker, Addr: host + ":17100"}})
	if err == nil || !strings.Contains(err.Error(), "data-plane address is 259 bytes, limit 256") ||
		!strings.Contains(err.Error(), "node metadata of 283 bytes") {
		t.Fatalf("NewMembership with a 259-byte address: %v", err)
	}
	at := NodeMeta{Role: RoleWorker, Addr: strings.Repeat("h", 251) + ":7100", Name: strings.Repeat("n", 200),
		Incarnation: 1<<64 - 1, Leaving: true}
	if err := at.Validate(); err != nil {
		t.Fatalf("metadata at the limits: %v", err)
	}
	if got, err := decodeMeta(encodeMeta(at)); err != nil || got != at {
		t.Fatalf("metadata at the limits decodes as %+v, %v", got, err)
	}
	// Every problem at once.
	long := host + ":17100"
	err = NodeMeta{Role: long, Addr: long, Name: long}.Validate()
	if err == nil || strings.Count(err.Error(), "limit 256") != 3 || !strings.Contains(err.Error(), "memberlist allows 512") {
		t.Errorf("three long fields: %v", err)
	}
}

// TestNodeMetaLimit: the delegate honours memberlist's limit (Delegate's
// contract: memberlist panics on more); metadata over it is not
// advertised, rather than cut into unreadable msgpack.
func TestNodeMetaLimit(t *testing.T) {
	b := encodeMeta(NodeMeta{Role: RoleWorker, Addr: "127.0.0.1:7100", Name: "w1"})
	d := &metaDelegate{log: testLogger(t)}
	d.meta.Store(&b)
	if got := d.NodeMeta(len(b)); !bytes.Equal(got, b) {
		t.Errorf("NodeMeta(%d) = %x, want the metadata %x", len(b), got, b)
	}
	if got := d.NodeMeta(len(b) - 1); len(got) > len(b)-1 {
		t.Errorf("NodeMeta(%d) returned %d bytes", len(b)-1, len(got))
	}
}
