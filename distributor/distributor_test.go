package distributor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sketchcc/internal/testwait"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sketchcc/sketch"
)

// newTestPool returns a Pool on e whose cleanup closes it.
func newTestPool(t *testing.T, e *testPipe, cfg Config) *Pool {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t).With("side", "main")
	}
	p, err := NewPool(e.gut, e.st, cfg)
	requireNoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// poolOfTwo starts two workers, "a" and "b", of the given delta threads,
// and a Pool over e with cfg, and waits until both are connected.
func poolOfTwo(t *testing.T, e *testPipe, cfg Config, threadsA, threadsB int) (*Pool, *Worker, *Worker) {
	t.Helper()
	a, wa := startWorker(t, WorkerConfig{Threads: threadsA})
	b, wb := startWorker(t, WorkerConfig{Threads: threadsB})
	p := newTestPool(t, e, cfg)
	p.add("a", a)
	p.add("b", b)
	waitWorkers(t, p, 2)
	return p, wa, wb
}

func waitWorkers(t *testing.T, p *Pool, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	requireNoError(t, p.WaitWorkers(ctx, n))
}

func TestPoolOneWorker(t *testing.T) {
	checkNoLeaks(t)
	addr, w := startWorker(t, WorkerConfig{Threads: 2})
	e := newTestPipe(t, 300, 40)
	defer e.close()
	p := newTestPool(t, e, Config{LocalCutoff: 10})
	p.add("w1", addr)
	waitWorkers(t, p, 1)
	us := randomUpdates(1, 300, 20000)
	runStream(t, e, p, us, nil)
	requireNoError(t, p.Close())
	st := p.Stats()
	if st.RemoteBatches == 0 || len(st.Workers) != 1 || st.Workers[0].DeltasMerged != st.RemoteBatches {
		t.Errorf("stats %+v: want remote batches from w1", st)
	}
	if st.LocalCutoffBatches == 0 || st.LocalCutoffBatches+st.RemoteBatches != e.batches() {
		t.Errorf("stats %+v: local %d + remote %d batches, gutters emitted %d", st, st.LocalCutoffBatches, st.RemoteBatches, e.batches())
	}
	testwait.Until(t, 5*time.Second, 5*time.Millisecond, func() error {
		ws := w.Stats()
		if ws.Batches != st.Workers[0].Batches || ws.BytesReceived != st.Workers[0].BytesSent || ws.BytesSent != st.Workers[0].BytesReceived {
			return fmt.Errorf("worker counted %+v, main node %+v", ws, st.Workers[0])
		}
		return nil
	})
}

func TestPoolTwoWorkersShareWork(t *testing.T) {
	checkNoLeaks(t)
	e := newTestPipe(t, 500, 64)
	defer e.close()
	p, _, _ := poolOfTwo(t, e, Config{Credits: 4, LocalCutoff: -1}, 1, 1)
	runStream(t, e, p, randomUpdates(2, 500, 40000), nil)
	st := p.Stats()
	for _, w := range st.Workers {
		if w.DeltasMerged == 0 {
			t.Errorf("worker %s got no work: %+v", w.Name, st)
		}
	}
	if st.FallbackBatches != 0 || st.LocalCutoffBatches != 0 {
		t.Errorf("batches sketched locally with workers connected and no cutoff: %+v", st)
	}
}

// TestPoolNoWorkers: with no worker the fallback keeps the stream moving.
func TestPoolNoWorkers(t *testing.T) {
	checkNoLeaks(t)
	e := newTestPipe(t, 100, 16)
	defer e.close()
	p := newTestPool(t, e, Config{})
	runStream(t, e, p, randomUpdates(3, 100, 5000), nil)
	if st := p.Stats(); st.FallbackBatches+st.LocalCutoffBatches != e.batches() || st.FallbackBatches == 0 {
		t.Errorf("stats %+v, gutters emitted %d", st, e.batches())
	}
}

// joinOnCut returns a runStream hook that adds worker name at addr to p
// once cut is closed: the first update after a cutProxy's cut.
func joinOnCut(p *Pool, cut <-chan struct{}, name, addr string) func(int) {
	joined := false
	return func(int) {
		select {
		case <-cut:
			if !joined {
				p.add(name, addr)
				joined = true
			}
		default:
		}
	}
}

// cutProxy forwards one connection to target and cuts it, both ways,
// after `after` bytes from the main node: in the middle of a frame. The
// channel it returns is closed once the connection is cut (or the test
// ends first).
func cutProxy(t *testing.T, target string, after int64) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	requireNoError(t, err)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		conns  []net.Conn
		closed bool
	)
	keep := func(c net.Conn) bool {
		mu.Lock()
		defer mu.Unlock()
		conns = append(conns, c)
		return !closed
	}
	t.Cleanup(func() {
		// A run that ends before `after` bytes leaves CopyN waiting.
		ln.Close()
		mu.Lock()
		closed = true
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	cut := make(chan struct{})
	wg.Go(func() {
		defer close(cut)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if !keep(c) {
			return
		}
		w, err := net.Dial("tcp", target)
		if err != nil {
			return
		}
		defer w.Close()
		if !keep(w) {
			return
		}
		wg.Go(func() { io.Copy(c, w) })
		io.CopyN(w, c, after)
	})
	return ln.Addr().String(), cut
}

// TestPoolConnectionCutMidBatch cuts a worker's connection in the middle
// of a batches frame: every batch must still be applied exactly once. The
// second worker joins only once the cut has happened, so that the first
// surely receives `after` bytes (sharing the work, it could finish the
// stream on fewer).
func TestPoolConnectionCutMidBatch(t *testing.T) {
	checkNoLeaks(t)
	for _, after := range []int64{300, 5_000, 12_001} {
		t.Run(fmt.Sprint("after=", after), func(t *testing.T) {
			a, _ := startWorker(t, WorkerConfig{Threads: 1})
			b, _ := startWorker(t, WorkerConfig{Threads: 1})
			e := newTestPipe(t, 400, 50)
			defer e.close()
			p := newTestPool(t, e, Config{Credits: 16, LocalCutoff: -1})
			addr, cut := cutProxy(t, a, after)
			p.add("cut", addr)
			waitWorkers(t, p, 1)
			runStream(t, e, p, randomUpdates(uint64(after), 400, 30000), joinOnCut(p, cut, "b", b))
			requireNoError(t, p.Close())
			st := p.Stats()
			if st.Workers[0].BatchesResent == 0 || st.BatchesResent == 0 || st.Workers[0].Connected {
				t.Errorf("the cut worker's batches were not re-sent: %+v", st)
			}
			checkCounters(t, st)
			t.Logf("cut worker %+v", st.Workers[0])
		})
	}
}

// fakeWorker serves connections with a real handshake under key and then
// behave, one connection at a time.
func fakeWorker(t *testing.T, key []byte, behave func(fr *frameReader, fw *frameWriter, p sketch.Params)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	requireNoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fr, fw := newFrameReader(c, nil), newFrameWriter(c, nil)
			terms, err := workerHandshake(fr, fw, key, "fake", 1, DefaultMaxFrameBytes)
			p, maxBatch := terms.p, terms.maxBatch
			if err == nil {
				fr.maxHeader, fr.maxPayload = maxHeaderBytes, maxFrameBatches*maxBatchBytes(maxBatch)
				behave(fr, fw, p)
			}
			c.Close()
		}
	})
	return ln.Addr().String()
}

// answer reads one batches frame and returns its entries and deltas.
func answer(fr *frameReader, p sketch.Params) ([]uint64, []byte, error) {
	t, h, n, err := fr.next()
	if err != nil {
		return nil, nil, err
	}
	if t != batchesMsg {
		return nil, nil, fmt.Errorf("got %s", t)
	}
	var entries []batchEntry
	if err := fr.dec.decode(h, &entries, maxFrameBatches); err != nil {
		return nil, nil, err
	}
	payload, err := fr.payload(nil, n)
	if err != nil {
		return nil, nil, err
	}
	var out []byte
	var idList []uint64
	delta := make([]sketch.Bucket, p.BucketsPerVertex())
	dc := newDeltaCodec(p)
	for _, e := range entries {
		ids, err := decodeBatch(nil, payload[:e.Bytes], int(e.Updates), e.Vertex, p.Vertices())
		if err != nil {
			return nil, nil, err
		}
		payload = payload[e.Bytes:]
		p.Delta(delta, e.Vertex, ids)
		out = dc.append(out, e.Vertex, delta)
		idList = append(idList, e.ID)
	}
	return idList, out, nil
}

// answerTwice is a fake worker that answers every batch with its delta
// twice.
func answerTwice(fr *frameReader, fw *frameWriter, p sketch.Params) {
	for {
		ids, deltas, err := answer(fr, p)
		if err != nil {
			return
		}
		fw.write(deltasMsg, ids, deltas)
		fw.write(deltasMsg, ids, deltas)
	}
}

// TestPoolDropsDuplicateDeltas: a worker that answers every batch twice
// must not cancel its own deltas.
func TestPoolDropsDuplicateDeltas(t *testing.T) {
	checkNoLeaks(t)
	addr := fakeWorker(t, nil, answerTwice)
	e := newTestPipe(t, 200, 30)
	defer e.close()
	p := newTestPool(t, e, Config{LocalCutoff: -1})
	p.add("twice", addr)
	waitWorkers(t, p, 1)
	runStream(t, e, p, randomUpdates(5, 200, 10000), nil)
	// The flush ends with the first copy of the last deltas; the second
	// copies follow.
	testwait.Until(t, 5*time.Second, 5*time.Millisecond, func() error {
		if st := p.Stats(); st.DuplicateDeltas == 0 || st.DuplicateDeltas != st.RemoteBatches {
			return fmt.Errorf("want every second delta dropped: %+v", st)
		}
		return nil
	})
}

// TestPoolDropsMisbehavingWorker: workers that answer with garbage, an
// oversized frame or the wrong vertex are dropped with a protocol error,
// and their batches are sketched elsewhere.
func TestPoolDropsMisbehavingWorker(t *testing.T) {
	cases := map[string]func(fw *frameWriter, ids []uint64, deltas []byte){
		"garbage": func(fw *frameWriter, ids []uint64, deltas []byte) {
			fw.w.Write(bytes.Repeat([]byte{0xff}, 100))
		},
		"oversized": func(fw *frameWriter, ids []uint64, deltas []byte) {
			fw.w.Write(rawFrame(deltasMsg, 4, 1<<31, nil))
		},
		"short payload": func(fw *frameWriter, ids []uint64, deltas []byte) {
			fw.write(deltasMsg, ids, deltas[:len(deltas)-16])
		},
		"wrong vertex": func(fw *frameWriter, ids []uint64, deltas []byte) {
			deltas[0] ^= 1
			fw.write(deltasMsg, ids, deltas)
		},
	}
	for name, misbehave := range cases {
		t.Run(name, func(t *testing.T) {
			checkNoLeaks(t)
			addr := fakeWorker(t, nil, func(fr *frameReader, fw *frameWriter, p sketch.Params) {
				for i := 0; ; i++ {
					ids, deltas, err := answer(fr, p)
					if err != nil {
						return
					}
					if i < 3 {
						fw.write(deltasMsg, ids, deltas)
						continue
					}
					misbehave(fw, ids, deltas)
					io.Copy(io.Discard, fr.r)
					return
				}
			})
			good, _ := startWorker(t, WorkerConfig{Threads: 1})
			e := newTestPipe(t, 300, 30)
			defer e.close()
			p := newTestPool(t, e, Config{LocalCutoff: -1, Credits: 4})
			p.add("bad", addr)
			waitWorkers(t, p, 1)
			p.add("good", good)
			runStream(t, e, p, randomUpdates(6, 300, 20000), nil)
			st := p.Stats()
			bad := st.Workers[0]
			if bad.Connected || !strings.Contains(bad.LastError, "protocol error from bad") {
				t.Errorf("misbehaving worker not dropped with a protocol error: %+v", bad)
			}
			t.Logf("bad worker: %+v", bad)
		})
	}
}

// silentWorker starts a fake worker that completes the handshake, takes
// every frame and never answers; it returns its address.
func silentWorker(t *testing.T) string {
	return fakeWorker(t, nil, func(fr *frameReader, fw *frameWriter, p sketch.Params) {
		io.Copy(io.Discard, fr.r)
	})
}

// TestPoolSilentWorker: a worker that takes batches and never answers is
// dropped after AnswerTimeout and its batches are sketched elsewhere.
func TestPoolSilentWorker(t *testing.T) {
	checkNoLeaks(t)
	addr := silentWorker(t)
	e := newTestPipe(t, 100, 20)
	defer e.close()
	p := newTestPool(t, e, Config{LocalCutoff: -1, AnswerTimeout: 200 * time.Millisecond})
	p.add("silent", addr)
	waitWorkers(t, p, 1)
	runStream(t, e, p, randomUpdates(7, 100, 3000), nil)
	requireNoError(t, p.Close())
	st := p.Stats()
	if st.Workers[0].BatchesResent+st.Workers[0].BatchesLate == 0 || st.FallbackBatches == 0 {
		t.Errorf("the silent worker's batches were not sketched elsewhere: %+v", st)
	}
	checkCounters(t, st)
}

// TestPoolFlushDeadlineNamesWorker: a flush that runs out of time says
// which worker holds the missing batches.
func TestPoolFlushDeadlineNamesWorker(t *testing.T) {
	checkNoLeaks(t)
	addr := silentWorker(t)
	e := newTestPipe(t, 100, 20)
	defer e.close()
	// Credits for every batch: the worker takes them all, and the
	// gutters' flush does not wait for a spare buffer.
	p := newTestPool(t, e, Config{LocalCutoff: -1, Credits: 1000})
	p.add("slowpoke", addr)
	waitWorkers(t, p, 1)
	e.insert(randomUpdates(8, 100, 500))
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	err := e.flush(ctx, p)
	if err == nil || !strings.Contains(err.Error(), "slowpoke ("+addr+") holds") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Flush = %v, want an error naming slowpoke", err)
	}
	t.Log(err)
	p.remove("slowpoke", "test over")
	requireNoError(t, e.flush(t.Context(), p))
}

// TestPoolRefusesWrongKey: a worker with another cluster key is refused
// and gets no batch; the main node sketches them itself.
func TestPoolRefusesWrongKey(t *testing.T) {
	checkNoLeaks(t)
	addr, w := startWorker(t, WorkerConfig{Key: bytes.Repeat([]byte{9}, 16)})
	e := newTestPipe(t, 100, 20)
	defer e.close()
	p := newTestPool(t, e, Config{Key: bytes.Repeat([]byte{1}, 16)})
	p.add("intruder", addr)
	testwait.Until(t, 5*time.Second, 5*time.Millisecond, func() error {
		if st := p.Stats(); len(st.Workers) == 0 || st.Workers[0].Refused == 0 {
			return fmt.Errorf("not refused yet: %+v", st)
		}
		return nil
	})
	runStream(t, e, p, randomUpdates(9, 100, 2000), nil)
	st := p.Stats()
	if !strings.Contains(st.Workers[0].LastError, "authentication failed") || st.Workers[0].Batches != 0 {
		t.Errorf("stats %+v", st.Workers[0])
	}
	testwait.Until(t, 5*time.Second, 5*time.Millisecond, func() error {
		if ws := w.Stats(); ws.Refused != 1 || ws.Batches != 0 {
			return fmt.Errorf("worker stats %+v", ws)
		}
		return nil
	})
}

// TestWorkerDropsGarbage: a peer sending garbage to a worker's data port
// is dropped, and the worker goes on serving the main node.
func TestWorkerDropsGarbage(t *testing.T) {
	checkNoLeaks(t)
	addr, w := startWorker(t, WorkerConfig{})
	for _, junk := range [][]byte{
		bytes.Repeat([]byte{0}, 100),
		[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		append([]byte(protocolVersion), rawFrame(helloMsg, 1<<30, 0, nil)...),
	} {
		c, err := net.Dial("tcp", addr)
		requireNoError(t, err)
		c.Write(junk)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.Copy(io.Discard, c) // the worker closes the connection
		c.Close()
	}
	testwait.Until(t, 5*time.Second, 5*time.Millisecond, func() error {
		if st := w.Stats(); st.Refused != 3 {
			return fmt.Errorf("worker refused %d connections, want 3", st.Refused)
		}
		return nil
	})
	e := newTestPipe(t, 100, 20)
	defer e.close()
	p := newTestPool(t, e, Config{LocalCutoff: -1})
	p.add("w", addr)
	waitWorkers(t, p, 1)
	runStream(t, e, p, randomUpdates(10, 100, 3000), nil)
	if st := p.Stats(); st.RemoteBatches == 0 {
		t.Errorf("no batch went to the worker: %+v", st)
	}
}

// TestPoolWorkerClose: a worker closed mid-stream (as on SIGTERM)
// answers what it has read and the rest is sent elsewhere.
func TestPoolWorkerClose(t *testing.T) {
	checkNoLeaks(t)
	e := newTestPipe(t, 300, 30)
	defer e.close()
	p, wa, _ := poolOfTwo(t, e, Config{LocalCutoff: -1, Credits: 8}, 1, 1)
	runStream(t, e, p, randomUpdates(11, 300, 30000), func(i int) {
		if i == 10 {
			wa.Close()
		}
	})
	if st := p.Stats(); st.Workers[0].Connected {
		t.Errorf("closed worker still connected: %+v", st.Workers[0])
	}
}

// TestPoolNegotiatesFrameSize: a worker that reads frames of at most 64
// KiB gets none larger, though the main node would coalesce 1 MiB.
func TestPoolNegotiatesFrameSize(t *testing.T) {
	checkNoLeaks(t)
	addr, w := startWorker(t, WorkerConfig{Threads: 2, MaxFrameBytes: 64 << 10})
	e := newTestPipe(t, 100, 1000)
	defer e.close()
	p := newTestPool(t, e, Config{FrameBytes: 1 << 20, Credits: 128, LocalCutoff: -1})
	p.add("w1", addr)
	waitWorkers(t, p, 1)
	runStream(t, e, p, randomUpdates(7, 100, 200_000), nil)
	requireNoError(t, p.Close())
	st := p.Stats()
	if len(st.Workers) != 1 || st.Workers[0].Connections != 1 || st.BatchesResent != 0 || st.FallbackBatches != 0 {
		t.Errorf("stats %+v: want one connection that never dropped", st)
	}
	if ws := w.Stats(); ws.Refused != 0 || ws.Batches == 0 {
		t.Errorf("worker stats %+v", ws)
	}
}

// TestPoolFrameLimitUnmeetable: a worker that cannot read one batch is
// refused, and both sides say which flag to raise.
func TestPoolFrameLimitUnmeetable(t *testing.T) {
	checkNoLeaks(t)
	addr, w := startWorker(t, WorkerConfig{Threads: 1, MaxFrameBytes: 1024})
	e := newTestPipe(t, 100, 1000)
	defer e.close()
	p := newTestPool(t, e, Config{})
	p.add("small", addr)
	want := "the worker reads frames of at most 1024 bytes (its MaxFrameBytes), and a batch of 1000 updates needs 5001; " +
		"raise the worker's MaxFrameBytes to at least 5001"
	testwait.Until(t, 5*time.Second, 5*time.Millisecond, func() error {
		st := p.Stats()
		if len(st.Workers) != 1 || st.Workers[0].Refused != 1 || !strings.Contains(st.Workers[0].LastError, want) {
			return fmt.Errorf("main node: %+v", st.Workers)
		}
		if w.Stats().Refused != 1 {
			return fmt.Errorf("worker: %+v", w.Stats())
		}
		return nil
	})
	if p.workers() != 0 {
		t.Error("the worker was admitted")
	}
}

// holdingWorker answers every batch but the first, which it never
// answers; each deltas frame is written in pieces, pause apart.
func holdingWorker(t *testing.T, pause time.Duration) string {
	return fakeWorker(t, nil, func(fr *frameReader, fw *frameWriter, p sketch.Params) {
		held := false
		for {
			ids, out, err := answer(fr, p)
			if err != nil {
				return
			}
			if !held {
				held = true
				_, rest, err := newDeltaCodec(p).decode(make([]sketch.Bucket, p.BucketsPerVertex()), out)
				if err != nil {
					return
				}
				ids, out = ids[1:], rest
				if len(ids) == 0 {
					continue
				}
			}
			// The frame, sealed as the connection's next, is written
			// into b, then sent in pieces.
			var b bytes.Buffer
			conn := fw.w
			fw.w = &b
			fw.write(deltasMsg, ids, out)
			fw.w = conn
			for piece := range slices.Chunk(b.Bytes(), max(1, b.Len()/8)) {
				if _, err := conn.Write(piece); err != nil {
					return
				}
				time.Sleep(pause)
			}
		}
	})
}

// TestPoolLateBatch: a batch held past its deadline is sketched on the
// main node while the worker's other answers flow; the connection stays.
func TestPoolLateBatch(t *testing.T) {
	checkNoLeaks(t)
	addr := holdingWorker(t, 0)
	e := newTestPipe(t, 100, 20)
	defer e.close()
	p := newTestPool(t, e, Config{LocalCutoff: -1, AnswerTimeout: 300 * time.Millisecond})
	p.add("holder", addr)
	waitWorkers(t, p, 1)
	t0 := time.Now()
	runStream(t, e, p, randomUpdates(11, 100, 3000), nil)
	st := p.Stats()
	w := st.Workers[0]
	if w.BatchesLate != 1 || w.Connections != 1 || !w.Connected || w.BatchesResent != 0 {
		t.Errorf("want one late batch and the connection kept: %+v", w)
	}
	requireNoError(t, p.Close())
	checkCounters(t, p.Stats())
	t.Logf("stream and flush in %v; %+v", time.Since(t0), w)
}

// TestPoolSlowWorkerKept: a worker whose answers trickle in, each frame
// taking longer than AnswerTimeout (the old read deadline cut it), is not
// cut while its bytes flow.
func TestPoolSlowWorkerKept(t *testing.T) {
	checkNoLeaks(t)
	addr := holdingWorker(t, 100*time.Millisecond) // 8 pieces: 800 ms a frame
	e := newTestPipe(t, 100, 20)
	defer e.close()
	p := newTestPool(t, e, Config{LocalCutoff: -1, AnswerTimeout: 500 * time.Millisecond})
	p.add("slow", addr)
	waitWorkers(t, p, 1)
	runStream(t, e, p, randomUpdates(12, 100, 3000), nil)
	w := p.Stats().Workers[0]
	if w.Connections != 1 || !w.Connected || w.LastError != "" {
		t.Errorf("the slow worker was cut: %+v", w)
	}
}

// redialProxy forwards connections to target; it cuts the first one
// after `after` bytes from the main node.
func redialProxy(t *testing.T, target string, after int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	requireNoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			w, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				return
			}
			mu.Lock()
			conns = append(conns, c, w)
			mu.Unlock()
			wg.Go(func() { io.Copy(c, w); c.Close() })
			wg.Go(func() {
				if n == 0 {
					io.CopyN(w, c, after)
					c.Close()
				} else {
					io.Copy(w, c)
				}
				w.Close()
			})
		}
	})
	return ln.Addr().String()
}

// TestPoolRedialsAfterCut: a connection cut while its worker is still a
// member is dialled again, and the worker is used again.
func TestPoolRedialsAfterCut(t *testing.T) {
	checkNoLeaks(t)
	addr, w := startWorker(t, WorkerConfig{Threads: 1})
	e := newTestPipe(t, 200, 30)
	defer e.close()
	p := newTestPool(t, e, Config{LocalCutoff: -1, Credits: 8})
	p.add("w", redialProxy(t, addr, 20_000))
	waitWorkers(t, p, 1)
	var before uint64
	runStream(t, e, p, randomUpdates(13, 200, 40_000), func(i int) {
		if i == 40 { // past the cut: wait for the second connection
			testwait.Until(t, 5*time.Second, 5*time.Millisecond, func() error {
				if st := p.Stats().Workers[0]; st.Connections < 2 || !st.Connected {
					return fmt.Errorf("not dialled again: %+v", st)
				}
				return nil
			})
			before = w.Stats().Batches
		}
	})
	requireNoError(t, p.Close())
	all := p.Stats()
	st := all.Workers[0]
	if st.Connections < 2 || len(st.Conns) < 2 || st.BatchesResent == 0 || w.Stats().Batches == before {
		t.Errorf("want the cut connection dialled again: main node %+v, worker %+v", st, w.Stats())
	}
	checkCounters(t, all)
	t.Logf("%+v", st)
}

// TestPoolSameHostThreads: Config.SameHost follows the delta threads of
// connected workers on this machine as they join and leave.
func TestPoolSameHostThreads(t *testing.T) {
	checkNoLeaks(t)
	e := newTestPipe(t, 100, 16)
	defer e.close()
	var mu sync.Mutex
	var sums []int
	calls := func() []int {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(sums)
	}
	p, wa, _ := poolOfTwo(t, e, Config{SameHost: func(threads int) {
		mu.Lock()
		sums = append(sums, threads)
		mu.Unlock()
	}}, 1, 3)
	expect := func(want int) {
		t.Helper()
		testwait.Until(t, 5*time.Second, 5*time.Millisecond, func() error {
			if c := calls(); len(c) == 0 || c[len(c)-1] != want {
				return fmt.Errorf("same-host threads reported %v, want the last %d", c, want)
			}
			return nil
		})
	}
	expect(4)
	wa.Close()
	expect(3)
	requireNoError(t, p.Close())
	expect(0)
}

// addrConn is a net.Conn with given addresses, for sameHost.
type addrConn struct {
	net.Conn
	local, remote net.Addr
}

func (c addrConn) LocalAddr() net.Addr  { return c.local }
func (c addrConn) RemoteAddr() net.Addr { return c.remote }

// TestSameHost: loopback, or one address at both ends, is this machine;
// two addresses are two machines.
func TestSameHost(t *testing.T) {
	tcp := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 7000} }
	for _, c := range []struct {
		local, remote string
		want          bool
	}{
		{"127.0.0.1", "127.0.0.1", true},
		{"127.0.0.1", "127.0.0.2", true},
		{"::1", "::1", true},
		{"10.0.0.5", "10.0.0.5", true},
		{"10.0.0.5", "10.0.0.6", false},
		{"2001:db8::1", "2001:db8::2", false},
	} {
		if got := sameHost(addrConn{local: tcp(c.local), remote: tcp(c.remote)}); got != c.want {
			t.Errorf("sameHost(%s → %s) = %v, want %v", c.local, c.remote, got, c.want)
		}
	}
	if sameHost(addrConn{local: &net.UnixAddr{Name: "a"}, remote: &net.UnixAddr{Name: "b"}}) {
		t.Error("sameHost of a non-TCP connection = true, want false")
	}
}

// TestPoolAbandonRacingClose: a Close racing the Abandon of the context's
// watch (the watch has fired the abandoned signal but not yet told the
// workers) must still tell every worker "main node interrupted", not
// "main node done": the second Abandon waits for the workers to be told.
func TestPoolAbandonRacingClose(t *testing.T) {
	checkNoLeaks(t)
	addr, w := startWorker(t, WorkerConfig{Threads: 1})
	e := newTestPipe(t, 100, 16)
	defer e.close()
	p := newTestPool(t, e, Config{})
	p.add("w1", addr)
	waitWorkers(t, p, 1)
	p.abandoned.fire() // the watch's Abandon, stopped between its two steps
	p.Abandon()        // Cluster.Close's
	requireNoError(t, p.Close())
	select {
	case <-w.Stopped():
	case <-time.After(5 * time.Second):
		t.Fatal("the worker was never told to stop")
	}
	if got, want := w.StopReason(), "main node interrupted"; got != want {
		t.Errorf("worker told %q, want %q", got, want)
	}
}

// TestPoolOutOfCore: remote deltas merged into a store whose sketches live
// on disk (into its resident range in place, or spilled and XORed in when
// their range comes in) give the sketches of the updates applied
// directly: with two healthy workers, with a worker whose connection is
// cut in the middle of a frame (its batches re-sent to the other), and
// with a worker that answers every batch twice.
func TestPoolOutOfCore(t *testing.T) {
	checkNoLeaks(t)
	const vertices = 600
	swapped := func(t *testing.T, e *testPipe) {
		t.Helper()
		if ds, ok := e.st.OutOfCore(); !ok || ds.Swaps < 2 || ds.WrittenBytes == 0 {
			t.Errorf("disk stats %+v: want ranges swapped in during the stream", ds)
		}
	}
	t.Run("two-workers", func(t *testing.T) {
		e := newDiskTestPipe(t, vertices, 64)
		defer e.close()
		p, _, _ := poolOfTwo(t, e, Config{Credits: 8, LocalCutoff: -1}, 1, 1)
		runStream(t, e, p, randomUpdates(11, vertices, 60000), nil)
		requireNoError(t, p.Close())
		st := p.Stats()
		if len(st.Workers) != 2 || st.Workers[0].DeltasMerged == 0 || st.Workers[1].DeltasMerged == 0 ||
			st.RemoteBatches != e.batches() {
			t.Errorf("stats %+v: want every one of %d batches merged from both workers", st, e.batches())
		}
		checkCounters(t, st)
		swapped(t, e)
	})
	t.Run("cut-mid-frame", func(t *testing.T) {
		a, _ := startWorker(t, WorkerConfig{Threads: 1})
		b, _ := startWorker(t, WorkerConfig{Threads: 1})
		e := newDiskTestPipe(t, vertices, 64)
		defer e.close()
		p := newTestPool(t, e, Config{Credits: 16, LocalCutoff: -1})
		addr, cut := cutProxy(t, a, 7_001)
		p.add("cut", addr)
		waitWorkers(t, p, 1)
		runStream(t, e, p, randomUpdates(12, vertices, 60000), joinOnCut(p, cut, "b", b))
		requireNoError(t, p.Close())
		st := p.Stats()
		if st.Workers[0].BatchesResent == 0 || st.Workers[0].Connected {
			t.Errorf("the cut worker's batches were not re-sent: %+v", st)
		}
		checkCounters(t, st)
		swapped(t, e)
	})
	t.Run("duplicates", func(t *testing.T) {
		addr := fakeWorker(t, nil, answerTwice)
		e := newDiskTestPipe(t, vertices, 64)
		defer e.close()
		p := newTestPool(t, e, Config{LocalCutoff: -1})
		p.add("twice", addr)
		waitWorkers(t, p, 1)
		runStream(t, e, p, randomUpdates(13, vertices, 30000), nil)
		testwait.Until(t, 5*time.Second, 5*time.Millisecond, func() error {
			if st := p.Stats(); st.DuplicateDeltas == 0 || st.DuplicateDeltas != st.RemoteBatches {
				return fmt.Errorf("want every second delta dropped: %+v", st)
			}
			return nil
		})
		requireNoError(t, p.Close())
		// The sketches again, after the second copies: none was merged.
		e.checkTable(t, randomUpdates(13, vertices, 30000))
		swapped(t, e)
	})
}
