package ingest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"sketchcc/stream"
)

// Live is a stream.Source fed while it is read: by standard input, a pipe
// (Add), or producers connecting over TCP (Serve), each sending a stream
// in the binary format (a packed one too when its header gives the count)
// whose header's Updates may be stream.UnknownUpdates. Each producer's
// records are applied in its order; producers interleave by chunks of
// records as they arrive. A producer faster than ingestion is slowed by
// its transport (a bounded queue between the producers and Read: a full
// one stops the producer's reads, so TCP's window closes); no update is
// dropped.
//
// Read returns io.EOF at a barrier: when Wake was called since the last
// one, when Stop was called, or when the stream has ended (Ended): every
// producer expected has connected and closed. Read must be called from one
// goroutine at a time; the other methods are safe for concurrent use.
type Live struct {
	cfg    LiveConfig
	chunks chan *liveChunk
	wake   chan struct{}
	stop   chan struct{}
	first  liveFirst
	mu     sync.Mutex
	prods  []*producer          // every producer so far, in order of arrival
	inputs map[io.Closer]string // every input still open, closed by Stop
	wg     sync.WaitGroup
	read   atomic.Uint64 // updates Read returned
	state  liveState     // Read's goroutine only
}

// LiveConfig configures a Live source.
type LiveConfig struct {
	// Producers is the number of producers whose close ends the stream:
	// once that many have connected and all have closed, Read returns
	// io.EOF and Ended reports true. Zero means the stream runs until
	// Stop.
	Producers int
	// Token, when not empty, must open every TCP producer's connection, as
	// the line "AUTH <token>\n" before the stream's header.
	Token string
	// MaxProducers bounds the inputs open at once (each holds about
	// 260 KiB of buffers); a TCP producer past it is closed at once, with
	// an error to OnError. Zero means DefaultMaxProducers.
	MaxProducers int
	// HeaderTimeout bounds the wait for a TCP producer's token and header.
	// Zero means 10 s.
	HeaderTimeout time.Duration
	// OnError, when set, is called (on the producer's goroutine) with a
	// TCP producer's error: a bad header or token, a bad record, a
	// truncated record at its close; the producer's records before it stay
	// applied and the stream goes on.
	OnError func(name string, err error)
}

// liveFirst is what the first producer's header sets.
type liveFirst struct {
	header   chan struct{} // closed when the first header fixed vertices
	failed   chan error    // a fatal producer's error before any header
	vertices atomic.Uint32
}

// liveState is what Read keeps between calls.
type liveState struct {
	cur    *liveChunk
	off    int
	closed int // producers whose end Read has passed
	ended  atomic.Bool
	err    error // a fatal producer's error, returned from then on
}

// ProducerCount is what Live applied of one producer.
type ProducerCount struct {
	// ID numbers the producers from 1 in order of arrival.
	ID int `json:"id"`
	// Name is "stdin", or a TCP producer's remote address.
	Name string `json:"name"`
	// Applied is the number of the producer's records Read has returned:
	// exactly its first Applied records.
	Applied uint64 `json:"applied"`
	// Closed is true once Read has passed the producer's end.
	Closed bool `json:"closed"`
	// Err is the error that ended the producer, if any.
	Err string `json:"error,omitempty"`
}

type producer struct {
	id      int
	name    string
	fatal   bool // its error ends the stream (standard input)
	applied atomic.Uint64
	closed  atomic.Bool
	err     atomic.Pointer[string]
	free    chan *liveChunk
}

// liveChunk is a run of one producer's records; end marks its close.
type liveChunk struct {
	p   *producer
	ups []stream.Update
	end bool
	err error
}

// DefaultMaxProducers is LiveConfig.MaxProducers' default.
const DefaultMaxProducers = 64

// liveChunkUpdates is the number of updates a chunk holds at most, and
// liveChunks the chunks each producer may have queued or in reading.
const (
	liveChunkUpdates = 4 << 10
	liveChunks       = 4
)

// NewLive returns a Live source with no producer yet.
func NewLive(cfg LiveConfig) *Live {
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = 10 * time.Second
	}
	if cfg.MaxProducers <= 0 {
		cfg.MaxProducers = DefaultMaxProducers
	}
	return &Live{cfg: cfg, chunks: make(chan *liveChunk, 16), wake: make(chan struct{}, 1),
		stop: make(chan struct{}), first: liveFirst{header: make(chan struct{}), failed: make(chan error, 1)},
		inputs: map[io.Closer]string{}}
}

// Add reads a producer from r (standard input), whose header has not been
// read yet, on a goroutine of its own; its bad header or record ends the
// whole stream (Read and WaitHeader return the error), as a file's would.
// Stop closes r.
func (l *Live) Add(name string, r io.ReadCloser) {
	if l.track(r, name) {
		l.wg.Go(func() { l.produce(name, r, nil, true) })
	}
}

// track adds c to the inputs Stop closes, unless the stream has stopped
// or MaxProducers are open (it then closes c and returns false).
func (l *Live) track(c io.Closer, name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.stop:
		c.Close()
		return false
	default:
	}
	if len(l.inputs) >= l.cfg.MaxProducers {
		c.Close()
		if l.cfg.OnError != nil {
			l.cfg.OnError(name, fmt.Errorf("ingest: live producer refused: %d producers open already", len(l.inputs)))
		}
		return false
	}
	l.inputs[c] = name
	return true
}

// Serve accepts TCP producers on ln until Stop, each on a goroutine of its
// own. Stop closes ln.
func (l *Live) Serve(ln net.Listener) {
	l.wg.Go(func() {
		context.AfterFunc(stopCtx(l.stop), func() { ln.Close() })
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if name := c.RemoteAddr().String(); l.track(c, name) {
				l.wg.Go(func() { l.produce(name, c, c, false) })
			}
		}
	})
}

// stopCtx returns a context done when stop is closed.
func stopCtx(stop <-chan struct{}) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-stop; cancel() }()
	return ctx
}

// WaitHeader waits until a producer's header has fixed the vertex count
// (the first header read), and returns the live stream's header: that
// count, and stream.UnknownUpdates. It returns ctx's error if ctx ends
// first, or the stream's error when the first producer failed.
func (l *Live) WaitHeader(ctx context.Context) (stream.Header, error) {
	select {
	case <-l.first.header:
		return l.Header(), nil
	case err := <-l.first.failed:
		return stream.Header{}, err
	case <-ctx.Done():
		return stream.Header{}, fmt.Errorf("ingest: waiting for a live producer's header: %w", ctx.Err())
	}
}

// Header returns the live stream's header: the vertex count of the first
// producer's header (0 before it), and stream.UnknownUpdates.
func (l *Live) Header() stream.Header {
	return stream.Header{Vertices: l.first.vertices.Load(), Updates: stream.UnknownUpdates}
}

// Wake makes the next Read return io.EOF, a barrier, even while no
// producer sends.
func (l *Live) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Stop ends the stream: Read returns io.EOF from then on, the listener
// and every producer's connection close. Records queued but not read are
// not applied (Counts says exactly what was). Stop is idempotent.
func (l *Live) Stop() {
	l.mu.Lock()
	select {
	case <-l.stop:
	default:
		close(l.stop)
		for c := range l.inputs {
			c.Close()
		}
	}
	l.mu.Unlock()
}

// Close stops the stream and waits for its goroutines.
func (l *Live) Close() {
	l.Stop()
	l.wg.Wait()
}

// Updates returns the number of updates Read has returned so far.
func (l *Live) Updates() uint64 { return l.read.Load() }

// Ended reports whether Read has passed the end of every expected
// producer (LiveConfig.Producers).
func (l *Live) Ended() bool { return l.state.ended.Load() }

// Counts returns what Read has applied of each producer so far, in order
// of arrival. Called on Read's goroutine between two Reads (at a barrier),
// the counts are exact: the stream read so far is exactly each producer's
// first Applied records.
func (l *Live) Counts() []ProducerCount {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ProducerCount, len(l.prods))
	for i, p := range l.prods {
		out[i] = ProducerCount{ID: p.id, Name: p.name, Applied: p.applied.Load(), Closed: p.closed.Load()}
		if e := p.err.Load(); e != nil {
			out[i].Err = *e
		}
	}
	return out
}

// Read copies the next updates into dst. It returns (0, io.EOF) at a
// barrier (Wake, Stop, or the end of the stream) and a fatal producer's
// error from then on; it blocks while no producer has records.
func (l *Live) Read(dst []stream.Update) (int, error) {
	s := &l.state
	if s.err != nil {
		return 0, s.err
	}
	select {
	case <-l.wake:
		return 0, io.EOF
	case <-l.stop:
		return 0, io.EOF
	default:
	}
	for s.cur == nil {
		if s.ended.Load() {
			return 0, io.EOF
		}
		select {
		case c := <-l.chunks:
			if c.end {
				if err := l.passEnd(c); err != nil {
					return 0, err
				}
				continue
			}
			s.cur, s.off = c, 0
		case <-l.wake:
			return 0, io.EOF
		case <-l.stop:
			return 0, io.EOF
		}
	}
	n := copy(dst, s.cur.ups[s.off:])
	s.off += n
	s.cur.p.applied.Add(uint64(n))
	l.read.Add(uint64(n))
	if s.off == len(s.cur.ups) {
		s.cur.p.free <- s.cur
		s.cur = nil
	}
	return n, nil
}

// passEnd records a producer's end, which Read has reached.
func (l *Live) passEnd(c *liveChunk) error {
	s := &l.state
	c.p.closed.Store(true)
	s.closed++
	if c.err != nil && c.p.fatal {
		s.err = c.err
		return c.err
	}
	l.mu.Lock()
	arrived := len(l.prods)
	l.mu.Unlock()
	if l.cfg.Producers > 0 && s.closed >= l.cfg.Producers && arrived == s.closed {
		s.ended.Store(true)
	}
	return nil
}

// produce reads one producer's stream from r (tracked) and queues its
// records, then its end; conn is r when it is a TCP producer. It closes r
// at the end.
func (l *Live) produce(name string, r io.ReadCloser, conn net.Conn, fatal bool) {
	p := &producer{name: name, fatal: fatal, free: make(chan *liveChunk, liveChunks)}
	defer func() {
		l.mu.Lock()
		delete(l.inputs, r)
		l.mu.Unlock()
		r.Close()
	}()
	for range liveChunks {
		p.free <- &liveChunk{p: p, ups: make([]stream.Update, 0, liveChunkUpdates)}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	src, err := l.open(br, conn)
	if err == nil {
		if !l.register(p) {
			return
		}
		err = l.pump(p, src)
	} else if fatal {
		l.register(p)
		select {
		case l.first.failed <- err:
		default:
		}
	}
	if err != nil {
		p.err.Store(new(err.Error()))
		if !fatal && l.cfg.OnError != nil {
			l.cfg.OnError(name, err)
		}
	}
	if p.id == 0 { // refused before it counted
		return
	}
	select {
	case l.chunks <- &liveChunk{p: p, end: true, err: err}:
	case <-l.stop:
	}
}

// register numbers p and adds it to the producers, unless the stream has
// stopped.
func (l *Live) register(p *producer) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.stop:
		return false
	default:
	}
	l.prods = append(l.prods, p)
	p.id = len(l.prods)
	return true
}

// open checks a producer's token (for a TCP one) and header, and returns
// the reader of its records. The first header fixes the vertex count;
// a later one must give the same.
func (l *Live) open(br *bufio.Reader, conn net.Conn) (stream.Source, error) {
	if conn != nil {
		conn.SetReadDeadline(time.Now().Add(l.cfg.HeaderTimeout))
		defer conn.SetReadDeadline(time.Time{})
		if l.cfg.Token != "" {
			if err := checkToken(br, l.cfg.Token); err != nil {
				return nil, err
			}
		}
	}
	hb, err := br.Peek(stream.HeaderBytes)
	if err != nil {
		return nil, fmt.Errorf("ingest: live producer: %d of %d header bytes: %w", len(hb), stream.HeaderBytes, err)
	}
	h := stream.DecodeHeader(hb)
	var src stream.Source
	if h.Updates == stream.UnknownUpdates && !stream.IsPacked(hb) {
		if h.Vertices < 2 {
			return nil, fmt.Errorf("ingest: live producer: header declares %d vertices, want at least 2", h.Vertices)
		}
		br.Discard(stream.HeaderBytes)
		src = &liveRecords{r: br, h: h}
	} else if src, err = stream.NewReader(br); err != nil {
		return nil, fmt.Errorf("ingest: live producer: %w", err)
	}
	h = src.Header()
	if l.first.vertices.CompareAndSwap(0, h.Vertices) {
		close(l.first.header)
	} else if v := l.first.vertices.Load(); v != h.Vertices {
		return nil, fmt.Errorf("ingest: live producer: header declares %d vertices, the stream has %d", h.Vertices, v)
	}
	return src, nil
}

// checkToken reads the line "AUTH <token>\n" (at most 1 KiB) and compares
// its token with want in constant time.
func checkToken(br *bufio.Reader, want string) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("ingest: live producer: no AUTH line: %w", err)
	}
	got, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("AUTH "))
	if !ok || subtle.ConstantTimeCompare(got, []byte(want)) != 1 {
		return errors.New("ingest: live producer: bad token")
	}
	return nil
}

// pump queues src's records in chunks until src ends, fails, or the
// stream stops.
func (l *Live) pump(p *producer, src stream.Source) error {
	for {
		var c *liveChunk
		select {
		case c = <-p.free:
		case <-l.stop:
			return nil
		}
		n, err := src.Read(c.ups[:liveChunkUpdates])
		if n > 0 {
			c.ups = c.ups[:n]
			select {
			case l.chunks <- c:
			case <-l.stop:
				return nil
			}
		} else {
			p.free <- c
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// liveRecords reads the binary records of a stream of unknown length: it
// returns the records as they arrive, without waiting for a full buffer,
// and io.EOF when r ends between two records.
type liveRecords struct {
	r    *bufio.Reader
	h    stream.Header
	next uint64
	err  error
}

func (lr *liveRecords) Header() stream.Header { return lr.h }

func (lr *liveRecords) Read(dst []stream.Update) (int, error) {
	if lr.err != nil {
		return 0, lr.err
	}
	// Wait for one record, then take what is buffered.
	if _, err := lr.r.Peek(stream.RecordBytes); err != nil {
		if err == io.EOF && lr.r.Buffered() == 0 {
			lr.err = io.EOF
		} else if err == io.EOF || err == io.ErrUnexpectedEOF {
			lr.err = &stream.FormatError{Index: int64(lr.next), Offset: stream.RecordOffset(lr.next),
				Err: io.ErrUnexpectedEOF, Detail: fmt.Sprintf("%d bytes of a record at the end", lr.r.Buffered())}
		} else {
			lr.err = fmt.Errorf("ingest: live producer: reading update %d: %w", lr.next, err)
		}
		return 0, lr.err
	}
	k := min(len(dst), lr.r.Buffered()/stream.RecordBytes)
	b, _ := lr.r.Peek(k * stream.RecordBytes)
	for i := range k {
		rec := b[i*stream.RecordBytes : (i+1)*stream.RecordBytes]
		s, d, ok := stream.DecodeRecord(rec, lr.h.Vertices)
		if !ok {
			lr.err = badLiveRecord(lr.next+uint64(i), rec, s, d, lr.h.Vertices)
			lr.r.Discard(i * stream.RecordBytes)
			lr.next += uint64(i)
			if i == 0 {
				return 0, lr.err
			}
			return i, nil
		}
		dst[i] = stream.Update{Type: stream.UpdateType(rec[0]), Edge: stream.Edge{Src: s, Dst: d}}
	}
	lr.r.Discard(k * stream.RecordBytes)
	lr.next += uint64(k)
	return k, nil
}

// badLiveRecord returns the *stream.FormatError of record i, rec, which
// failed stream.DecodeRecord's checks.
func badLiveRecord(i uint64, rec []byte, s, d, vertices uint32) error {
	e := &stream.FormatError{Index: int64(i), Offset: stream.RecordOffset(i)}
	switch {
	case rec[0] > 1:
		e.Err, e.Detail = stream.ErrBadUpdateType, fmt.Sprintf("type byte %d", rec[0])
	case s >= vertices || d >= vertices:
		e.Err, e.Detail = stream.ErrVertexRange, fmt.Sprintf("edge (%d,%d), vertices %d", s, d, vertices)
	default:
		e.Err, e.Detail = stream.ErrSelfLoop, fmt.Sprintf("edge (%d,%d)", s, d)
	}
	return e
}
