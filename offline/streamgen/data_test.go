package streamgen

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sketchcc/offline/edgelist"
	"sketchcc/offline/replay"
	"sketchcc/stream"
)

// replayPrefix replays the first n updates of a binary stream strictly and
// returns the edge set.
func replayPrefix(t *testing.T, data []byte, n uint64) *replay.EdgeSet {
	t.Helper()
	r, err := stream.NewReader(bytes.NewReader(data))
	requireNoError(t, err)
	set := replay.NewEdgeSet(r.Header().Vertices, replay.DefaultMaxBitmapBytes)
	for i := uint64(0); i < n; i++ {
		if !r.Next() {
			t.Fatalf("stream ends after %d updates: %v", i, r.Err())
		}
		u := r.Update()
		if set.Toggle(u.Edge) != (u.Type == stream.Insert) {
			t.Fatalf("update %d %v is not well formed", i, u)
		}
	}
	return set
}

// TestSnapshots_AS733 builds the as-733 stream from the eight snapshots of
// testdata/as-733 in date order. The expected numbers are the data README's
// table "Dynamic data: per-snapshot numbers" (../shared/data/README.md):
// |V|, |E|, +E/−E and "CC over union" (union of ids: 9,804 vertices). The
// components are recomputed here by a plain union-find over the edge set
// replayed from the stream at each boundary.
func TestSnapshots_AS733(t *testing.T) {
	files := []string{"as19971108.csv", "as19971109.csv", "as19971110.csv", "as19980201.txt",
		"as19980202.txt", "as19990427.csv", "as19990428.csv", "as20000102.txt"}
	want := []struct {
		vertices uint32
		edges    int
		ins, del int
		ccUnion  int
	}{
		{3015, 5156, 5156, 0, 6790},
		{3011, 5150, 33, 39, 6794},
		{3024, 5192, 78, 36, 6781},
		{3311, 5864, 1278, 606, 6494},
		{3315, 5824, 62, 102, 6490},
		{4973, 9498, 5764, 2090, 4832},
		{4987, 9513, 108, 93, 4818},
		{6474, 12572, 12540, 9481, 3331},
	}
	var gs []*edgelist.Graph
	for i, name := range files {
		f, err := os.Open(filepath.Join("testdata", "as-733", name))
		requireNoError(t, err)
		g, err := edgelist.Parse(context.Background(), f, name, edgelist.Snap, edgelist.Options{})
		f.Close()
		requireNoError(t, err)
		if g.Vertices != want[i].vertices || len(g.Edges) != want[i].edges || g.Components() != 1 {
			t.Fatalf("%s: %d vertices, %d edges, %d components; want %d, %d, 1",
				name, g.Vertices, len(g.Edges), g.Components(), want[i].vertices, want[i].edges)
		}
		gs = append(gs, g)
	}
	u, edges, err := edgelist.Union(gs)
	requireNoError(t, err)
	if len(u.Original) != 9804 || u.Vertices != 9804 {
		t.Fatalf("union of ids has %d vertices, want 9,804", u.Vertices)
	}
	var out bytes.Buffer
	snaps, err := Snapshots(&out, u.Vertices, edges)
	requireNoError(t, err)
	for i, s := range snaps {
		w := want[i]
		if s.Edges != w.edges || s.Inserted != w.ins || s.Deleted != w.del || s.Components != w.ccUnion {
			t.Errorf("%s: %+v, want edges %d +%d −%d, %d components over the union",
				files[i], s, w.edges, w.ins, w.del, w.ccUnion)
		}
		set := replayPrefix(t, out.Bytes(), s.AfterUpdates)
		if !slices.Equal(slices.Collect(set.All()), edges[i]) {
			t.Fatalf("%s: replayed edge set differs from the snapshot", files[i])
		}
		if cc := set.Components().Sets(); cc != w.ccUnion {
			t.Errorf("%s: union-find over the replayed edges gives %d components, the README %d",
				files[i], cc, w.ccUnion)
		}
	}
	if n := snaps[len(snaps)-1].AfterUpdates; int64(out.Len()) != stream.RecordOffset(n) {
		t.Fatalf("stream is %d bytes for %d updates", out.Len(), n)
	}
}

func TestSnapshots_Errors(t *testing.T) {
	// Snapshots without edges are a stream of isolated vertices.
	var out bytes.Buffer
	snaps, err := Snapshots(&out, 3, [][]stream.Edge{nil, nil})
	if err != nil || len(snaps) != 2 || snaps[1].Components != 3 || out.Len() != stream.HeaderBytes {
		t.Errorf("empty snapshots: %+v, %d bytes, %v", snaps, out.Len(), err)
	}
	bad := [][]stream.Edge{{{Src: 2, Dst: 1}}}
	if _, err := Snapshots(&bytes.Buffer{}, 3, bad); err == nil {
		t.Error("non-canonical edge: no error")
	}
}

func parseEvents(t *testing.T, name string) *edgelist.Events {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	requireNoError(t, err)
	defer f.Close()
	ev, err := edgelist.ParseEvents(context.Background(), f, name, 0, edgelist.Options{})
	requireNoError(t, err)
	return ev
}

// TestTemporal_UnionOfEvents uses an infinite window, so the final graph is
// the union of all events. Expected numbers: the data README's "Datasets"
// table (CollegeMsg 1,899 vertices, 13,838 edges, 4 components;
// bitcoin-otc 5,881, 21,492, 4) and its "Temporal prefixes" table (after
// round(f·events) events, f = 25%, 50%, 75%). Components are recomputed by
// a union-find over the replayed edge set.
func TestTemporal_UnionOfEvents(t *testing.T) {
	tests := []struct {
		file     string
		events   int
		vertices uint32
		edges    int
		cc       int
		prefix   [3][2]int // components, edges after 25%, 50%, 75%
	}{
		{"CollegeMsg.txt.gz", 59835, 1899, 13838, 4, [3][2]int{{1023, 4178}, {641, 7476}, {291, 10962}}},
		{"soc-sign-bitcoinotc.csv.gz", 35592, 5881, 21492, 4, [3][2]int{{4082, 5042}, {2643, 10421}, {1270, 15908}}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			ev := parseEvents(t, tc.file)
			if len(ev.List) != tc.events || ev.Vertices != tc.vertices {
				t.Fatalf("%d events, %d vertices; want %d, %d", len(ev.List), ev.Vertices, tc.events, tc.vertices)
			}
			var cps []int
			for _, f := range []float64{0.25, 0.5, 0.75} {
				cps = append(cps, int(math.Round(f*float64(tc.events))))
			}
			var out bytes.Buffer
			s, err := Temporal(&out, ev, TemporalConfig{Window: math.Inf(1), Checkpoints: cps})
			requireNoError(t, err)
			if s.Edges != tc.edges || s.Components != tc.cc || s.Deletes != 0 || s.Updates != uint64(tc.edges) {
				t.Fatalf("got %+v; want %d edges, %d components, inserts only", s, tc.edges, tc.cc)
			}
			for i, c := range s.Checkpoints {
				set := replayPrefix(t, out.Bytes(), c.AfterUpdates)
				cc := set.Components().Sets()
				if c.Components != tc.prefix[i][0] || cc != tc.prefix[i][0] || c.Edges != tc.prefix[i][1] ||
					set.Len() != int64(tc.prefix[i][1]) {
					t.Errorf("after %d events: %+v, union-find %d; README: %d components, %d edges",
						c.Events, c, cc, tc.prefix[i][0], tc.prefix[i][1])
				}
			}
			set := replayPrefix(t, out.Bytes(), s.Updates)
			if cc := set.Components().Sets(); cc != tc.cc {
				t.Fatalf("union-find over the replayed stream: %d components, README %d", cc, tc.cc)
			}
		})
	}
}

// TestTemporal_Window checks the expiry rule against a direct computation:
// after all events, an edge is present iff its last event is within the
// window of the last event; the stream stays well formed throughout.
func TestTemporal_Window(t *testing.T) {
	ev := parseEvents(t, "CollegeMsg.txt.gz")
	const day = 86400.0
	for _, w := range []float64{0, day, 7 * day, 30 * day} {
		var out bytes.Buffer
		s, err := Temporal(&out, ev, TemporalConfig{Window: w})
		requireNoError(t, err)
		end := ev.List[len(ev.List)-1].Time
		last := map[stream.Edge]float64{}
		for _, e := range ev.List {
			last[e.Edge] = max(last[e.Edge], e.Time)
		}
		var want []stream.Edge
		for e, l := range last {
			if end-l <= w {
				want = append(want, e)
			}
		}
		slices.SortFunc(want, func(a, b stream.Edge) int {
			if a.Src != b.Src {
				return int(a.Src) - int(b.Src)
			}
			return int(a.Dst) - int(b.Dst)
		})
		set := replayPrefix(t, out.Bytes(), s.Updates)
		if !slices.Equal(slices.Collect(set.All()), want) || s.Edges != len(want) {
			t.Fatalf("window %v: %d final edges, want %d", w, set.Len(), len(want))
		}
		if s.Inserts-s.Deletes != uint64(s.Edges) || (w < 30*day && s.Deletes == 0) {
			t.Fatalf("window %v: %+v", w, s)
		}
		if cc := set.Components().Sets(); cc != s.Components {
			t.Fatalf("window %v: %d components, union-find %d", w, s.Components, cc)
		}
	}
}

func TestTemporal_Unsorted(t *testing.T) {
	// Events out of order are sorted stably: (1,2) at 10 then 30 with
	// window 5 is deleted before (2,3)'s event at 20 and inserted again.
	ev, err := edgelist.ParseEvents(context.Background(), strings.NewReader("1 2 30\n2 3 20\n1 2 10\n"), "x", 0, edgelist.Options{})
	requireNoError(t, err)
	var out bytes.Buffer
	s, err := Temporal(&out, ev, TemporalConfig{Window: 5})
	requireNoError(t, err)
	r, err := stream.NewReader(bytes.NewReader(out.Bytes()))
	requireNoError(t, err)
	var got []stream.Update
	for r.Next() {
		got = append(got, r.Update())
	}
	ins := func(a, b uint32) stream.Update {
		return stream.Update{Type: stream.Insert, Edge: stream.Edge{Src: a, Dst: b}}
	}
	del := func(a, b uint32) stream.Update {
		return stream.Update{Type: stream.Delete, Edge: stream.Edge{Src: a, Dst: b}}
	}
	want := []stream.Update{ins(0, 1), del(0, 1), ins(1, 2), del(1, 2), ins(0, 1)}
	if !slices.Equal(got, want) || s.Edges != 1 || s.Components != 2 {
		t.Fatalf("got %v (%+v), want %v", got, s, want)
	}
}
