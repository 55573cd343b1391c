package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sketchcc/internal/testgraph"
	"sketchcc/offline/streamgen"
	"sketchcc/stream"
)

// packedBlock is the records of a block the packed writer writes (the
// package doc's R).
const packedBlock = 1 << 16

// TestReadersPacked: the packed copy of a stream gives the binary
// stream's reference table with 1, 2 and 4 readers, at the end and at
// positions inside blocks, and the Cursor's digest is the binary
// stream's, so that a checkpoint of one resumes on the other.
func TestReadersPacked(t *testing.T) {
	ctx := context.Background()
	kron := filepath.Join(t.TempDir(), "kron10.bin")
	out, err := os.Create(kron)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := streamgen.Kron(ctx, streamgen.DefaultKronConfig(10, 7), out, io.Discard); err != nil {
		t.Fatal(err)
	}
	out.Close()
	toggles := filepath.Join(t.TempDir(), "toggles.bin")
	testgraph.WriteRandomStream(t, toggles, 3000, 300_000, 9, true)
	for _, bin := range []string{kron, toggles, "../testdata/ca-GrQc.bin"} {
		packed := testgraph.PackCopy(t, bin, t.TempDir())
		binFile := openStream(t, bin)
		n := binFile.Header().Updates
		if openStream(t, packed).BlockRecords() != packedBlock {
			t.Fatalf("%s: not a packed copy", packed)
		}
		for _, r := range readerCounts {
			// Stops inside blocks, and at a block's end when there is one.
			mid := slices.Compact(slices.Sorted(slices.Values([]uint64{n / 7, n / 3, min(packedBlock, n), n - 1, n})))
			for _, at := range [][]uint64{{n}, mid} {
				cfg := Config{Readers: r, Workers: 2, BatchFactor: 0.1}
				name := fmt.Sprintf("%s/readers=%d/stops=%d", filepath.Base(bin), r, len(at))
				t.Run(name, func(t *testing.T) {
					e, cur := engineOn(t, packed, cfg)
					ref := newReference(t, bin, cfg)
					var done uint64
					for _, pos := range at {
						if k, err := e.IngestN(ctx, cur, pos-done); err != nil || k != pos-done {
							t.Fatalf("IngestN(%d) from %d = %d, %v", pos-done, done, k, err)
						}
						done = pos
						want, err := binFile.Digest(ctx, 0, pos, nil)
						if d, ok := cur.Digest(); err != nil || !ok || d != want {
							t.Fatalf("after %d updates the Cursor's digest is %+v (known %v), the binary stream's %+v", pos, d, ok, want)
						}
						checkFlushed(t, fmt.Sprintf("%s after %d updates", name, pos), e, ref.upTo(t, pos))
					}
				})
			}
		}
	}
}

// TestReadersPackedBadBlock: a bit flipped in a packed block stops every
// reader count at that block with a checksum error naming it, its first
// record and its byte offset, and IngestN counts exactly the updates
// before it; with one reader the sketches hold exactly those.
func TestReadersPackedBadBlock(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "r.bin")
	testgraph.WriteRandomStream(t, bin, 1000, 5*packedBlock+123, 3, false)
	packed := testgraph.PackCopy(t, bin, t.TempDir())
	data, err := os.ReadFile(packed)
	if err != nil {
		t.Fatal(err)
	}
	// Block 3 starts at 32 + 3·(4 + R·(1+2·10)/8) bytes.
	blockBytes := int64(4 + packedBlock*21/8)
	off := 32 + 3*blockBytes
	data[off+1000] ^= 0x10
	if err := os.WriteFile(packed, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range readerCounts {
		cfg := Config{Readers: r, Workers: 1}
		e, cur := engineOn(t, packed, cfg)
		k, err := e.IngestN(context.Background(), cur, 1<<40)
		var fe *stream.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, stream.ErrChecksum) || fe.Index != 3*packedBlock || fe.Offset != off ||
			!strings.Contains(err.Error(), "block 3 of 6") {
			t.Fatalf("readers=%d: %v; want a checksum error in block 3 at byte offset %d", r, err, off)
		}
		if k != 3*packedBlock {
			t.Fatalf("readers=%d: IngestN returned %d; want the %d before the bad block", r, k, 3*packedBlock)
		}
		if r == 1 {
			checkFlushed(t, "one reader, stopped at the bad block", e, newReference(t, bin, cfg).upTo(t, k))
		}
	}
}
