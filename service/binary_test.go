package service

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"sketchcc/cc"
	"sketchcc/client"
	"sketchcc/ingest"
	"sketchcc/stream"
)

// nameProducers fills in the producers' names of a binary answer (which carries
// their ids only) from the service's status.
func (r *liveRig) nameProducers(t *testing.T, ps []client.Producer) {
	t.Helper()
	st, err := r.cl.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		for _, q := range st.Producers {
			if q.ID == p.ID {
				ps[i].Name = q.Name
			}
		}
		if ps[i].Name == "" {
			t.Fatalf("binary answer names producer %d, which the status does not know", p.ID)
		}
	}
}

// TestBinaryExact feeds a stream with deletions from standard input and
// two TCP producers in steps, and asks binary batches of random pairs at
// random moments: every answer must equal union-find over exactly the
// records its producer counts name.
func TestBinaryExact(t *testing.T) {
	r, rng, ctx := startThree(t, 150, 4000, 61)
	positions := map[uint64]bool{}
	pairs := 0
	for req := 0; req < 300; req++ {
		i := rng.IntN(len(r.step))
		select {
		case r.step[i] <- 1 + rng.IntN(80):
		case <-r.closed[i]:
		}
		// 1 to 70 pairs: bitsets of 1 to 9 bytes, most with a last byte part full.
		pos, n := r.askPairs(t, rng, 1+rng.IntN(70), func(batch [][2]uint32) (*client.Connected, error) {
			ans, err := r.cl.ConnectedBatch(ctx, batch)
			if err == nil {
				r.nameProducers(t, ans.Producers)
			}
			return ans, err
		})
		positions[pos] = true
		pairs += n
	}
	if len(positions) < 20 {
		t.Errorf("answers at %d distinct positions only: the queries did not land mid-stream", len(positions))
	}
	t.Logf("%d pairs answered at %d distinct positions", pairs, len(positions))
}

// pairBody encodes pairs as a binary request body.
func pairBody(pairs ...uint32) string {
	var b []byte
	for _, x := range pairs {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return string(b)
}

// TestBinaryBadBodies: each bad binary body gets its 4xx and an error
// naming the byte offset or the pair.
func TestBinaryBadBodies(t *testing.T) {
	const vertices = 100
	streams := [][]stream.Update{producerStream(vertices, 1000, 0, 1, 5)}
	r := startRig(t, vertices, streams, APIConfig{MaxBodyBytes: 4 << 10, MaxPairs: 50})
	r.step[0] <- -1
	for _, c := range []struct {
		name, body string
		status     int
		says       string
	}{
		{"empty", "", 400, "empty body"},
		{"odd", pairBody(1, 2, 3)[:11], 400, "11 bytes is not a whole number of 8-byte pairs: a partial pair of 3 bytes at byte offset 8"},
		{"out of range", pairBody(1, 2, 3, 4, 5, 100), 400, "pair 2, byte offset 20: vertex 100 out of range"},
		{"too many", strings.Repeat(pairBody(1, 2), 51), 400, "51 pairs, at most 50"},
		{"over the limit", strings.Repeat(pairBody(1, 2), 600), 413, "over 4096 bytes"},
	} {
		req, err := http.NewRequest("POST", "http://"+r.api.Addr()+"/v1/connected", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Error string }
		if resp.StatusCode != c.status || json.Unmarshal(b, &e) != nil || !strings.Contains(e.Error, c.says) {
			t.Errorf("%s: %d %s, want %d and an error saying %q", c.name, resp.StatusCode, b, c.status, c.says)
		}
	}
	_, err := r.cl.ConnectedBatch(context.Background(), [][2]uint32{{1, 2}, {3, 1000}})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.Message, "pair 1, byte offset 12") {
		t.Errorf("client error %v, want an *APIError 400 naming pair 1", err)
	}
}

// discardWriter is a ResponseWriter that keeps nothing, so that the
// benchmark counts the handler's allocations alone.
type discardWriter struct {
	h http.Header
	n int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }

// answeredAPI returns an API whose service has ended with an answer for
// a random graph of the given vertices, so that every request is
// answered at once from its labels.
func answeredAPI(b *testing.B, vertices uint32) *API {
	lv := ingest.NewLive(ingest.LiveConfig{Producers: 1})
	b.Cleanup(lv.Close)
	hdr := stream.AppendHeader(nil, stream.Header{Vertices: vertices, Updates: stream.UnknownUpdates})
	lv.Add("stdin", io.NopCloser(bytes.NewReader(hdr)))
	if _, err := lv.WaitHeader(context.Background()); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	labels := make([]uint32, vertices)
	for i := range labels {
		labels[i] = rng.Uint32N(vertices / 4)
	}
	svc := &Service{src: lv, closed: true}
	svc.last.Store(&Answer{Position: 12345, Producers: lv.Counts(), Result: &cc.Result{Labels: labels}})
	a := &API{cfg: APIConfig{}}
	a.cfg.ensureDefaults()
	a.svc.Store(svc)
	return a
}

// BenchmarkConnectedBatch measures the server's side of a 1,000-pair
// batch, taken from an answer already there: decoding the body, checking
// the pairs, looking up the labels and encoding the answer, for the JSON
// and the binary encodings; pairs/s and allocations per request.
func BenchmarkConnectedBatch(b *testing.B) {
	const vertices, pairs = 1 << 15, 1000
	a := answeredAPI(b, vertices)
	rng := rand.New(rand.NewPCG(3, 4))
	ps := make([][2]uint32, pairs)
	var bin []byte
	for i := range ps {
		ps[i] = [2]uint32{rng.Uint32N(vertices), rng.Uint32N(vertices)}
		bin = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(bin, ps[i][0]), ps[i][1])
	}
	js, _ := json.Marshal(pairsBody{Pairs: ps})
	for _, c := range []struct {
		name, contentType string
		body              []byte
	}{{"json", "application/json", js}, {"binary", binaryType, bin}} {
		b.Run(c.name, func(b *testing.B) {
			rd := bytes.NewReader(c.body)
			req, _ := http.NewRequest("POST", "/v1/connected", rd)
			req.Header.Set("Content-Type", c.contentType)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(c.body)
				req.Body = io.NopCloser(rd)
				req.ContentLength = int64(len(c.body))
				a.connectedBatch(w, req)
			}
			b.ReportMetric(float64(pairs*b.N)/b.Elapsed().Seconds(), "pairs/s")
			if w.n == 0 {
				b.Fatal("no answer written")
			}
		})
	}
}
