// Package testgraph writes random edge-update streams for tests and
// benchmarks of several packages.
package testgraph

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"sketchcc/stream"
)

// WriteRandomUpdates writes a binary stream of n uniformly random updates
// (distinct endpoints) over vertices to w, seeded by seed. With
// randomTypes the type bytes are random too (an ill-formed stream, which
// the sketches read as toggles); else every update is an insert. It fails
// tb on a write error.
func WriteRandomUpdates(tb testing.TB, w io.Writer, vertices uint32, n int, seed uint64, randomTypes bool) {
	tb.Helper()
	sw, err := stream.NewWriter(w, stream.Header{Vertices: vertices, Updates: uint64(n)})
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for range n {
		a, b := rng.Uint32N(vertices), rng.Uint32N(vertices-1)
		if b >= a {
			b++
		}
		u := stream.Update{Edge: stream.Edge{Src: a, Dst: b}}
		if randomTypes {
			u.Type = stream.UpdateType(rng.IntN(2))
		}
		if err := sw.Write(u); err != nil {
			tb.Fatal(err)
		}
	}
	if err := sw.Close(); err != nil {
		tb.Fatal(err)
	}
}

// WriteRandomStream is WriteRandomUpdates into a new file at path.
func WriteRandomStream(tb testing.TB, path string, vertices uint32, n int, seed uint64, randomTypes bool) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	WriteRandomUpdates(tb, f, vertices, n, seed, randomTypes)
}

// Encode returns the binary stream of us over vertices, as stream.Writer
// writes it. It fails tb on an error.
func Encode(tb testing.TB, vertices uint32, us []stream.Update) []byte {
	tb.Helper()
	var b bytes.Buffer
	w, err := stream.NewWriter(&b, stream.Header{Vertices: vertices, Updates: uint64(len(us))})
	if err != nil {
		tb.Fatal(err)
	}
	for _, u := range us {
		if err := w.Write(u); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// RandomStream returns WriteRandomUpdates' stream of n random inserts over
// vertices, seed 1, in memory.
func RandomStream(tb testing.TB, vertices uint32, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	WriteRandomUpdates(tb, &buf, vertices, n, 1, false)
	return buf.Bytes()
}

// As733Components is the number of connected components after each
// snapshot of testdata/as733.bin, the "CC over union" column of the data
// README (../shared/data/README.md): the ground truth the as-733 tests
// check union-find and the engine against.
var As733Components = []int{6790, 6794, 6781, 6494, 6490, 4832, 4818, 3331}

// PackCopy writes the packed copy of the binary stream at path into dir,
// as path's base name with ".packed" added, and returns its path. It
// fails tb on an error.
func PackCopy(tb testing.TB, path, dir string) string {
	tb.Helper()
	in, err := stream.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out := filepath.Join(dir, filepath.Base(path)+".packed")
	f, err := os.Create(out)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w, err := stream.NewPackedWriter(f, in.Header())
	if err != nil {
		tb.Fatal(err)
	}
	r := in.Reader(0, in.Header().Updates)
	buf := make([]stream.Update, 4096)
	for {
		n, err := r.Read(buf)
		for _, u := range buf[:n] {
			if err := w.Write(u); err != nil {
				tb.Fatal(err)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	if err := errors.Join(w.Close(), f.Close()); err != nil {
		tb.Fatal(err)
	}
	return out
}
