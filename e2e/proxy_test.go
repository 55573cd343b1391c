package e2e

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// proxy stands between a main node and one worker's data port: the
// worker advertises the proxy's address (worker --advertise) and the
// proxy forwards every connection, both ways, to the worker's --listen
// address. Its options change what it does to the traffic; the gossip
// does not go through it, so the worker stays a member of the cluster
// whatever the proxy does.
type proxy struct {
	t      testing.TB
	ln     net.Listener
	opts   proxyOptions
	target chan string // the worker's address, sent once by forwardTo
	wg     sync.WaitGroup
	quit   chan struct{}
	toMain atomic.Int64 // bytes forwarded from the worker, all connections

	mu struct {
		sync.Mutex
		conns    []net.Conn
		accepted int
		flipped  []string  // the frames flipped: "batches", "deltas"
		cut      time.Time // when the first connection was cut
		// held and released are when the withheld frame of deltas was
		// taken out of the stream and put back; heldIDs counts its
		// deltas, framesWhileHeld the frames forwarded in between.
		held, released  time.Time
		heldIDs         int
		framesWhileHeld int
	}
}

// proxyOptions say what the proxy does; the zero value forwards all.
type proxyOptions struct {
	// cutAfter > 0 closes the first connection once that many bytes have
	// gone from the main node to the worker (mid-frame, as a dropped
	// link would); later connections are forwarded whole.
	cutAfter int64
	// hold > 0 withholds the first frame of deltas of the first
	// connection from the main node for that long, forwarding the frames
	// that follow it meanwhile, then puts it back between two frames
	// (for a cluster without a key: under one, a frame moved fails its
	// check).
	hold time.Duration
	// rate > 0 forwards at most rate bytes per second from the worker to
	// the main node, reading through a small socket buffer, so that the
	// worker's writes block: a slow link back.
	rate int
	// flipTrailer > 0 flips one bit in the payload of the first sealed
	// frame with a payload: of batches on the first connection, of deltas
	// on the second; the frames after the handshake carry trailers of
	// flipTrailer bytes (16 under a cluster key, 4 without). Later
	// connections are forwarded whole.
	flipTrailer int
}

const (
	protocolBytes = len("sketchcc-batch/6") // the raw version that opens each direction
	deltasFrame   = 5                       // distributor's deltasMsg
	crcTrailer    = 4                       // the CRC-32C after a frame past the handshake, without a cluster key
)

// newProxy listens on 127.0.0.1:0; it forwards nothing until forwardTo.
func newProxy(t testing.TB, opts proxyOptions) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, opts: opts, target: make(chan string, 1), quit: make(chan struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		close(p.quit)
		ln.Close()
		p.mu.Lock()
		for _, c := range p.mu.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

// forwardTo gives the proxy the worker's data-plane address.
func (p *proxy) forwardTo(addr string) { p.target <- addr }

// startWorkerBehind starts a worker that advertises the proxy's address
// and points the proxy at the worker's listener.
func startWorkerBehind(t testing.TB, p *proxy, join string, args ...string) *proc {
	t.Helper()
	w := startWorker(t, join, append([]string{"--advertise", p.addr()}, args...)...)
	p.forwardTo(w.waitLog(`msg="worker listening" .*listen=(\S+)`, time.Second)[1])
	return w
}

func (p *proxy) accept() {
	var target string
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if target == "" {
			select {
			case target = <-p.target:
			case <-p.quit:
				c.Close()
				return
			}
		}
		w, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		first := p.mu.accepted == 0
		conn := p.mu.accepted
		p.mu.accepted++
		p.mu.conns = append(p.mu.conns, c, w)
		p.mu.Unlock()
		if p.opts.rate > 0 {
			w.(*net.TCPConn).SetReadBuffer(32 << 10)
		}
		var both sync.WaitGroup
		switch {
		case p.opts.flipTrailer > 0 && conn < 2:
			// One direction flips, the other forwards.
			from, to, name := c, w, "batches"
			if conn == 1 {
				from, to, name = w, c, "deltas"
			}
			both.Go(func() { p.flip(to, from, name) })
			both.Go(func() { io.Copy(from, to); from.(*net.TCPConn).CloseWrite() })
		default:
			both.Go(func() { p.toWorker(w, c, first) })
			both.Go(func() { p.fromWorker(c, w, first) })
		}
		p.wg.Go(func() {
			both.Wait()
			c.Close()
			w.Close()
		})
	}
}

// toWorker copies the main node's bytes to the worker.
func (p *proxy) toWorker(w, c net.Conn, first bool) {
	if first && p.opts.cutAfter > 0 {
		io.CopyN(w, c, p.opts.cutAfter)
		p.mu.Lock()
		p.mu.cut = time.Now()
		p.mu.Unlock()
		c.Close()
		w.Close()
		return
	}
	io.Copy(w, c)
	w.(*net.TCPConn).CloseWrite()
}

// fromWorker copies the worker's bytes to the main node.
func (p *proxy) fromWorker(c, w net.Conn, first bool) {
	defer c.(*net.TCPConn).CloseWrite()
	switch {
	case first && p.opts.hold > 0:
		p.withhold(c, w)
	case p.opts.rate > 0:
		buf := make([]byte, 8<<10)
		t0 := time.Now()
		var sent int64
		for {
			n, err := w.Read(buf)
			if n > 0 {
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
				sent += int64(n)
				p.toMain.Add(int64(n))
				time.Sleep(time.Until(t0.Add(time.Duration(sent) * time.Second / time.Duration(p.opts.rate))))
			}
			if err != nil {
				return
			}
		}
	default:
		n, _ := io.Copy(c, w)
		p.toMain.Add(n)
	}
}

// withhold forwards the worker's frames but the first frame of deltas,
// which it puts back opts.hold later.
func (p *proxy) withhold(c, w net.Conn) {
	r := bufio.NewReader(w)
	var wmu sync.Mutex // one frame at a time to the main node
	put := func(b []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		_, err := c.Write(b)
		p.toMain.Add(int64(len(b)))
		return err
	}
	version := make([]byte, protocolBytes)
	if _, err := io.ReadFull(r, version); err != nil || put(version) != nil {
		return
	}
	holding := false
	for i := 0; ; i++ {
		var prefix [9]byte
		if _, err := io.ReadFull(r, prefix[:]); err != nil {
			return
		}
		h, n := binary.LittleEndian.Uint32(prefix[1:5]), binary.LittleEndian.Uint32(prefix[5:9])
		// After the two frames of the handshake (hello, ready) each frame
		// ends in a CRC-32C: the hold is for a cluster without a key,
		// whose frames may be moved without failing their check.
		trailer := 0
		if i >= 2 {
			trailer = crcTrailer
		}
		frame := make([]byte, 9+int(h)+int(n)+trailer)
		copy(frame, prefix[:])
		if _, err := io.ReadFull(r, frame[9:]); err != nil {
			return
		}
		if prefix[0] == deltasFrame && !holding {
			holding = true
			p.mu.Lock()
			p.mu.held, p.mu.heldIDs = time.Now(), msgpackArrayLen(frame[9:9+h])
			p.mu.Unlock()
			p.wg.Go(func() {
				select {
				case <-time.After(p.opts.hold):
				case <-p.quit:
					return
				}
				p.mu.Lock()
				p.mu.released = time.Now()
				p.mu.Unlock()
				put(frame)
			})
			continue
		}
		p.mu.Lock()
		if holding && p.mu.released.IsZero() && prefix[0] == deltasFrame {
			p.mu.framesWhileHeld++
		}
		p.mu.Unlock()
		if put(frame) != nil {
			return
		}
	}
}

// flip forwards src to dst frame by frame: the protocol string, the two
// frames of the handshake, then sealed frames, of which it flips one bit
// of the first payload and says so in flipped; it forwards the rest
// unchanged.
func (p *proxy) flip(dst, src net.Conn, name string) {
	defer dst.(*net.TCPConn).CloseWrite()
	r := bufio.NewReader(src)
	version := make([]byte, protocolBytes)
	if _, err := io.ReadFull(r, version); err != nil {
		return
	}
	if _, err := dst.Write(version); err != nil {
		return
	}
	for i, done := 0, false; ; i++ {
		var prefix [9]byte
		if _, err := io.ReadFull(r, prefix[:]); err != nil {
			return
		}
		h, n := binary.LittleEndian.Uint32(prefix[1:5]), binary.LittleEndian.Uint32(prefix[5:9])
		trailer := 0
		if i >= 2 {
			trailer = p.opts.flipTrailer
		}
		frame := make([]byte, 9+int(h)+int(n)+trailer)
		copy(frame, prefix[:])
		if _, err := io.ReadFull(r, frame[9:]); err != nil {
			return
		}
		if i >= 2 && n > 0 && !done {
			done = true
			frame[9+int(h)+int(n)/2] ^= 0x10
			p.mu.Lock()
			p.mu.flipped = append(p.mu.flipped, name)
			p.mu.Unlock()
		}
		if _, err := dst.Write(frame); err != nil {
			return
		}
	}
}

// flips returns the frames flip has changed, in order.
func (p *proxy) flips() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.mu.flipped)
}

// msgpackArrayLen returns the length of the msgpack array that b starts
// with (a deltas frame's header is the array of its batch ids), or -1.
func msgpackArrayLen(b []byte) int {
	switch {
	case len(b) >= 1 && b[0]&0xf0 == 0x90:
		return int(b[0] & 0x0f)
	case len(b) >= 3 && b[0] == 0xdc:
		return int(binary.BigEndian.Uint16(b[1:3]))
	case len(b) >= 5 && b[0] == 0xdd:
		return int(binary.BigEndian.Uint32(b[1:5]))
	}
	return -1
}

// accepted returns the number of connections the proxy has taken.
func (p *proxy) accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.accepted
}

// cutTime returns when the first connection was cut (zero before).
func (p *proxy) cutTime() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.cut
}

// holding reports the withheld frame of deltas: when it was taken out
// and put back (zero until then), its deltas, and the frames of deltas
// forwarded in between.
func (p *proxy) holding() (held, released time.Time, ids, flowed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.held, p.mu.released, p.mu.heldIDs, p.mu.framesWhileHeld
}

// sockQueues returns the send and receive queues, in bytes, of the
// connected IPv4 TCP socket whose local port is port (established, or
// closing after a shutdown of its write side), from /proc/net/tcp: bytes
// written and not yet taken by the peer, and bytes received and not yet
// read.
func sockQueues(port int) (tx, rx int, err error) {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0, 0, err
	}
	suffix := fmt.Sprintf(":%04X", port)
	for _, l := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) < 5 || !strings.HasSuffix(f[1], suffix) || f[3] == "0A" { // 0A: listening
			continue
		}
		var t, r uint64
		if _, err := fmt.Sscanf(f[4], "%x:%x", &t, &r); err != nil {
			return 0, 0, fmt.Errorf("/proc/net/tcp: %q: %v", f[4], err)
		}
		return int(t), int(r), nil
	}
	return 0, 0, fmt.Errorf("/proc/net/tcp: no connected socket on port %d", port)
}
