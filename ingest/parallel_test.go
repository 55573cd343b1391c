package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sketchcc/internal/testgraph"
	"sketchcc/internal/testwait"
	"sketchcc/stream"
)

// TestChunkPairs: a chunk gives each vertex of a Part chunkPairsPerVertex
// pairs within [minChunkPairs, maxChunkPairs], and the pool of chunks
// stays within chunkPoolBytes unless the floor forces more.
func TestChunkPairs(t *testing.T) {
	for _, c := range []struct {
		vertices      uint32
		readers, want int
	}{
		{1 << 13, 8, 16 << 10}, // kron13: 1,024 vertices a Part
		{1 << 15, 8, 64 << 10}, // kron15: 4,096 vertices a Part
		{1 << 17, 8, 64 << 10}, // capped at maxChunkPairs
		{1 << 20, 32, 8 << 10}, // 1,184 chunks: the pool budget, then the floor
		{1 << 20, 16, 24966},   // 336 chunks: 64 MiB / (8 B · 336)
		{100, 2, 8 << 10},      // tiny graph: the floor
	} {
		parts := c.readers
		chunks := c.readers*parts + parts*(inserterQueue+1)
		got := chunkPairs(c.vertices, parts, chunks)
		if got != c.want {
			t.Errorf("chunkPairs(%d vertices, %d parts, %d chunks) = %d, want %d", c.vertices, parts, chunks, got, c.want)
		}
		if pool := got * 8 * chunks; got > minChunkPairs && pool > chunkPoolBytes {
			t.Errorf("%d vertices, %d readers: pool of %d bytes, over %d", c.vertices, c.readers, pool, chunkPoolBytes)
		}
	}
}

// fileDigest is the CRC-32C of records [0, n) of the stream file at path,
// computed directly over its bytes.
func fileDigest(t *testing.T, path string, n uint64) stream.Digest {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return stream.Digest{Records: n, CRC: crc32.Checksum(data[stream.HeaderBytes:stream.RecordOffset(n)], crc32.MakeTable(crc32.Castagnoli))}
}

// TestCursorDigestAfterIngest: after IngestN over a Cursor, sequential (one
// reader) or parallel (2 and 3 readers, many blocks), the Cursor's digest
// is the CRC-32C of exactly the records before its position, computed
// directly over the file.
func TestCursorDigestAfterIngest(t *testing.T) {
	const vertices, n = 2000, 700_000
	path := filepath.Join(t.TempDir(), "s.bin")
	testgraph.WriteRandomStream(t, path, vertices, n, 9, true)
	for _, readers := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("readers=%d", readers), func(t *testing.T) {
			e, err := New(Config{Vertices: vertices, Workers: 1, Readers: readers})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			f, err := stream.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cur := f.Cursor()
			for _, step := range []uint64{1, 100, 250_001, 0, 3, 449_895} {
				k, err := e.IngestN(context.Background(), cur, step)
				if err != nil || k != step {
					t.Fatalf("IngestN(%d) = %d, %v", step, k, err)
				}
				d, ok := cur.Digest()
				if want := fileDigest(t, path, cur.Pos()); !ok || d != want {
					t.Fatalf("after IngestN(%d) to %d: digest %+v (known %v), the file's %+v", step, cur.Pos(), d, ok, want)
				}
			}
			if cur.Pos() != n {
				t.Fatalf("at %d, want the end %d", cur.Pos(), n)
			}
		})
	}
}

// TestParallelStopHoldsAPrefix cancels a parallel IngestN mid-stream (a
// SIGTERM): the records inserted must be exactly [0, k) for the k it
// returns, the Cursor past them with their digest, so that a checkpoint
// taken there resumes exactly; the sketches then equal those of a
// sequential run over the first k records.
func TestParallelStopHoldsAPrefix(t *testing.T) {
	const vertices, n = 2000, 4_000_000
	path := filepath.Join(t.TempDir(), "s.bin")
	testgraph.WriteRandomStream(t, path, vertices, n, 10, true)
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table := func(e *Engine) []byte {
		t.Helper()
		if err := e.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := e.Store().Table().WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	e, err := New(Config{Vertices: vertices, Workers: 1, Readers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cur := f.Cursor()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Updates reaches n/3 during IngestN, which returns only once
		// cancelled or at n: For cannot give up first.
		_ = testwait.For(time.Minute, 100*time.Microsecond, func() error {
			if k := e.Updates(); k < n/3 {
				return fmt.Errorf("%d updates ingested", k)
			}
			return nil
		})
		cancel()
	}()
	k, err := e.IngestN(ctx, cur, n)
	if !errors.Is(err, context.Canceled) || k >= n {
		t.Fatalf("IngestN cancelled after %d of %d: %d, %v; want fewer and context.Canceled", n/3, n, k, err)
	}
	if cur.Pos() != k || e.Updates() != k {
		t.Fatalf("cancelled: IngestN says %d, the Cursor is at %d, the engine counts %d", k, cur.Pos(), e.Updates())
	}
	if d, ok := cur.Digest(); !ok || d != fileDigest(t, path, k) {
		t.Fatalf("cancelled at %d: digest %+v (known %v), the file's %+v", k, d, ok, fileDigest(t, path, k))
	}
	got := table(e)

	seq, err := New(Config{Vertices: vertices, Workers: 1, Readers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	if _, err := seq.IngestN(context.Background(), f.Reader(0, k), k); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, table(seq)) {
		t.Errorf("cancelled after %d updates: the sketches differ from those of the first %d updates", k, k)
	}
}
