package edgelist

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sketchcc/stream"
)

// maxHeaderBytes bounds what parsing, counting and mapping a one-edge graph
// may allocate: the line reader's and the map writer's buffers (64 KiB
// and twice 256 KiB) and small change. A table per declared vertex of a
// 2^24-vertex header, the smallest below, is 8 times more.
const maxHeaderBytes = 16 << 20

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// headWriter keeps the first 1 KiB written to it and counts the rest.
type headWriter struct {
	head []byte
	n    int64
}

func (w *headWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	w.head = append(w.head, p[:min(len(p), max(0, 1024-len(w.head)))]...)
	return len(p), nil
}

// TestParse_HostileHeaders checks that a declared vertex count is a
// claim, not a size: one edge under a header of up to 2^32−1 vertices is
// parsed, counted and mapped in memory and output that follow the edge,
// and the declared vertices stay vertices (isolated, one component each).
// Was: a union-find and a map line per declared vertex (LG 4294967295:
// 23.8 GB, then killed).
func TestParse_HostileHeaders(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		format   Format
		vertices uint32
		edge     stream.Edge
		mapWant  string
	}{
		{"lg 2^24", "16777216,1,u,g\n1,2\n", LG, 1 << 24, stream.Edge{Src: 0, Dst: 1}, "0 1\n1 2\n"},
		{"lg 2^32-1", "4294967295,1,u,g\n1,2\n", LG, 1<<32 - 1, stream.Edge{Src: 0, Dst: 1}, "0 1\n1 2\n"},
		{"mtx 2*10^9", "%%MatrixMarket matrix coordinate pattern symmetric\n2000000000 2000000000 1\n2000000000 7\n",
			MTX, 2_000_000_000, stream.Edge{Src: 6, Dst: 1_999_999_999}, "6 7\n1999999999 2000000000\n"},
		{"mtx without banner 2^31", "2147483648 2147483648 1\n1 2\n", MTX, 1 << 31, stream.Edge{Src: 0, Dst: 1},
			"0 1\n1 2\n"},
		{"text 2^32-1", "4294967295 1\n4294967294 0\n", Text, 1<<32 - 1, stream.Edge{Src: 0, Dst: 1<<32 - 2},
			"0 0\n4294967294 4294967294\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var g *Graph
			var err error
			var comps int
			var m headWriter
			bytes := allocated(func() {
				if g, err = parseString(t, tc.in, tc.format); err != nil {
					return
				}
				comps = g.Components()
				err = g.WriteMap(&m)
			})
			requireNoError(t, err)
			if g.Vertices != tc.vertices || !slices.Equal(g.Edges, []stream.Edge{tc.edge}) {
				t.Errorf("%d vertices, edges %v; want %d, [%v]", g.Vertices, g.Edges, tc.vertices, tc.edge)
			}
			if want := int(tc.vertices) - 1; comps != want {
				t.Errorf("%d components, want %d", comps, want)
			}
			if string(m.head) != tc.mapWant || m.n != int64(len(tc.mapWant)) {
				t.Errorf("map of %d bytes starting %.64q, want %q", m.n, m.head, tc.mapWant)
			}
			if bytes > maxHeaderBytes {
				t.Errorf("allocated %d bytes, want at most %d", bytes, maxHeaderBytes)
			}
		})
	}
}

// TestParse_HeaderTooLarge checks that a declared vertex count a stream
// cannot hold (its header's count is 32-bit) is an error naming the input,
// the line and the count.
func TestParse_HeaderTooLarge(t *testing.T) {
	f := func(name, in string, format Format, line int64, declared string) {
		t.Helper()
		_, err := parseString(t, in, format)
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, ErrRange) || pe.Line != line {
			t.Fatalf("%s: %v, want a *ParseError wrapping ErrRange at line %d", name, err, line)
		}
		for _, want := range []string{"inline", "declares " + declared + " vertices", "at most 4294967295"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not say %q", name, err, want)
			}
		}
	}
	f("lg 2^32", "4294967296,1,u,g\n1,2\n", LG, 1, "4294967296")
	f("mtx 2^64-1", "%%MatrixMarket matrix coordinate pattern symmetric\n% c\n"+
		"18446744073709551615 18446744073709551615 1\n1 2\n", MTX, 3, "18446744073709551615")
	f("mtx without banner", "4294967296 4294967296 0\n", MTX, 1, "4294967296")
	f("text", "# c\n4294967296 1\n0 1\n", Text, 2, "4294967296")
}

// TestUnion_DeclaredRanges checks that snapshots that declare their range
// merge without a table per declared vertex: they keep their ids, the
// union has the largest count, and its map names only vertices with
// edges.
func TestUnion_DeclaredRanges(t *testing.T) {
	a, err := parseString(t, "3000000000,1,u,g\n1,2999999999\n", LG)
	requireNoError(t, err)
	b, err := parseString(t, "2000000000,2,u,g\n1,2\n2,3\n", LG)
	requireNoError(t, err)
	var u *Graph
	var es [][]stream.Edge
	var m headWriter
	bytes := allocated(func() {
		if u, es, err = Union([]*Graph{a, b}); err == nil {
			err = u.WriteMap(&m)
		}
	})
	requireNoError(t, err)
	if u.Vertices != 3_000_000_000 || u.Original != nil || u.Base != 1 ||
		!slices.Equal(u.Edges, edges(0, 1, 0, 2_999_999_998, 1, 2)) {
		t.Errorf("union: %d vertices, original %v, base %d, edges %v", u.Vertices, u.Original, u.Base, u.Edges)
	}
	if len(es) != 2 || !slices.Equal(es[0], a.Edges) || !slices.Equal(es[1], b.Edges) {
		t.Errorf("edges %v, want each graph's own", es)
	}
	if want := "0 1\n1 2\n2 3\n2999999998 2999999999\n"; string(m.head) != want || m.n != int64(len(want)) {
		t.Errorf("map of %d bytes starting %.64q, want %q", m.n, m.head, want)
	}
	if bytes > maxHeaderBytes {
		t.Errorf("allocated %d bytes, want at most %d", bytes, maxHeaderBytes)
	}
}

// endless yields prefix, then line forever; cancel is called at the
// reads-th Read.
type endless struct {
	prefix, line string
	reads, count int
	cancel       func()
}

func (r *endless) Read(p []byte) (int, error) {
	if r.count++; r.count == r.reads {
		r.cancel()
	}
	n := copy(p, r.prefix)
	r.prefix = r.prefix[n:]
	for len(p)-n >= len(r.line) {
		n += copy(p[n:], r.line)
	}
	return n, nil
}

// TestParse_Cancel checks that a parse stops when its context is done:
// it reads no more and returns a *ParseError wrapping ctx.Err() at the
// line it had reached.
func TestParse_Cancel(t *testing.T) {
	for _, tc := range []struct {
		format Format
		prefix string
	}{
		{Snap, ""},
		{MTX, "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 18446744073709551615\n"},
		{LG, "3,18446744073709551615,u,g\n"},
		{Text, "3 18446744073709551615\n"},
		{GML, "graph [ node [ id 1 ] node [ id 2 ] comment \"\n"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		r := &endless{prefix: tc.prefix, line: "1 2\n", reads: 5, cancel: cancel}
		_, err := Parse(ctx, r, "endless", tc.format, Options{})
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, context.Canceled) || pe.Line < 2 || pe.Name != "endless" {
			t.Errorf("%v: %v, want a *ParseError wrapping context.Canceled past line 1", tc.format, err)
		}
		if r.count != r.reads {
			t.Errorf("%v: %d reads, want %d (none after the cancel)", tc.format, r.count, r.reads)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &endless{line: "1 2 3\n", reads: 5, cancel: cancel}
	_, err := ParseEvents(ctx, r, "endless", 0, Options{})
	if !errors.Is(err, context.Canceled) || r.count != r.reads {
		t.Errorf("events: %v after %d reads, want context.Canceled after %d", err, r.count, r.reads)
	}
}
