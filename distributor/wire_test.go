package distributor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"sketchcc/gutters"
	"sketchcc/sketch"
)

// batch is one vertex's neighbour ids, for the tests.
type batch struct {
	vertex    uint32
	neighbors []uint32
}

// encodeBatches encodes bs as a batches frame's entries (ids 1, 2, …)
// and payload, the way the distributor's writer does.
func encodeBatches(vertices uint32, bs ...batch) ([]batchEntry, []byte) {
	enc := newBatchEncoder(vertices)
	var entries []batchEntry
	var payload []byte
	for i, b := range bs {
		n := len(payload)
		var ids int
		payload, ids = enc.append(payload, b.neighbors)
		entries = append(entries, batchEntry{ID: uint64(i + 1), Vertex: b.vertex, Updates: uint32(ids), Bytes: uint32(len(payload) - n)})
	}
	return entries, payload
}

// oddCountTruth returns the ids that occur an odd number of times in ids,
// sorted, by counting in a map.
func oddCountTruth(ids []uint32) []uint32 {
	count := map[uint32]int{}
	for _, u := range ids {
		count[u]++
	}
	var out []uint32
	for u, c := range count {
		if c%2 == 1 {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

// randomBatch returns n neighbour ids of vertex v below vertices, of
// which about share repeat an earlier one.
func randomBatch(r *rand.Rand, v, vertices uint32, n int, share float64) []uint32 {
	ids := make([]uint32, 0, n)
	for len(ids) < n {
		if len(ids) > 0 && r.Float64() < share {
			ids = append(ids, ids[r.IntN(len(ids))])
			continue
		}
		if u := r.Uint32N(vertices); u != v {
			ids = append(ids, u)
		}
	}
	return ids
}

// TestBatchRoundTrip: every batch decodes to its odd-count set, whichever
// path (bitmap or sort) and form (gaps or bitmap) the encoder took, and
// both paths write the same bytes.
func TestBatchRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	forms := map[byte]int{}
	for _, vertices := range []uint32{2, 3, 16, 100, 8192, 1 << 17, bitmapMaxVertices + 1, 1<<32 - 1} {
		for _, n := range []int{1, 2, 3, 10, 100, 1948, 5000} {
			for _, share := range []float64{0, 0.1, 0.6} {
				v := r.Uint32N(vertices)
				ids := randomBatch(r, v, vertices, n, share)
				want := oddCountTruth(ids)
				entries, payload := encodeBatches(vertices, batch{v, ids})
				e := entries[0]
				if int(e.Updates) != len(want) || int(e.Bytes) != len(payload) || len(payload) > maxBatchBytes(len(want)) {
					t.Fatalf("V=%d n=%d: entry %+v for %d ids in %d bytes", vertices, n, e, len(want), len(payload))
				}
				forms[payload[0]]++
				got, err := decodeBatch(nil, payload, int(e.Updates), v, vertices)
				requireNoError(t, err)
				if !slices.Equal(got, want) && len(want)+len(got) > 0 {
					t.Fatalf("V=%d n=%d share=%v: decoded %d ids, want %d", vertices, n, share, len(got), len(want))
				}
				sorted := appendSorted(nil, want)
				if !slices.Equal(sorted, payload) {
					t.Fatalf("V=%d n=%d: the sort path writes %x, the encoder %x", vertices, n, sorted[:min(16, len(sorted))], payload[:min(16, len(payload))])
				}
				if vertices <= 1<<16 {
					// The same ids in a narrow gutter's batch.
					narrow := make([]uint16, len(ids))
					for i, u := range ids {
						narrow[i] = uint16(u)
					}
					got, k := newBatchEncoder(vertices).appendBatch(nil, gutters.Batch{Vertex: v, Narrow: narrow})
					if k != len(want) || !slices.Equal(got, payload) {
						t.Fatalf("V=%d n=%d: a 16-bit batch encodes to %d ids in %x, the 32-bit one %d in %x",
							vertices, n, k, got[:min(16, len(got))], len(want), payload[:min(16, len(payload))])
					}
				}
			}
		}
	}
	if forms[idsGaps] == 0 || forms[idsBitmap] == 0 {
		t.Errorf("forms used: %v, want both", forms)
	}
}

// TestBatchParityDeltaEqual: the delta of the ids that cross the wire is
// the delta of the whole batch, bucket for bucket, on batches with many
// cancelling pairs (deletes and re-inserts of one edge inside a batch).
func TestBatchParityDeltaEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, vertices := range []uint32{16, 1000, 8192, 1 << 20} {
		p, err := sketch.NewParams(vertices, 1, 9)
		requireNoError(t, err)
		full := make([]sketch.Bucket, p.BucketsPerVertex())
		wire := make([]sketch.Bucket, p.BucketsPerVertex())
		for _, n := range []int{1, 2, 50, 1948} {
			for _, share := range []float64{0, 0.5, 0.9} {
				v := r.Uint32N(vertices)
				ids := randomBatch(r, v, vertices, n, share)
				entries, payload := encodeBatches(vertices, batch{v, ids})
				sent, err := decodeBatch(nil, payload, int(entries[0].Updates), v, vertices)
				requireNoError(t, err)
				p.Delta(full, v, ids)
				p.Delta(wire, v, sent)
				if !slices.Equal(full, wire) {
					t.Fatalf("V=%d n=%d share=%v: delta of the %d ids sent differs from the batch's (%d ids)",
						vertices, n, share, len(sent), len(ids))
				}
				if share > 0 && n > 2 && len(sent) >= len(ids) {
					t.Errorf("V=%d n=%d share=%v: %d ids sent of %d, none cancelled", vertices, n, share, len(sent), len(ids))
				}
			}
		}
	}
	// A batch whose ids all cancel sends none, and its delta is zero.
	entries, payload := encodeBatches(10, batch{0, []uint32{4, 7, 7, 4}})
	if entries[0].Updates != 0 || len(payload) != 1 {
		t.Errorf("cancelled batch: entry %+v, payload %x", entries[0], payload)
	}
}

func TestDecodeBatch_Failure(t *testing.T) {
	f := func(name string, b []byte, n int, v, vertices uint32, wantText string) {
		t.Helper()
		_, err := decodeBatch(make([]uint32, 0, n), b, n, v, vertices)
		if !errors.Is(err, ErrFrame) || !strings.Contains(err.Error(), wantText) {
			t.Errorf("%s: error %v, want ErrFrame saying %q", name, err, wantText)
		}
	}
	f("empty", nil, 1, 0, 10, "empty batch")
	f("unknown form", []byte{7}, 0, 0, 10, "form 7")
	f("gaps: too few", []byte{idsGaps, 1}, 2, 0, 10, "bad uvarint")
	f("gaps: too many", []byte{idsGaps, 1, 1}, 1, 0, 10, "1 bytes after")
	f("gaps: past the vertices", []byte{idsGaps, 3, 6}, 2, 0, 10, "neighbour 10")
	f("gaps: huge gap", []byte{idsGaps, 0xff, 0xff, 0xff, 0xff, 0x7f}, 1, 0, 10, "neighbour 34359738367")
	f("gaps: self loop", []byte{idsGaps, 1, 0}, 2, 2, 10, "vertex 2 holds neighbour 2")
	f("gaps: truncated uvarint", []byte{idsGaps, 0x80}, 1, 0, 10, "bad uvarint")
	f("bitmap: base past the vertices", []byte{idsBitmap, 2, 1}, 1, 0, 10, "from byte 2")
	f("bitmap: bit past the vertices", []byte{idsBitmap, 1, 0x04}, 1, 0, 10, "neighbour 10")
	f("bitmap: self loop", []byte{idsBitmap, 0, 0x03}, 2, 1, 10, "holds neighbour 1")
	f("bitmap: more ids than said", []byte{idsBitmap, 0, 0x07}, 2, 9, 10, "holds 3 ids, header says 2")
	f("bitmap: trailing zero bytes past the vertices", []byte{idsBitmap, 0, 0x01, 0, 0x01}, 2, 9, 10, "neighbour 16")
	f("bitmap: fewer ids than said", []byte{idsBitmap, 0, 0x03}, 3, 9, 10, "holds 2 ids, header says 3")
	f("bitmap: bad base", []byte{idsBitmap, 0x80}, 0, 9, 10, "bitmap from byte")
}

// TestDeltaCodecRoundTrip: sparse, dense and empty deltas decode to
// themselves; the encoding of a delta of a batch is a fraction of the
// raw sketch.
func TestDeltaCodecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, vertices := range []uint32{2, 16, 8192, 1 << 17, 1<<32 - 1} {
		p, err := sketch.NewParams(vertices, 1, 3)
		requireNoError(t, err)
		dc := newDeltaCodec(p)
		per := p.BucketsPerVertex()
		var b []byte
		var want [][]sketch.Bucket
		for _, n := range []int{0, 1, 7, 1948} {
			v := r.Uint32N(vertices)
			d := make([]sketch.Bucket, per)
			if vertices > 2 || n < 2 {
				p.Delta(d, v, randomBatch(r, v, vertices, n, 0))
			}
			want = append(want, d)
			start := len(b)
			b = dc.append(b, v, d)
			if size := len(b) - start; size < dc.minBytes() || size > dc.maxBytes() {
				t.Fatalf("V=%d n=%d: delta of %d bytes, bounds [%d, %d]", vertices, n, size, dc.minBytes(), dc.maxBytes())
			}
		}
		// Every bucket set: the largest encoding.
		full := make([]sketch.Bucket, per)
		for i := range full {
			full[i] = sketch.Bucket{Alpha: r.Uint64(), Gamma: r.Uint64() | 1}
		}
		want = append(want, full)
		start := len(b)
		b = dc.append(b, vertices-1, full)
		if len(b)-start != dc.maxBytes() && vertices > 1<<28 {
			t.Errorf("V=%d: full delta of %d bytes, maxBytes %d", vertices, len(b)-start, dc.maxBytes())
		}
		got := make([]sketch.Bucket, per)
		for i := range got {
			got[i] = sketch.Bucket{Alpha: 1} // must be overwritten
		}
		rest := b
		for i, w := range want {
			pv, pok := dc.nextRows(rest)
			for c, top := range dc.tops {
				// Rows up to the highest non-zero one of w's column c.
				want := 0
				for r, b := range w[1+c*p.Rows() : 1+(c+1)*p.Rows()] {
					if b != (sketch.Bucket{}) {
						want = r + 1
					}
				}
				if pok && int(top) != want {
					t.Fatalf("V=%d delta %d column %d: nextRows keeps %d rows, the highest non-zero is row %d", vertices, i, c, top, want-1)
				}
			}
			var v uint32
			v, rest, err = dc.decode(got, rest)
			requireNoError(t, err)
			if !pok || pv != v {
				t.Fatalf("V=%d delta %d: nextRows = %d, %v; parse says vertex %d", vertices, i, pv, pok, v)
			}
			if !slices.Equal(got, w) {
				t.Fatalf("V=%d delta %d: decoded differs", vertices, i)
			}
		}
		if len(rest) != 0 {
			t.Errorf("V=%d: %d bytes left", vertices, len(rest))
		}
		// xorInto merges what parse kept, touching the delta's buckets
		// only: the result equals sketch.Merge of the decoded delta.
		rest = b
		for i, w := range want {
			base := make([]sketch.Bucket, per)
			for j := range base {
				base[j] = sketch.Bucket{Alpha: r.Uint64(), Gamma: r.Uint64()}
			}
			wantMerged := slices.Clone(base)
			sketch.Merge(wantMerged, w)
			_, rest, err = dc.parse(rest)
			requireNoError(t, err)
			dc.xorInto(base)
			if !slices.Equal(base, wantMerged) {
				t.Fatalf("V=%d delta %d: xorInto differs from Merge of the decoded delta", vertices, i)
			}
		}
	}
}

// decode is parse, then xorInto a zeroed dst (BucketsPerVertex buckets):
// the whole delta, as the tests compare it.
func (dc *deltaCodec) decode(dst []sketch.Bucket, b []byte) (v uint32, rest []byte, err error) {
	v, rest, err = dc.parse(b)
	if err != nil {
		return 0, b, err
	}
	clear(dst[:1+dc.rows*dc.columns])
	dc.xorInto(dst)
	return v, rest, nil
}

func TestDeltaCodec_Failure(t *testing.T) {
	p, _ := sketch.NewParams(16, 1, 3) // 8 rows
	dc := newDeltaCodec(p)
	got := make([]sketch.Bucket, p.BucketsPerVertex())
	cols := make([]byte, p.Columns())
	f := func(name string, b []byte, wantText string) {
		t.Helper()
		_, _, err := dc.decode(got, b)
		if !errors.Is(err, ErrFrame) || !strings.Contains(err.Error(), wantText) {
			t.Errorf("%s: error %v, want ErrFrame saying %q", name, err, wantText)
		}
	}
	cat := func(bs ...[]byte) []byte { return slices.Concat(bs...) }
	// nextRows, which picks the lines to prefetch, refuses what parse
	// refuses for the vertex, and a delta cut before its last row bitmap.
	for _, b := range [][]byte{nil, {16}, {0x80}, {0x90, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
		{3, 0}, cat([]byte{3, 0}, cols[1:])} {
		if v, ok := dc.nextRows(b); ok {
			t.Errorf("nextRows(%x) = %d, true; want false (16 vertices)", b, v)
		}
	}
	f("empty", nil, "delta vertex")
	f("vertex out of range", []byte{16}, "delta vertex 16")
	f("no flag", []byte{3}, "bad deterministic-bucket flag")
	f("bad flag", []byte{3, 2}, "bad deterministic-bucket flag")
	f("missing masks", []byte{3, 0, 0}, "column 1 row bitmap")
	f("mask past the rows", cat([]byte{3, 0, 0x80, 0x02}, cols), "column 0 row bitmap 0x100")
	f("missing buckets", cat([]byte{3, 1}, cols, make([]byte, 15)), "needs 16 bytes of buckets, have 15")
	f("missing column buckets", cat([]byte{3, 0, 3}, cols[1:], make([]byte, 16)), "needs 32 bytes")
}

// BenchmarkWire measures the wire codecs per stream update (two neighbour
// ids, one per endpoint) at the kron13 and kron15 geometries: batches of
// the gutters' size with 2% of ids repeated, their encoding by the main
// node (op=batch-encode) and decoding by the worker (op=batch-decode), and
// their deltas' encoding by the worker (op=delta-encode) and decoding by
// the main node (op=delta-decode). codec=compact is wire.go; codec=raw the
// protocol before it (ids copied as uint32s, deltas as all their buckets:
// appendRawDelta). bytes/update is what crosses the wire in that
// direction:
//
//	go test -run='^$' -bench=Wire -count=6 ./distributor | benchstat -col /codec -
func BenchmarkWire(b *testing.B) {
	for _, g := range []struct {
		name     string
		vertices uint32
	}{{"kron13", 8192}, {"kron15", 32768}} {
		p, _ := sketch.NewParams(g.vertices, 1, 1)
		n := p.BytesPerVertex() / 4 // the gutters' batch
		r := rand.New(rand.NewPCG(7, 8))
		const k = 64
		var bs []batch
		updates := 0
		for i := range k {
			v := uint32(i) * 97 % g.vertices
			bs = append(bs, batch{v, randomBatch(r, v, g.vertices, n, 0.02)})
			updates += n
		}
		perUpdate := func(b *testing.B, bytes int) {
			upd := float64(updates) / 2
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*upd), "ns/update")
			b.ReportMetric(float64(bytes)/upd, "bytes/update")
		}
		name := func(op, codec string) string { return fmt.Sprintf("graph=%s/op=%s/codec=%s", g.name, op, codec) }
		entries, payload := encodeBatches(g.vertices, bs...)
		b.Run(name("batch-encode", "compact"), func(b *testing.B) {
			enc := newBatchEncoder(g.vertices)
			var out []byte
			for b.Loop() {
				out = out[:0]
				for _, x := range bs {
					out, _ = enc.append(out, x.neighbors)
				}
			}
			perUpdate(b, len(out))
		})
		b.Run(name("batch-encode", "raw"), func(b *testing.B) {
			var out []byte
			for b.Loop() {
				out = out[:0]
				for _, x := range bs {
					out = append(out, idBytes(x.neighbors)...)
				}
			}
			perUpdate(b, len(out))
		})
		b.Run(name("batch-decode", "compact"), func(b *testing.B) {
			ids := make([]uint32, 0, updates)
			for b.Loop() {
				ids = ids[:0]
				rest := payload
				for _, e := range entries {
					ids, _ = decodeBatch(ids, rest[:e.Bytes], int(e.Updates), e.Vertex, g.vertices)
					rest = rest[e.Bytes:]
				}
			}
			perUpdate(b, len(payload))
		})
		b.Run(name("batch-decode", "raw"), func(b *testing.B) {
			var raw []byte
			for _, x := range bs {
				raw = append(raw, idBytes(x.neighbors)...)
			}
			ids := make([]uint32, updates)
			for b.Loop() {
				copy(idBytes(ids), raw)
			}
			perUpdate(b, len(raw))
		})
		dc := newDeltaCodec(p)
		deltas := make([][]sketch.Bucket, k)
		var encoded, rawDeltas []byte
		for i, x := range bs {
			deltas[i] = make([]sketch.Bucket, p.BucketsPerVertex())
			p.Delta(deltas[i], x.vertex, x.neighbors)
			encoded = dc.append(encoded, x.vertex, deltas[i])
			rawDeltas = appendRawDelta(rawDeltas, x.vertex, deltas[i])
		}
		if v, _, err := decodeRawDelta(p, make([]sketch.Bucket, p.BucketsPerVertex()), rawDeltas); err != nil || v != bs[0].vertex {
			b.Fatalf("the raw baseline decodes vertex %d, %v; want vertex %d", v, err, bs[0].vertex)
		}
		b.Run(name("delta-encode", "compact"), func(b *testing.B) {
			var out []byte
			for b.Loop() {
				out = out[:0]
				for i, x := range bs {
					out = dc.append(out, x.vertex, deltas[i])
				}
			}
			perUpdate(b, len(out))
		})
		b.Run(name("delta-encode", "raw"), func(b *testing.B) {
			var out []byte
			for b.Loop() {
				out = out[:0]
				for i, x := range bs {
					out = appendRawDelta(out, x.vertex, deltas[i])
				}
			}
			perUpdate(b, len(out))
		})
		b.Run(name("delta-decode", "compact"), func(b *testing.B) {
			d := make([]sketch.Bucket, p.BucketsPerVertex())
			for b.Loop() {
				rest := encoded
				for range bs {
					_, rest, _ = dc.decode(d, rest)
				}
			}
			perUpdate(b, len(encoded))
		})
		// op=delta-merge is what the main node does with a delta: XOR it
		// into its vertex's sketch in a table of the graph's size.
		// codec=compact merges straight from the frame, only the delta's
		// buckets (xorInto), with the lines of the next delta's sketch
		// that it touches prefetched as the reader does; codec=compact-full decodes it into a whole
		// sketch first and merges every bucket.
		// Each pass merges into other vertices' sketches, all over the
		// table, as a stream's deltas do.
		table := sketch.NewTable(p)
		table.AdviseHugePages()
		for v := range g.vertices {
			table.Sketch(v)[0].Alpha = 1 // fault the table in
		}
		b.Run(name("delta-merge", "compact"), func(b *testing.B) {
			shift := uint32(0)
			for b.Loop() {
				rest := encoded
				for range bs {
					var v uint32
					v, rest, _ = dc.parse(rest)
					if w, ok := dc.nextRows(rest); ok {
						dc.prefetchRows(table, (w+shift)%g.vertices)
					}
					dc.xorInto(table.Sketch((v + shift) % g.vertices))
				}
				shift += 7919
			}
			perUpdate(b, len(encoded))
		})
		b.Run(name("delta-merge", "compact-full"), func(b *testing.B) {
			d := make([]sketch.Bucket, p.BucketsPerVertex())
			shift := uint32(0)
			for b.Loop() {
				rest := encoded
				for range bs {
					var v uint32
					v, rest, _ = dc.decode(d, rest)
					sketch.Merge(table.Sketch((v+shift)%g.vertices), d)
				}
				shift += 7919
			}
			perUpdate(b, len(encoded))
		})
		b.Run(name("delta-decode", "raw"), func(b *testing.B) {
			d := make([]sketch.Bucket, p.BucketsPerVertex())
			for b.Loop() {
				rest := rawDeltas
				for range bs {
					_, rest, _ = decodeRawDelta(p, d, rest)
				}
			}
			perUpdate(b, len(rawDeltas))
		})
	}
}

// BenchmarkWireWorker is the worker's CPU per stream update for one
// batches frame of the gutters' batches (kron13 and kron15 geometries, 2%
// of ids repeated, as BenchmarkWire): decode the batches, compute each
// delta, encode it. codec=raw is the protocol before wire.go. The
// network's share (syscalls, copies in the kernel) is not in it; it
// shrinks with the bytes:
//
//	go test -run='^$' -bench=WireWorker -count=6 ./distributor | benchstat -col /codec -
func BenchmarkWireWorker(b *testing.B) {
	for _, g := range []struct {
		name     string
		vertices uint32
	}{{"kron13", 8192}, {"kron15", 32768}} {
		p, _ := sketch.NewParams(g.vertices, 1, 1)
		n := p.BytesPerVertex() / 4
		r := rand.New(rand.NewPCG(7, 8))
		const k = 64
		var bs []batch
		var raw []byte
		for i := range k {
			v := uint32(i) * 97 % g.vertices
			bs = append(bs, batch{v, randomBatch(r, v, g.vertices, n, 0.02)})
			raw = append(raw, idBytes(bs[i].neighbors)...)
		}
		entries, payload := encodeBatches(g.vertices, bs...)
		delta := make([]sketch.Bucket, p.BucketsPerVertex())
		ids := make([]uint32, k*n)
		var out []byte
		report := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*float64(k*n)/2), "ns/update")
		}
		b.Run(fmt.Sprintf("graph=%s/codec=compact", g.name), func(b *testing.B) {
			dc := newDeltaCodec(p)
			for b.Loop() {
				ids, out = ids[:0], out[:0]
				rest := payload
				for _, e := range entries {
					start := len(ids)
					ids, _ = decodeBatch(ids, rest[:e.Bytes], int(e.Updates), e.Vertex, g.vertices)
					rest = rest[e.Bytes:]
					p.Delta(delta, e.Vertex, ids[start:])
					out = dc.append(out, e.Vertex, delta)
				}
			}
			report(b)
		})
		b.Run(fmt.Sprintf("graph=%s/codec=raw", g.name), func(b *testing.B) {
			ids = ids[:k*n]
			for b.Loop() {
				out = out[:0]
				copy(idBytes(ids), raw)
				off := 0
				for _, x := range bs {
					p.Delta(delta, x.vertex, ids[off:off+len(x.neighbors)])
					off += len(x.neighbors)
					out = appendRawDelta(out, x.vertex, delta)
				}
			}
			report(b)
		})
	}
}

// idBytes views ids as their bytes, as the protocol before wire.go sent
// them.
func idBytes(ids []uint32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(ids))), 4*len(ids))
}

// appendRawDelta appends vertex v's delta as the protocol before wire.go
// sent it, the baseline of codec=raw: vertex uint32, bucket count uint32,
// then every bucket, zero or not, as its memory (Alpha, Gamma uint64
// little-endian on the machines that run the benchmarks).
func appendRawDelta(b []byte, v uint32, delta []sketch.Bucket) []byte {
	b = binary.LittleEndian.AppendUint32(b, v)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(delta)))
	return append(b, bucketBytes(delta)...)
}

// decodeRawDelta decodes one delta written by appendRawDelta from the
// front of b into dst (p.BucketsPerVertex() buckets), checking its header
// first as that protocol's decoder did, and returns the vertex and the
// bytes after it.
func decodeRawDelta(p sketch.Params, dst []sketch.Bucket, b []byte) (uint32, []byte, error) {
	const header = 8
	per := p.BucketsPerVertex()
	if len(b) < header {
		return 0, b, fmt.Errorf("delta header of %d bytes, need %d", len(b), header)
	}
	v, n := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	if v >= p.Vertices() || int64(n) != int64(per) || len(b)-header < per*sketch.BucketBytes || len(dst) < per {
		return 0, b, fmt.Errorf("delta for vertex %d of %d buckets in %d bytes, want < %d vertices, %d buckets",
			v, n, len(b), p.Vertices(), per)
	}
	copy(bucketBytes(dst[:per]), b[header:])
	return v, b[header+per*sketch.BucketBytes:], nil
}

// bucketBytes views buckets as their memory.
func bucketBytes(s []sketch.Bucket) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*sketch.BucketBytes)
}

// FuzzWireCodec: any ids encode to bytes that decode to their odd-count
// set, and any bytes decode as a batch or a delta without a panic,
// whatever the vertex count.
func FuzzWireCodec(f *testing.F) {
	f.Add(uint32(16), uint32(3), []byte{1, 0, 2, 0, 1, 0, 9, 0})
	f.Add(uint32(8192), uint32(0), []byte{0xff, 0x1f, 0, 0, 1, 0})
	f.Add(uint32(1<<17), uint32(5), []byte{idsBitmap, 0x80, 0x01, 0xff})
	f.Fuzz(func(t *testing.T, vertices, v uint32, data []byte) {
		vertices = max(vertices%(1<<20), 2)
		v %= vertices
		var ids []uint32
		for i := 0; i+2 <= len(data); i += 2 {
			if u := (uint32(data[i]) | uint32(data[i+1])<<8) % vertices; u != v {
				ids = append(ids, u)
			}
		}
		if len(ids) > 0 {
			entries, payload := encodeBatches(vertices, batch{v, ids})
			got, err := decodeBatch(nil, payload, int(entries[0].Updates), v, vertices)
			if err != nil {
				t.Fatalf("decoding %d ids: %v", len(ids), err)
			}
			if want := oddCountTruth(ids); !slices.Equal(got, want) {
				t.Fatalf("decoded %v, want %v", got, want)
			}
			if len(payload) > maxBatchBytes(len(got)) || len(got) > 8*len(payload) {
				t.Fatalf("%d ids in %d bytes: outside checkBatches' limits", len(got), len(payload))
			}
		}
		for n := range 3 {
			if got, err := decodeBatch(nil, data, n*len(data)/2, v, vertices); err == nil && len(got) != n*len(data)/2 {
				t.Fatalf("decoded %d ids, want %d", len(got), n*len(data)/2)
			}
		}
		p, err := sketch.NewParams(vertices, 1, 1)
		requireNoError(t, err)
		dc := newDeltaCodec(p)
		d := make([]sketch.Bucket, p.BucketsPerVertex())
		if _, rest, err := dc.decode(d, data); err == nil {
			if again := dc.append(nil, v, d); len(data)-len(rest) < dc.minBytes() || len(again) > dc.maxBytes() {
				t.Fatalf("delta of %d bytes, bounds [%d, %d]", len(data)-len(rest), dc.minBytes(), dc.maxBytes())
			}
		}
	})
}
