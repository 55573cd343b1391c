package service

import (
	"context"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"testing"
	"time"

	"sketchcc/cc"
	"sketchcc/client"
	"sketchcc/dsu"
	"sketchcc/ingest"
	"sketchcc/stream"
)

// producerStream is one producer's records: a well-formed stream with
// deletions over the edges (u, v) with (u+v) % parts == part, so that the
// producers' edge sets are disjoint and any interleaving of their records
// is well formed, and the graph after a prefix of each is the XOR of those
// prefixes.
func producerStream(vertices uint32, n, part, parts int, seed uint64) []stream.Update {
	rng := rand.New(rand.NewPCG(seed, uint64(part)))
	present := map[stream.Edge]bool{}
	var live []stream.Edge
	out := make([]stream.Update, 0, n)
	for len(out) < n {
		if len(live) > 0 && rng.IntN(3) == 0 { // delete a present edge
			i := rng.IntN(len(live))
			e := live[i]
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
			delete(present, e)
			out = append(out, stream.Update{Type: stream.Delete, Edge: e})
			continue
		}
		u, v := rng.Uint32N(vertices), rng.Uint32N(vertices)
		if u == v || int(u+v)%parts != part {
			continue
		}
		e := stream.Edge{Src: min(u, v), Dst: max(u, v)}
		if present[e] {
			continue
		}
		present[e] = true
		live = append(live, e)
		out = append(out, stream.Update{Type: stream.Insert, Edge: e})
	}
	return out
}

func encodeRecords(ups []stream.Update) []byte {
	b := make([]byte, 0, len(ups)*stream.RecordBytes)
	for _, u := range ups {
		b = append(b, byte(u.Type))
		b = binary.LittleEndian.AppendUint32(b, u.Src)
		b = binary.LittleEndian.AppendUint32(b, u.Dst)
	}
	return b
}

// truth returns the component labels (numbered by each component's
// smallest vertex) of the graph made by the first applied[i] records of
// each producer i.
func truth(vertices uint32, streams [][]stream.Update, applied []uint64) []uint32 {
	edges := map[stream.Edge]bool{}
	for i, s := range streams {
		for _, u := range s[:applied[i]] {
			e := stream.Edge{Src: min(u.Src, u.Dst), Dst: max(u.Src, u.Dst)}
			if edges[e] {
				delete(edges, e)
			} else {
				edges[e] = true
			}
		}
	}
	d := dsu.New(vertices)
	for e := range edges {
		d.Union(e.Src, e.Dst)
	}
	return d.Labels()
}

// liveRig is a Service over a Live source fed by standard input (a pipe)
// and two TCP producers, each sending its stream in steps the test
// releases, with the API on loopback.
type liveRig struct {
	vertices uint32
	streams  [][]stream.Update
	names    []string        // producer i's name as the service reports it
	step     []chan int      // records producer i sends next
	closed   []chan struct{} // closed when producer i has closed
	api      *API
	cl       *client.Client
	done     chan struct{}
	final    *Answer
	runErr   error
}

func startRig(t *testing.T, vertices uint32, streams [][]stream.Update, cfg APIConfig, timing ...Timing) *liveRig {
	t.Helper()
	r := &liveRig{vertices: vertices, streams: streams, done: make(chan struct{})}
	lv := ingest.NewLive(ingest.LiveConfig{Producers: len(streams)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lv.Serve(ln)
	hdr := stream.AppendHeader(nil, stream.Header{Vertices: vertices, Updates: stream.UnknownUpdates})
	for i := range streams {
		var w io.WriteCloser
		if i == 0 {
			pr, pw := io.Pipe()
			lv.Add("stdin", pr)
			w = pw
			r.names = append(r.names, "stdin")
		} else {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			w = c
			r.names = append(r.names, c.LocalAddr().String())
		}
		step, closed := make(chan int), make(chan struct{})
		r.step, r.closed = append(r.step, step), append(r.closed, closed)
		go feed(w, hdr, encodeRecords(streams[i]), step, closed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	if _, err := lv.WaitHeader(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := ingest.New(ingest.Config{Vertices: vertices, Workers: 2, Readers: 1})
	if err != nil {
		t.Fatal(err)
	}
	room := cc.New(e, cc.Config{Workers: 2})
	svc := New(room, lv, append(timing, Timing{})[0])
	if r.api, err = Serve("127.0.0.1:0", svc, cfg); err != nil {
		t.Fatal(err)
	}
	r.cl = client.New(r.api.Addr(), cfg.Token, nil)
	go func() {
		defer close(r.done)
		r.final, _, r.runErr = svc.Run(ctx)
	}()
	t.Cleanup(func() {
		for _, s := range r.step {
			close(s)
		}
		<-r.done
		r.api.Close()
		lv.Close()
		e.Close()
	})
	return r
}

// feed writes the header, then records in the steps it is told (a
// negative step: the rest), and closes w after the last.
func feed(w io.WriteCloser, hdr, recs []byte, step <-chan int, closed chan<- struct{}) {
	defer close(closed)
	defer w.Close()
	if _, err := w.Write(hdr); err != nil {
		return
	}
	for n := range step {
		if n < 0 || n*stream.RecordBytes > len(recs) {
			n = len(recs) / stream.RecordBytes
		}
		if _, err := w.Write(recs[:n*stream.RecordBytes]); err != nil {
			return
		}
		if recs = recs[n*stream.RecordBytes:]; len(recs) == 0 {
			return
		}
	}
}

// applied returns the answer's count of each of the rig's producers, in
// the rig's order, checking that it names each at most once.
func (r *liveRig) applied(t *testing.T, ps []client.Producer) []uint64 {
	t.Helper()
	out := make([]uint64, len(r.names))
	for _, p := range ps {
		i := slices.Index(r.names, p.Name)
		if i < 0 {
			t.Fatalf("answer names producer %q, not one of %q", p.Name, r.names)
		}
		if p.Applied > uint64(len(r.streams[i])) {
			t.Fatalf("producer %s: %d applied, it sent %d", p.Name, p.Applied, len(r.streams[i]))
		}
		out[i] = p.Applied
	}
	return out
}

// expect returns what the answer with head h counted of each producer,
// and union-find's labels of the graph those records make, after checking
// that the counts add up to the answer's position.
func (r *liveRig) expect(t *testing.T, h client.Head) ([]uint64, []uint32) {
	t.Helper()
	applied := r.applied(t, h.Producers)
	var sum uint64
	for _, a := range applied {
		sum += a
	}
	if sum != h.Position {
		t.Fatalf("answer at position %d, its producers' counts %v add up to %d", h.Position, applied, sum)
	}
	return applied, truth(r.vertices, r.streams, applied)
}

// startThree starts a rig of three producers of n records each (seed
// gives them) and returns it with a random source and a context of a
// minute.
func startThree(t *testing.T, vertices uint32, n int, seed uint64) (*liveRig, *rand.Rand, context.Context) {
	var streams [][]stream.Update
	for i := range 3 {
		streams = append(streams, producerStream(vertices, n, i, 3, seed))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return startRig(t, vertices, streams, APIConfig{}), rand.New(rand.NewPCG(seed, 1)), ctx
}

// askPairs asks n random pairs with ask and checks every answer against
// union-find over the prefix the answer names; it returns the answer's
// position and n.
func (r *liveRig) askPairs(t *testing.T, rng *rand.Rand, n int, ask func([][2]uint32) (*client.Connected, error)) (uint64, int) {
	t.Helper()
	batch := make([][2]uint32, n)
	for k := range batch {
		batch[k] = [2]uint32{rng.Uint32N(r.vertices), rng.Uint32N(r.vertices)}
	}
	ans, err := ask(batch)
	if err != nil {
		t.Fatal(err)
	}
	applied, want := r.expect(t, ans.Head)
	for k, p := range batch {
		if ans.Connected[k] != (want[p[0]] == want[p[1]]) {
			t.Fatalf("connected(%d,%d) at %v = %v, union-find says otherwise", p[0], p[1], applied, ans.Connected[k])
		}
	}
	return ans.Position, n
}

// TestLiveExact feeds a stream with deletions from standard input and two
// TCP producers, each in steps of random size, while a client asks 200
// components queries (with labels) and 2,000 connected pairs at random
// moments between the steps; every answer must equal union-find over
// exactly the records its producer counts name.
func TestLiveExact(t *testing.T) {
	const vertices = 200
	r, rng, ctx := startThree(t, vertices, 6000, 26)
	streams := r.streams
	positions := map[uint64]bool{}
	comps, pairs := 0, 0
	for comps < 200 || pairs < 2000 {
		// Release a random step of a random producer, without waiting for
		// it to be read: the answer lands wherever ingestion is.
		i := rng.IntN(len(r.step))
		select {
		case r.step[i] <- 1 + rng.IntN(60):
		case <-r.closed[i]:
		}
		if comps < 200 && (pairs >= 2000 || rng.IntN(2) == 0) {
			ans, err := r.cl.Components(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			applied, want := r.expect(t, ans.Head)
			if !slices.Equal(ans.Labels, want) {
				t.Fatalf("components at %v: labels differ from union-find's (%d components, want %d)",
					applied, ans.Components, slices.Max(want)+1)
			}
			positions[ans.Position] = true
			comps++
			continue
		}
		pos, n := r.askPairs(t, rng, 1+rng.IntN(20), func(batch [][2]uint32) (*client.Connected, error) { return r.cl.Connected(ctx, batch) })
		positions[pos] = true
		pairs += n
	}
	if len(positions) < 20 {
		t.Errorf("answers at %d distinct positions only: the queries did not land mid-stream", len(positions))
	}
	for i := range r.step {
		select {
		case r.step[i] <- -1:
		case <-r.closed[i]:
		}
		<-r.closed[i]
	}
	<-r.done
	if r.runErr != nil {
		t.Fatal(r.runErr)
	}
	full := []uint64{6000, 6000, 6000}
	if r.final.Position != 18000 {
		t.Fatalf("final answer at %d, want 18000", r.final.Position)
	}
	if want := truth(vertices, streams, full); !slices.Equal(r.final.Result.Labels, want) {
		t.Fatal("final labels differ from union-find's")
	}
	t.Logf("%d components queries and %d pairs answered at %d distinct positions", comps, pairs, len(positions))
}

// TestQueryGap: with a query gap, questions asked back to back each wait
// for the gap after the last query, and their answers stay exact.
func TestQueryGap(t *testing.T) {
	const vertices = 100
	streams := [][]stream.Update{producerStream(vertices, 3000, 0, 1, 11)}
	r := startRig(t, vertices, streams, APIConfig{}, Timing{QueryGap: 20 * time.Millisecond})
	t0 := time.Now()
	for range 10 {
		r.step[0] <- 100
		ans, err := r.cl.Components(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		if _, want := r.expect(t, ans.Head); !slices.Equal(ans.Labels, want) {
			t.Fatalf("answer at %d: labels differ from union-find's", ans.Position)
		}
	}
	if d := time.Since(t0); d < 9*20*time.Millisecond {
		t.Fatalf("10 questions in %v: the 20 ms gap between queries was not kept", d)
	}
	r.step[0] <- -1
}
