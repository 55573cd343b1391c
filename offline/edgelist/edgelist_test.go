package edgelist

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sketchcc/stream"
)

func requireNoError(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func parseString(t *testing.T, in string, f Format) (*Graph, error) {
	t.Helper()
	return Parse(context.Background(), strings.NewReader(in), "inline", f, Options{})
}

func edges(pairs ...uint32) []stream.Edge {
	var es []stream.Edge
	for i := 0; i < len(pairs); i += 2 {
		es = append(es, stream.Edge{Src: pairs[i], Dst: pairs[i+1]})
	}
	return es
}

func TestParse_Success(t *testing.T) {
	f := func(name, in string, format Format, vertices uint32, want []stream.Edge, original []uint64, st Stats) {
		t.Helper()
		g, err := parseString(t, in, format)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g.Vertices != vertices {
			t.Errorf("%s: vertices %d, want %d", name, g.Vertices, vertices)
		}
		if !slices.Equal(g.Edges, want) {
			t.Errorf("%s: edges %v, want %v", name, g.Edges, want)
		}
		if original != nil && !slices.Equal(g.IDs(), original) {
			t.Errorf("%s: original %v, want %v", name, g.IDs(), original)
		}
		if g.Stats != st {
			t.Errorf("%s: stats %+v, want %+v", name, g.Stats, st)
		}
	}
	// Snap: ids ranked ascending; 7 appears only in a self-loop; the
	// reverse and repeated edges are duplicates.
	f("snap", "# comment\n% konect comment\n30 10\n10 30\n20\t10\t1234\n7 7\n\n30 10\n",
		Snap, 4, edges(1, 2, 1, 3), []uint64{7, 10, 20, 30},
		Stats{Lines: 8, Entries: 5, SelfLoops: 1, Duplicates: 2})
	f("snap csv header crlf", "fromNode,toNode\r\n1,2\r\n2,3\r\n",
		Snap, 3, edges(0, 1, 1, 2), []uint64{1, 2, 3}, Stats{Lines: 3, Entries: 2, HeaderSkipped: 1})
	f("snap no final newline", "1 2", Snap, 2, edges(0, 1), nil, Stats{Lines: 1, Entries: 1})
	// MTX: declared 5 vertices keeps 2 isolated ones; values ignored.
	f("mtx", "%%MatrixMarket matrix coordinate real symmetric\n% note\n5 5 3\n2 1 0.5\n3 2 1\n3 3 7\n",
		MTX, 5, edges(0, 1, 1, 2), []uint64{1, 2, 3, 4, 5}, Stats{Lines: 6, Entries: 3, SelfLoops: 1})
	f("lg", "4,3,u,g,1\n1,2\n2,1\n3,3\n", LG, 4, edges(0, 1), []uint64{1, 2, 3, 4},
		Stats{Lines: 4, Entries: 3, SelfLoops: 1, Duplicates: 1})
	f("gml", `Creator "x [y]"
graph [ directed 0
  node [ id 10 label "ten" ]
  node [ id 3 label "a
multi-line label" ]
  node [ id 5 graphics [ x 1 y 2 ] ]
  edge [ source 10 target 3 weight 2 ]
  edge [ source 3 target 10 ]
  edge
  [
    source 5 target 5
  ]
]
`, GML, 3, edges(0, 2), []uint64{3, 5, 10}, Stats{Lines: 13, Entries: 3, SelfLoops: 1, Duplicates: 1})
	f("text", "4 3\n0 1\n1 0\n2 1\n", Text, 4, edges(0, 1, 1, 2), []uint64{0, 1, 2, 3},
		Stats{Lines: 4, Entries: 3, Duplicates: 1})
}

func TestParse_Failure(t *testing.T) {
	f := func(name, in string, format Format, sentinel error, line int64) {
		t.Helper()
		_, err := parseString(t, in, format)
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("%s: %v is not a *ParseError", name, err)
		}
		if !errors.Is(err, sentinel) {
			t.Errorf("%s: %v does not wrap %v", name, err, sentinel)
		}
		if pe.Line != line {
			t.Errorf("%s: line %d, want %d (%v)", name, pe.Line, line, err)
		}
		if !strings.Contains(err.Error(), "inline") {
			t.Errorf("%s: %q does not name the input", name, err)
		}
	}
	f("snap bad line", "1 2\n3 x\n", Snap, ErrSyntax, 2)
	f("snap one field", "1 2\n# c\n3\n", Snap, ErrSyntax, 3)
	f("snap empty", "# only a comment\n", Snap, ErrNoVertices, 0)
	f("mtx no banner, array size line", "3 3\n1\n2\n", MTX, ErrSyntax, 1)
	f("mtx no banner, words", "rows cols entries\n3 3 1\n1 2\n", MTX, ErrSyntax, 1)
	f("mtx no banner, not square", "% c\n3 4 1\n2 1\n", MTX, ErrUnsupported, 2)
	f("mtx no banner, out of range", "3 3 1\n4 1\n", MTX, ErrRange, 2)
	f("mtx no header at all", "", MTX, ErrSyntax, 0)
	f("mtx comments only", "%%MatrixMarket matrix coordinate pattern symmetric\n% c\n", MTX, ErrSyntax, 2)
	f("text no header at all", "", Text, ErrSyntax, 0)
	f("mtx array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", MTX, ErrUnsupported, 1)
	f("mtx out of range", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n4 1\n", MTX, ErrRange, 4)
	f("mtx zero id", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n0 1\n", MTX, ErrRange, 3)
	f("mtx truncated", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 1\n", MTX, ErrCount, 4)
	f("mtx too many", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n2 1\n3 1\n", MTX, ErrCount, 4)
	f("mtx not square", "%%MatrixMarket matrix coordinate pattern general\n3 4 1\n2 1\n", MTX, ErrUnsupported, 2)
	f("lg bad kind", "3,1,x,g\n1,2\n", LG, ErrSyntax, 1)
	f("lg out of range", "3,2,u,g\n1,2\n1,4\n", LG, ErrRange, 3)
	f("lg truncated", "3,2,u,g\n1,2\n", LG, ErrCount, 2)
	f("gml undeclared node", "graph [\n node [ id 1 ]\n node [ id 2 ]\n edge [ source 1 target 3 ]\n]\n", GML, ErrRange, 4)
	f("gml unclosed", "graph [\n node [ id 1 ]\n", GML, ErrSyntax, 2)
	f("gml edge without target", "graph [\n node [ id 1 ]\n edge [ source 1 ]\n]\n", GML, ErrSyntax, 3)
	f("gml bad id", "graph [\n node [ id x ]\n]\n", GML, ErrSyntax, 2)
	f("gml no graph", "Creator \"me\"\n", GML, ErrSyntax, 0)
	f("text out of range", "3 2\n0 1\n0 3\n", Text, ErrRange, 3)
	f("text bad header", "3\n0 1\n", Text, ErrSyntax, 1)
	f("text trailing", "3 1\n0 1\n1 2\n", Text, ErrCount, 3)
}

func TestParse_Gzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("5 6\n6 7\n"))
	zw.Close()
	g, err := Parse(context.Background(), bytes.NewReader(buf.Bytes()), "x.txt", Snap, Options{})
	requireNoError(t, err)
	if g.Vertices != 3 || len(g.Edges) != 2 {
		t.Fatalf("got %d vertices, %d edges; want 3, 2", g.Vertices, len(g.Edges))
	}
	// A truncated gzip member is an error, not a short graph.
	_, err = Parse(context.Background(), bytes.NewReader(buf.Bytes()[:buf.Len()-6]), "x.txt", Snap, Options{})
	if err == nil {
		t.Fatal("truncated gzip: no error")
	}
}

// TestParse_RealFiles parses the files of testdata/ (see PROVENANCE.md).
// Vertex, edge and component counts are those of the "Datasets" table in
// ../shared/data/README.md; components are recomputed here by a plain
// union-find over the parsed edges.
func TestParse_RealFiles(t *testing.T) {
	tests := []struct {
		file       string
		format     Format
		vertices   uint32
		edges      int
		components int // from the data README
		selfLoops  int64
	}{
		{"karate.gml", GML, 34, 78, 1, 0},
		{"lesmis.gml", GML, 77, 254, 1, 0},
		{"out.arenas-jazz", Snap, 198, 2742, 1, 0},
		{"road-minnesota.mtx", MTX, 2642, 3303, 2, 0},
		{"email-Eu-core.txt", Snap, 1005, 16064, 20, 642},
		{"p2p-Gnutella08.txt", Snap, 6301, 20777, 2, 0},
		{"CA-GrQc.txt", Snap, 5242, 14484, 355, 12},
		{"arxiv-cit-hep-th.lg.gz", LG, 27770, 352285, 143, -1},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file))
			requireNoError(t, err)
			defer f.Close()
			g, err := Parse(context.Background(), f, tc.file, tc.format, Options{})
			requireNoError(t, err)
			if g.Vertices != tc.vertices || len(g.Edges) != tc.edges {
				t.Errorf("%d vertices, %d edges; want %d, %d", g.Vertices, len(g.Edges), tc.vertices, tc.edges)
			}
			if got := g.Components(); got != tc.components {
				t.Errorf("union-find gives %d components, the data README %d", got, tc.components)
			}
			if tc.selfLoops >= 0 && g.Stats.SelfLoops != tc.selfLoops {
				t.Errorf("%d self-loops, want %d", g.Stats.SelfLoops, tc.selfLoops)
			}
			checkSimple(t, g)
		})
	}
}

// TestParse_SelfLoopOnlyVertices checks the README's note that 19 vertices
// of email-Eu-core have only self-loops: they are vertices, isolated.
func TestParse_SelfLoopOnlyVertices(t *testing.T) {
	f, err := os.Open("testdata/email-Eu-core.txt")
	requireNoError(t, err)
	defer f.Close()
	g, err := Parse(context.Background(), f, "email-Eu-core.txt", Snap, Options{})
	requireNoError(t, err)
	deg := make([]int, g.Vertices)
	for _, e := range g.Edges {
		deg[e.Src]++
		deg[e.Dst]++
	}
	isolated := 0
	for _, d := range deg {
		if d == 0 {
			isolated++
		}
	}
	if isolated != 19 {
		t.Fatalf("%d isolated vertices, want 19", isolated)
	}
}

func checkSimple(t *testing.T, g *Graph) {
	t.Helper()
	for i, e := range g.Edges {
		if e.Src >= e.Dst || e.Dst >= g.Vertices {
			t.Fatalf("edge %d = %v not canonical or out of range", i, e)
		}
		if i > 0 {
			p := g.Edges[i-1]
			if p.Src > e.Src || (p.Src == e.Src && p.Dst >= e.Dst) {
				t.Fatalf("edges %d, %d out of order: %v %v", i-1, i, p, e)
			}
		}
	}
	if g.Original != nil && (!slices.IsSorted(g.Original) || len(g.Original) != int(g.Vertices)) {
		t.Fatal("Original not ascending or wrong length")
	}
}

func TestUnion(t *testing.T) {
	a, err := parseString(t, "10 20\n20 30\n", Snap)
	requireNoError(t, err)
	b, err := parseString(t, "5 30\n30 40\n", Snap)
	requireNoError(t, err)
	u, es, err := Union([]*Graph{a, b})
	requireNoError(t, err)
	if want := []uint64{5, 10, 20, 30, 40}; !slices.Equal(u.Original, want) || u.Vertices != 5 {
		t.Fatalf("union %d vertices %v, want %v", u.Vertices, u.Original, want)
	}
	if !slices.Equal(u.Edges, edges(0, 3, 1, 2, 2, 3, 3, 4)) {
		t.Fatalf("union edges %v", u.Edges)
	}
	if !slices.Equal(es[0], edges(1, 2, 2, 3)) || !slices.Equal(es[1], edges(0, 3, 3, 4)) {
		t.Fatalf("remapped %v", es)
	}
}

func TestParseEvents(t *testing.T) {
	in := "source,target,rating,time\n6,2,4,1289241911.72836\n2,6,-1,1289241941.5\n3,3,1,1289241950\n"
	ev, err := ParseEvents(context.Background(), strings.NewReader(in), "inline", 0, Options{})
	requireNoError(t, err)
	if ev.Vertices != 3 || len(ev.List) != 2 || ev.Stats.SelfLoops != 1 || ev.Stats.Entries != 3 {
		t.Fatalf("got %+v", ev)
	}
	if e := ev.List[0]; e.Edge != (stream.Edge{Src: 0, Dst: 2}) || e.Time != 1289241911.72836 {
		t.Fatalf("first event %+v", e)
	}
	ev, err = ParseEvents(context.Background(), strings.NewReader("1 2 100 9\n"), "inline", 3, Options{})
	requireNoError(t, err)
	if ev.List[0].Time != 100 {
		t.Fatalf("time column 3 gives %v", ev.List[0].Time)
	}
	_, err = ParseEvents(context.Background(), strings.NewReader("1 2 100\n1 2\n"), "inline", 0, Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 {
		t.Fatalf("short line: got %v, want a *ParseError at line 2", err)
	}
	_, err = ParseEvents(context.Background(), strings.NewReader("1 2 abc\n"), "inline", 0, Options{})
	if !errors.As(err, &pe) || pe.Line != 1 || !errors.Is(err, ErrSyntax) {
		t.Fatalf("bad time: got %v", err)
	}
}

func TestWriteMap(t *testing.T) {
	var buf bytes.Buffer
	requireNoError(t, WriteMap(&buf, []uint64{18446744073709551615, 7}))
	if buf.String() != "0 18446744073709551615\n1 7\n" {
		t.Fatalf("got %q", buf.String())
	}
}

func TestParseFormat(t *testing.T) {
	for _, n := range []string{"snap", "mtx", "lg", "gml", "text"} {
		f, err := ParseFormat(n)
		requireNoError(t, err)
		if f.String() != n {
			t.Errorf("%s round-trips to %s", n, f)
		}
	}
	if _, err := ParseFormat("csv"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("csv: %v", err)
	}
}
