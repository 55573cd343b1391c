package edgelist

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The inputs of this file are the ones public repositories publish, or
// that lost data in earlier versions; each is also a seed of FuzzParse.

// TestParse_LineEnds checks that a lone CR ends a line as LF and CRLF do,
// in every format, and that line numbers count it.
func TestParse_LineEnds(t *testing.T) {
	f := func(name, in string, format Format, vertices uint32, want []uint32, lines int64) {
		t.Helper()
		g, err := parseString(t, in, format)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g.Vertices != vertices || !slices.Equal(g.Edges, edges(want...)) || g.Stats.Lines != lines {
			t.Errorf("%s: %d vertices, edges %v, %d lines; want %d, %v, %d",
				name, g.Vertices, g.Edges, g.Stats.Lines, vertices, edges(want...), lines)
		}
	}
	// Was: one edge (10,20), "30 40" taken for extra columns.
	f("snap lone CR", "10 20\r30 40\r", Snap, 4, []uint32{0, 1, 2, 3}, 2)
	f("snap mixed ends", "1 2\r\n3 4\r5 6\n7 8", Snap, 8, []uint32{0, 1, 2, 3, 4, 5, 6, 7}, 4)
	f("snap CR then CRLF is two lines", "1 2\r\r\n3 4\r\n", Snap, 4, []uint32{0, 1, 2, 3}, 3)
	f("mtx lone CR", "%%MatrixMarket matrix coordinate pattern symmetric\r3 3 2\r2 1\r3 2\r", MTX, 3,
		[]uint32{0, 1, 1, 2}, 4)
	f("lg lone CR", "3,2,u,g\r1,2\r2,3\r", LG, 3, []uint32{0, 1, 1, 2}, 3)
	f("text lone CR", "3 2\r0 1\r1 2\r", Text, 3, []uint32{0, 1, 1, 2}, 3)
	f("gml lone CR", "graph [\r node [ id 1 ]\r node [ id 2 ]\r edge [ source 1 target 2 ]\r]\r", GML, 2,
		[]uint32{0, 1}, 5)

	// A line number after lone CRs counts them.
	_, err := parseString(t, "1 2\r3 4\r5 x\r", Snap)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 {
		t.Errorf("bad third line after CRs: %v, want a *ParseError at line 3", err)
	}

	// A CR-only file larger than the longest line allowed reads as lines,
	// across buffer refills.
	var b strings.Builder
	const n = 200_000 // about 2.3 MB, over maxLineBytes
	for i := range n {
		b.WriteString(strings.Repeat("0", 3))
		b.WriteString(strconv.Itoa(i))
		b.WriteString(" ")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteByte('\r')
	}
	if b.Len() <= maxLineBytes {
		t.Fatalf("test input of %d bytes does not exceed maxLineBytes", b.Len())
	}
	g, err := parseString(t, b.String(), Snap)
	requireNoError(t, err)
	if g.Vertices != n+1 || len(g.Edges) != n || g.Stats.Lines != n || g.Components() != 1 {
		t.Fatalf("CR-only path: %d vertices, %d edges, %d lines, %d components; want %d, %d, %d, 1",
			g.Vertices, len(g.Edges), g.Stats.Lines, g.Components(), n+1, n, n)
	}
}

// TestParse_Ids checks that ids are unsigned 64-bit labels: every such
// value is one, a line of numbers is never taken for a header, and a
// negative or larger number is an error naming its line.
func TestParse_Ids(t *testing.T) {
	// Was: V 2, one edge (the first line taken for a header).
	g, err := parseString(t, "18446744073709551615 2\n3 4\n", Snap)
	requireNoError(t, err)
	if g.Vertices != 4 || !slices.Equal(g.Edges, edges(0, 3, 1, 2)) ||
		!slices.Equal(g.Original, []uint64{2, 3, 4, 18446744073709551615}) || g.Stats.HeaderSkipped != 0 {
		t.Errorf("huge id on line 1: %d vertices, edges %v, ids %v, %d header lines",
			g.Vertices, g.Edges, g.Original, g.Stats.HeaderSkipped)
	}
	// Was: refused with "want integer ids".
	g, err = parseString(t, "0 1\n18446744073709551615 5\n", Snap)
	requireNoError(t, err)
	if g.Vertices != 4 || !slices.Equal(g.Edges, edges(0, 1, 2, 3)) ||
		!slices.Equal(g.Original, []uint64{0, 1, 5, 18446744073709551615}) {
		t.Errorf("2^64-1: %d vertices, edges %v, ids %v", g.Vertices, g.Edges, g.Original)
	}

	bad := func(name, in string, sentinel error, line int64, detail string) {
		t.Helper()
		_, err := parseString(t, in, Snap)
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, sentinel) || pe.Line != line || !strings.Contains(err.Error(), detail) {
			t.Errorf("%s: %v; want %v at line %d saying %q", name, err, sentinel, line, detail)
		}
	}
	// Was: a vertex named "-1".
	bad("negative id", "1 2\n-1 3\n", ErrRange, 2, "negative id -1: ids are unsigned 64-bit labels")
	bad("negative id on line 1", "-1 3\n1 2\n", ErrRange, 1, "negative id -1")
	bad("above 2^64-1", "18446744073709551616 1\n", ErrRange, 1, "id 18446744073709551616 is above 2^64-1")
	bad("a lone number on line 1", "5\n1 2\n", ErrSyntax, 1, "want \"u v [more columns]\"")
	bad("decimal ids on line 1", "1.5 2\n", ErrSyntax, 1, "id \"1.5\" is not an unsigned integer")
	bad("signed id", "+1 2\n", ErrSyntax, 1, "id \"+1\" is not an unsigned integer")
	bad("word after the first edge", "1 2\nfoo bar\n", ErrSyntax, 2, "id \"foo\" is not an unsigned integer")
}

// TestParse_HeaderBlock checks that lines of words before the first edge
// line are skipped, counted and listed, and that a line after it is not.
func TestParse_HeaderBlock(t *testing.T) {
	// A SNAP comment block with a line that lost its '#'. Was: refused at
	// line 3.
	in := "# Undirected graph\n# Legend:\n    2 = strong tie\n# Nodes: 3\n1 2 2\n2 3 1\n"
	g, err := parseString(t, in, Snap)
	requireNoError(t, err)
	if g.Vertices != 3 || !slices.Equal(g.Edges, edges(0, 1, 1, 2)) || g.Stats.HeaderSkipped != 1 ||
		!slices.Equal(g.Skipped.HeaderLines, []int64{3}) || g.Stats.Lines != 6 {
		t.Errorf("wrapped comment: %+v, skipped %+v, edges %v", g.Stats, g.Skipped, g.Edges)
	}
	g, err = parseString(t, "source target\n(directed)\n1 2\n", Snap)
	requireNoError(t, err)
	if g.Stats.HeaderSkipped != 2 || !slices.Equal(g.Skipped.HeaderLines, []int64{1, 2}) {
		t.Errorf("two header lines: %+v %+v", g.Stats, g.Skipped)
	}
	// Only words: no vertices, an error.
	if _, err := parseString(t, "from to\n", Snap); !errors.Is(err, ErrNoVertices) {
		t.Errorf("header only: %v, want ErrNoVertices", err)
	}
	// The list of line numbers is bounded; the count is not.
	g, err = parseString(t, strings.Repeat("x y\n", MaxListed+7)+"1 2\n", Snap)
	requireNoError(t, err)
	if g.Stats.HeaderSkipped != MaxListed+7 || len(g.Skipped.HeaderLines) != MaxListed {
		t.Errorf("long header: %d skipped, %d listed", g.Stats.HeaderSkipped, len(g.Skipped.HeaderLines))
	}
}

// TestParse_Lenient checks that lenient parsing skips, counts and quotes
// the bad lines after the first edge line, and stays strict otherwise.
func TestParse_Lenient(t *testing.T) {
	in := "# c\nsrc dst\n1 2\nx y\n2 3\n-4 5\n3\n1.5 2\n9 10\nbad\n7 8\n"
	if _, err := parseString(t, in, Snap); !errors.Is(err, ErrSyntax) {
		t.Fatalf("strict: %v, want ErrSyntax", err)
	}
	g, err := Parse(context.Background(), strings.NewReader(in), "inline", Snap, Options{Lenient: true})
	requireNoError(t, err)
	want := Stats{Lines: 11, Entries: 4, HeaderSkipped: 1, BadSkipped: 5}
	if g.Stats != want || g.Vertices != 7 || len(g.Edges) != 4 {
		t.Fatalf("lenient: %+v (want %+v), %d vertices, %d edges", g.Stats, want, g.Vertices, len(g.Edges))
	}
	var lines []int64
	for _, b := range g.Skipped.BadLines {
		lines = append(lines, b.Line)
	}
	if !slices.Equal(lines, []int64{4, 6, 7, 8, 10}) || g.Skipped.BadLines[1].Text != "-4 5" ||
		!strings.Contains(g.Skipped.BadLines[1].Problem, "negative id -4") ||
		!slices.Equal(g.Skipped.HeaderLines, []int64{2}) {
		t.Fatalf("lenient skipped %+v", g.Skipped)
	}
	// More bad lines than MaxQuoted: all counted, the first few quoted.
	in = "1 2\n" + strings.Repeat("x\n", MaxQuoted+3)
	g, err = Parse(context.Background(), strings.NewReader(in), "inline", Snap, Options{Lenient: true})
	requireNoError(t, err)
	if g.Stats.BadSkipped != MaxQuoted+3 || len(g.Skipped.BadLines) != MaxQuoted {
		t.Fatalf("%d skipped, %d quoted", g.Stats.BadSkipped, len(g.Skipped.BadLines))
	}
	// The declared formats stay strict.
	_, err = Parse(context.Background(), strings.NewReader("3 1\n0 x\n"), "inline", Text, Options{Lenient: true})
	if !errors.Is(err, ErrSyntax) {
		t.Fatalf("lenient text: %v, want ErrSyntax", err)
	}
}

// TestParse_MTXWithoutBanner checks that a MatrixMarket file starting at
// its size line is read as coordinate pattern symmetric and says so.
func TestParse_MTXWithoutBanner(t *testing.T) {
	for _, in := range []string{
		"3 3 2\n2 1\n3 2\n", // was: refused at line 1
		"% from a repository that drops the banner\n3 3 2\n2 1\n3 2\n",
		"3 3 2\r\n2 1 1.0\r\n3 2 1.0\r\n",
	} {
		g, err := parseString(t, in, MTX)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if g.Vertices != 3 || !slices.Equal(g.Edges, edges(0, 1, 1, 2)) ||
			!slices.Equal(g.Notes, []string{NoBannerNote}) || g.Components() != 1 {
			t.Errorf("%q: %d vertices, edges %v, notes %q", in, g.Vertices, g.Edges, g.Notes)
		}
	}
	g, err := parseString(t, "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n", MTX)
	requireNoError(t, err)
	if g.Notes != nil {
		t.Errorf("a banner file has notes %q", g.Notes)
	}
}

// TestParse_NoEdges checks that a header that declares vertices and no
// entries is a graph of isolated vertices, and that no header at all stays
// an error.
func TestParse_NoEdges(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		format   Format
		vertices uint32
	}{
		{"mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n5 5 0\n", MTX, 5},
		{"mtx without banner", "5 5 0\n", MTX, 5},
		{"lg", "4,0,u,g\n", LG, 4},
		{"text", "3 0\n", Text, 3},
		{"gml", "graph [ node [ id 1 ] node [ id 9 ] ]\n", GML, 2},
		{"snap self-loops only", "7 7\n8 8\n", Snap, 2},
	} {
		g, err := parseString(t, tc.in, tc.format)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if g.Vertices != tc.vertices || len(g.Edges) != 0 || g.Components() != int(tc.vertices) {
			t.Errorf("%s: %d vertices, %d edges, %d components; want %d, 0, %d",
				tc.name, g.Vertices, len(g.Edges), g.Components(), tc.vertices, tc.vertices)
		}
	}
	for _, tc := range []struct {
		in     string
		format Format
	}{{"", Snap}, {"# only comments\n", Snap}, {"", MTX}, {"% c\n", MTX}, {"", LG}, {"", Text},
		{"%%MatrixMarket matrix coordinate pattern symmetric\n0 0 0\n", MTX}, {"0 0\n", Text}} {
		if _, err := parseString(t, tc.in, tc.format); err == nil {
			t.Errorf("%v %q: no error", tc.format, tc.in)
		}
	}
}

// TestParseEvents_Wild checks the event parser on the same cases: lone CR,
// 64-bit ids, negative ids, header block and lenient parsing.
func TestParseEvents_Wild(t *testing.T) {
	ev, err := ParseEvents(context.Background(), strings.NewReader("u v t\r1 18446744073709551615 5\r2 3 6\r"), "inline", 0, Options{})
	requireNoError(t, err)
	if ev.Vertices != 4 || len(ev.List) != 2 || ev.Stats.HeaderSkipped != 1 ||
		!slices.Equal(ev.Original, []uint64{1, 2, 3, 18446744073709551615}) {
		t.Fatalf("got %+v", ev)
	}
	_, err = ParseEvents(context.Background(), strings.NewReader("1 2 5\n-1 3 6\n"), "inline", 0, Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || !errors.Is(err, ErrRange) {
		t.Fatalf("negative id: %v", err)
	}
	ev, err = ParseEvents(context.Background(), strings.NewReader("1 2 5\n-1 3 6\n2 3 7\n"), "inline", 0, Options{Lenient: true})
	requireNoError(t, err)
	if len(ev.List) != 2 || ev.Stats.BadSkipped != 1 || ev.Skipped.BadLines[0].Line != 2 {
		t.Fatalf("lenient: %+v", ev)
	}
}

// TestParse_LongLine checks the bound on a line: maxLineBytes is read, one
// byte more is an error naming the line, whatever the line end.
func TestParse_LongLine(t *testing.T) {
	for _, end := range []string{"\n", "\r", "\r\n"} {
		pad := strings.Repeat(" ", maxLineBytes-len("1 3"))
		g, err := parseString(t, "1 2"+end+"1 3"+pad+end+"2 3"+end, Snap)
		if err != nil || len(g.Edges) != 3 {
			t.Errorf("end %q: a line of maxLineBytes: %v", end, err)
		}
		_, err = parseString(t, "1 2"+end+"1 3 "+pad+end, Snap)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(err.Error(), "line longer than") {
			t.Errorf("end %q: a line of maxLineBytes+1: %v", end, err)
		}
	}
}
