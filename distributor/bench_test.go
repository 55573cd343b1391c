package distributor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"sketchcc/gutters"
	"sketchcc/sketch"
)

// BenchmarkLocalCutoff measures the main node's CPU per batch of n
// updates both ways, at the kron13 geometry (8,192 vertices, 487 buckets):
// sketching it here (op=local), or shipping it and merging the worker's
// delta (op=ship: copying the neighbours, encoding them into a frame,
// decoding and XORing the delta back; the worker's compute is elsewhere).
// DefaultLocalCutoff is where the two cross:
//
//	go test -run='^$' -bench=LocalCutoff -count=5 ./distributor | benchstat -
func BenchmarkLocalCutoff(b *testing.B) {
	p, _ := sketch.NewParams(8192, 1, 1)
	per := p.BucketsPerVertex()
	table := sketch.NewTable(p)
	for _, n := range []int{16, 32, 64, 128, 256, 1024} {
		ids := make([]uint32, n)
		for i := range ids {
			ids[i] = uint32(i*7919+1) % 8192
		}
		b.Run(fmt.Sprintf("op=local/updates=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				table.ApplyBatch(0, ids)
			}
		})
		for _, wire := range []string{"discard", "loopback"} {
			b.Run(fmt.Sprintf("op=ship/wire=%s/updates=%d", wire, n), func(b *testing.B) {
				b.ReportAllocs()
				var out io.Writer = io.Discard
				if wire == "loopback" {
					// Batches go to a real socket whose peer discards them
					// (the peer's CPU counts too: both ends share the machine).
					ln, err := net.Listen("tcp", "127.0.0.1:0")
					requireNoError(b, err)
					defer ln.Close()
					go func() {
						c, err := ln.Accept()
						if err == nil {
							io.Copy(io.Discard, c)
							c.Close()
						}
					}()
					c, err := net.Dial("tcp", ln.Addr().String())
					requireNoError(b, err)
					defer c.Close()
					out = c
				}
				delta := make([]sketch.Bucket, per)
				p.Delta(delta, 0, ids)
				// A frame of 16 batches and one of 16 deltas, as on the wire.
				const k = 16
				dc := newDeltaCodec(p)
				var encoded []byte
				for range k {
					encoded = dc.append(encoded, 0, delta)
				}
				fw := newFrameWriter(out, nil)
				enc := newBatchEncoder(p.Vertices())
				entries := make([]batchEntry, k)
				var payload []byte
				bufs := make([][]uint32, k)
				for i := range bufs {
					bufs[i] = make([]uint32, 0, n)
				}
				scratch := make([]sketch.Bucket, per)
				for b.Loop() {
					payload = payload[:0]
					for i := range k {
						bufs[i] = append(bufs[i][:0], ids...)
						start, sent := len(payload), 0
						payload, sent = enc.append(payload, bufs[i])
						entries[i] = batchEntry{ID: uint64(i), Vertex: 0, Updates: uint32(sent), Bytes: uint32(len(payload) - start)}
					}
					fw.write(batchesMsg, entries, payload)
					rest := encoded
					for range k {
						_, rest, _ = dc.decode(scratch, rest)
						sketch.Merge(table.Sketch(0), scratch)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*k), "ns/batch")
			})
		}
	}
}

// BenchmarkRoundTrip ships batches of 1,948 updates (kron13's) to one
// worker on loopback and merges the deltas: the whole path, both ends in
// this process.
func BenchmarkRoundTrip(b *testing.B) {
	const vertices, batch = 8192, 1948
	addr, _ := startWorker(b, WorkerConfig{Threads: 1})
	e := newTestPipe(b, vertices, batch)
	defer e.close()
	p, err := NewPool(e.gut, e.st, Config{LocalCutoff: -1})
	requireNoError(b, err)
	defer p.Close()
	p.add("w", addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	requireNoError(b, p.WaitWorkers(ctx, 1))
	us := randomUpdates(1, vertices, 1<<16)
	b.SetBytes(batch * 4)
	start := e.batches()
	for b.Loop() {
		// One update per vertex pair fills 2 gutters every batch/2
		// updates; insert until one more batch is emitted.
		want := e.gut.Stats().Batches + 1
		for i := 0; e.gut.Stats().Batches < want; i++ {
			e.insert(us[i%len(us) : i%len(us)+1])
		}
	}
	requireNoError(b, e.flush(ctx, p))
	b.ReportMetric(float64(e.batches()-start)/b.Elapsed().Seconds(), "batches/s")
	_ = gutters.Batch{}
}

// BenchmarkCodec decodes the msgpack headers that cross the data plane
// once per frame: a batches frame's entries (op=entries, the worker's
// side) and a deltas frame's batch ids (op=ids, the main node's), for
// maxFrameBatches batches each.
//
//	go test -run='^$' -bench=Codec -count=10 ./distributor | benchstat -
func BenchmarkCodec(b *testing.B) {
	entries := make([]batchEntry, maxFrameBatches)
	ids := make([]uint64, maxFrameBatches)
	for i := range entries {
		entries[i] = batchEntry{ID: uint64(1e6 + i), Vertex: uint32(i * 97), Updates: 1948, Bytes: 1400}
		ids[i] = uint64(1e6 + i)
	}
	enc := newEncoder()
	eh := bytes.Clone(enc.encode(entries))
	ih := bytes.Clone(enc.encode(ids))
	dec := newDecoder()
	b.Run("op=entries", func(b *testing.B) {
		b.ReportAllocs()
		var got []batchEntry
		for b.Loop() {
			requireNoError(b, dec.decode(eh, &got, maxFrameBatches))
		}
	})
	b.Run("op=ids", func(b *testing.B) {
		b.ReportAllocs()
		var got []uint64
		for b.Loop() {
			requireNoError(b, dec.decode(ih, &got, maxFrameBatches))
		}
	})
}
