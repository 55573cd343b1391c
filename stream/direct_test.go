package stream

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestReadDirect reads a binary stream and its packed copy, both larger
// than the read-ahead of a direct section (directDepth chunks), through
// ranges with unaligned ends, concurrently, with direct reads and without,
// and checks that both give the records written. Where the file system
// refuses O_DIRECT (tmpfs), ReadDirect must say so and leave the File
// reading through the page cache, which must still be right.
func TestReadDirect(t *testing.T) {
	const n = 2_000_000 // 18 MB: more than directDepth·directChunk
	rng := rand.New(rand.NewPCG(5, 6))
	us := randomUpdates(rng, 1<<20, n)
	var pk bytes.Buffer
	w, err := NewPackedWriter(&pk, Header{Vertices: 1 << 20, Updates: n})
	requireNoError(t, err)
	for _, u := range us {
		requireNoError(t, w.Write(u))
	}
	requireNoError(t, w.Close())
	dir := t.TempDir()
	files := map[string][]byte{"binary": encode(t, 1<<20, us...), "packed": pk.Bytes()}
	for name, data := range files {
		path := filepath.Join(dir, name)
		requireNoError(t, os.WriteFile(path, data, 0o644))
		for _, direct := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/direct=%v", name, direct), func(t *testing.T) {
				f, err := Open(path)
				requireNoError(t, err)
				defer f.Close()
				if err := f.ReadDirect(direct); err != nil {
					t.Logf("O_DIRECT refused here, reading through the page cache: %v", err)
				}
				if f.Direct() && !direct {
					t.Fatal("Direct() is true after ReadDirect(false)")
				}
				cuts := []uint64{0, 1, 4095, 1_000_003, 1_000_004, n - 7, n}
				if all := readRanges(t, f, cuts, 777); !slices.Equal(all, us) {
					t.Fatalf("read %d updates, not the %d written", len(all), len(us))
				}
			})
		}
	}
}

// TestReadDirect_Dropped drops direct Readers before their ends and closes
// the File: the read-ahead goroutines must end (the race detector and the
// leak check of a later test would see them otherwise) and a Reader used
// after Close must fail, not hang.
func TestReadDirect_Dropped(t *testing.T) {
	const n = 1_000_000
	us := randomUpdates(rand.New(rand.NewPCG(7, 8)), 1000, n)
	f, err := Open(writeFile(t, encode(t, 1000, us...)))
	requireNoError(t, err)
	if err := f.ReadDirect(true); err != nil {
		t.Logf("O_DIRECT refused here: %v", err)
	}
	for range 3 {
		r := f.Reader(0, n)
		got, err := readAll(r, 10)
		requireNoError(t, err)
		if !slices.Equal(got, us) {
			t.Fatal("a whole read differs from the stream")
		}
		dropped := f.Reader(10, n)
		buf := make([]Update, 100)
		if k, err := dropped.Read(buf); err != nil || !slices.Equal(buf[:k], us[10:10+k]) {
			t.Fatalf("first read of a dropped reader: %d, %v", k, err)
		}
	}
	late := f.Reader(0, n)
	requireNoError(t, f.Close())
	if _, err := readAll(late, 1000); err == nil {
		t.Fatal("a Reader made before Close and read after it read the stream")
	}
}
