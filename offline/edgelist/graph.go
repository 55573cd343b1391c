package edgelist

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strconv"

	"sketchcc/dsu"
	"sketchcc/stream"
)

// Format names an input format. Its String form is the name used on the
// command line.
type Format int

const (
	// Snap is a whitespace- or comma-separated edge list with '#' or '%'
	// comments and arbitrary unsigned 64-bit ids.
	Snap Format = iota
	// MTX is a MatrixMarket coordinate file (1-based, declared size), with
	// or without its banner.
	MTX
	// LG is the Graphs.jl LG text format (1-based, declared size).
	LG
	// GML is the Graph Modelling Language (declared node list).
	GML
	// Text is the untyped text stream format: "n m", then "u v" lines
	// (0-based, declared size).
	Text
)

var formatNames = [...]string{Snap: "snap", MTX: "mtx", LG: "lg", GML: "gml", Text: "text"}

// String returns the format's command-line name, for example "snap".
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat returns the Format named name ("snap", "mtx", "lg", "gml" or
// "text"). It returns an error wrapping ErrUnsupported for any other name.
func ParseFormat(name string) (Format, error) {
	for f, n := range formatNames {
		if n == name {
			return Format(f), nil
		}
	}
	return 0, fmt.Errorf("%w: format %q (want snap, mtx, lg, gml or text)", ErrUnsupported, name)
}

var (
	// ErrSyntax is returned for a line or token that does not parse.
	ErrSyntax = errors.New("edgelist: syntax error")
	// ErrRange is returned for an id outside the declared vertex range, a
	// negative id, an id above 2^64−1, or a vertex count that does not fit
	// 32-bit vertex ids.
	ErrRange = errors.New("edgelist: id out of range")
	// ErrCount is returned when a file holds fewer or more entries than its
	// header declares.
	ErrCount = errors.New("edgelist: entry count does not match the header")
	// ErrNoVertices is returned for an input that yields no vertex at all.
	ErrNoVertices = errors.New("edgelist: no vertices")
	// ErrUnsupported is returned for a format variant this package does not
	// read, such as a MatrixMarket array file.
	ErrUnsupported = errors.New("edgelist: unsupported input")
)

// ParseError reports a problem at one line of an input. Use errors.Is on it
// to test for the sentinel it wraps.
type ParseError struct {
	// Name is the input's name (usually its path), or "".
	Name string
	// Line is the 1-based line number, or 0 when the problem concerns the
	// whole input (for example a missing header).
	Line int64
	// Detail says what was found, for example `got "1 x"`.
	Detail string
	// Err is the sentinel error or the underlying I/O error.
	Err error
}

func (e *ParseError) Error() string {
	var b []byte
	b = append(b, "edgelist: "...)
	if e.Name != "" {
		b = append(b, e.Name...)
		b = append(b, ": "...)
	}
	if e.Line > 0 {
		b = fmt.Appendf(b, "line %d: ", e.Line)
	}
	msg := e.Err.Error()
	if len(msg) > 10 && msg[:10] == "edgelist: " {
		msg = msg[10:]
	}
	b = append(b, msg...)
	if e.Detail != "" {
		b = append(b, " ("...)
		b = append(b, e.Detail...)
		b = append(b, ')')
	}
	return string(b)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Stats counts what a parser read and dropped.
type Stats struct {
	// Lines is the number of physical lines read, comments included.
	Lines int64 `json:"lines"`
	// Entries is the number of edge entries read (edge lines, MTX entries,
	// GML edge blocks, events), self-loops and duplicates included.
	Entries int64 `json:"entries"`
	// SelfLoops is the number of entries with equal endpoints, dropped.
	SelfLoops int64 `json:"self_loops_dropped"`
	// Duplicates is the number of entries that repeat an edge already read
	// (in either direction), dropped.
	Duplicates int64 `json:"duplicates_dropped"`
	// HeaderSkipped is the number of lines of the leading header block
	// (before the first edge line) skipped because they hold words and are
	// not edges; Skipped.HeaderLines lists where.
	HeaderSkipped int64 `json:"header_lines_skipped"`
	// BadSkipped is the number of lines after the first edge line skipped
	// because they do not parse (Options.Lenient only); Skipped.BadLines
	// quotes the first few.
	BadSkipped int64 `json:"bad_lines_skipped"`
}

// Skipped says which lines a parser skipped, so that a summary can show
// them.
type Skipped struct {
	// HeaderLines holds the 1-based numbers of the first MaxListed lines
	// counted in Stats.HeaderSkipped.
	HeaderLines []int64 `json:"header_lines_skipped_at,omitempty"`
	// BadLines quotes the first MaxQuoted lines counted in
	// Stats.BadSkipped.
	BadLines []BadLine `json:"bad_lines_skipped_first,omitempty"`
}

// MaxListed is the number of skipped header line numbers Skipped keeps,
// and MaxQuoted the number of bad lines it quotes.
const (
	MaxListed = 100
	MaxQuoted = 5
)

// BadLine is one line skipped by lenient parsing.
type BadLine struct {
	// Line is the 1-based line number.
	Line int64 `json:"line"`
	// Text is the line, cut to 80 bytes.
	Text string `json:"text"`
	// Problem says why it does not parse.
	Problem string `json:"problem"`
}

// Options changes how Parse reads its input. The zero value is the
// default.
type Options struct {
	// Lenient skips, counts and quotes the lines after the first edge line
	// that do not parse, instead of failing at the first. It applies to the
	// Snap format and to events; the formats that declare their entry
	// count (MTX, LG, Text) and GML stay strict.
	Lenient bool
}

// Graph is a simple undirected graph over the dense vertex ids
// [0, Vertices).
type Graph struct {
	// Vertices is the number of vertices.
	Vertices uint32
	// Edges holds each edge once with Src < Dst, sorted by (Src, Dst).
	Edges []stream.Edge
	// Original[v] is the id vertex v had in the input, in ascending order.
	// It is nil when the input declared its vertex range (MTX, LG, Text):
	// vertex v then had id Base+v, and nothing is held per vertex, since a
	// header may declare billions that no entry names. Use ID, which
	// handles both.
	Original []uint64
	// Base is the input id of vertex 0 when Original is nil: 1 for MTX and
	// LG, 0 for Text.
	Base uint64
	// Stats counts the lines and dropped entries.
	Stats Stats
	// Skipped says which lines were skipped (Stats counts them).
	Skipped Skipped
	// Notes states what the parser assumed about the input, for example
	// the reading of a MatrixMarket file without its banner; nil if
	// nothing.
	Notes []string
}

// Components returns the number of connected components of g, isolated
// vertices included, by a union-find over its edges.
func (g *Graph) Components() int {
	return Components(g.Vertices, g.Edges)
}

// Components returns the number of connected components of the graph with
// vertex ids [0, vertices) and the given edges, by a plain union-find. Every
// endpoint must be < vertices. Its memory follows the edges when they touch
// fewer vertices than there are (a header that declares billions of
// vertices, a few of them in edges): the union-find then covers the
// endpoints only, and every other vertex is a component of its own.
func Components(vertices uint32, edges []stream.Edge) int {
	if uint64(vertices) <= 2*uint64(len(edges)) {
		d := dsu.New(vertices)
		for _, e := range edges {
			d.Union(e.Src, e.Dst)
		}
		return d.Sets()
	}
	ends := endpoints(edges)
	d := dsu.New(uint32(len(ends)))
	for _, e := range edges {
		s, _ := slices.BinarySearch(ends, e.Src)
		t, _ := slices.BinarySearch(ends, e.Dst)
		d.Union(uint32(s), uint32(t))
	}
	return int(vertices) - len(ends) + d.Sets()
}

// endpoints returns the distinct endpoints of edges, ascending.
func endpoints(edges []stream.Edge) []uint32 {
	ends := make([]uint32, 0, 2*len(edges))
	for _, e := range edges {
		ends = append(ends, e.Src, e.Dst)
	}
	slices.Sort(ends)
	return slices.Compact(ends)
}

// Parse reads a graph in format f from r with the default Options. name is
// used in errors. Gzip input is decompressed first. It returns a
// *ParseError for bad input and an error wrapping ErrNoVertices for an
// input with no vertex. A graph may have no edges: a header that declares
// vertices and no entries is a graph of isolated vertices. Its memory
// follows the entries read, whatever count a header declares.
func Parse(r io.Reader, name string, f Format) (*Graph, error) {
	return ParseWith(context.Background(), r, name, f, Options{})
}

// ParseWith is Parse with options, stopped by ctx: once ctx is done it
// reads no more of r and returns a *ParseError, naming the next line,
// that wraps ctx.Err(). A Read of r that blocks is not interrupted; the
// caller closes r to end it.
func ParseWith(ctx context.Context, r io.Reader, name string, f Format, o Options) (*Graph, error) {
	dr, err := Decompressed(r)
	if err != nil {
		return nil, &ParseError{Name: name, Err: err}
	}
	lr := newLineReader(ctx, dr, name)
	var b *builder
	switch f {
	case Snap:
		b, err = parseSnap(lr, o)
	case MTX:
		b, err = parseMTX(lr)
	case LG:
		b, err = parseLG(lr)
	case GML:
		b, err = parseGML(lr)
	case Text:
		b, err = parseText(lr)
	default:
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, f)
	}
	if err != nil {
		return nil, err
	}
	return b.finish(name)
}

// Decompressed returns a reader of r's content: gunzipped if r starts with
// the gzip magic bytes 1f 8b, else r itself (buffered). It returns an error
// only for a gzip header that does not parse.
func Decompressed(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("cannot read gzip header: %w", err)
		}
		return zr, nil
	}
	return br, nil
}

// builder collects raw entries and turns them into a Graph.
type builder struct {
	// declared is the declared vertex count, or -1 when the vertex set is
	// the set of ids seen.
	declared int64
	// base is subtracted from a declared-format id to get the dense id.
	base uint64
	// original holds the declared ids (GML) when they are not base+v.
	original []uint64
	// pairs holds endpoint pairs: dense ids when declared >= 0, original
	// ids otherwise.
	pairs []uint64
	// loops holds the ids seen only in self-loops, when declared < 0.
	loops   []uint64
	stats   Stats
	skipped Skipped
	notes   []string
}

// skipHeader counts line, a line of the leading header block, as skipped.
func (b *builder) skipHeader(line int64) {
	b.stats.HeaderSkipped++
	if len(b.skipped.HeaderLines) < MaxListed {
		b.skipped.HeaderLines = append(b.skipped.HeaderLines, line)
	}
}

// skipBad counts a line that does not parse as skipped (lenient parsing)
// and quotes the first few.
func (b *builder) skipBad(line int64, text []byte, problem string) {
	b.stats.BadSkipped++
	if len(b.skipped.BadLines) < MaxQuoted {
		b.skipped.BadLines = append(b.skipped.BadLines, BadLine{Line: line, Text: quoteLine(text), Problem: problem})
	}
}

// quoteLine returns line cut to 80 bytes, enough to recognise it.
func quoteLine(line []byte) string {
	if len(line) > 80 {
		return string(line[:80]) + "..."
	}
	return string(line)
}

// add records one entry with endpoints u and v.
func (b *builder) add(u, v uint64) {
	b.stats.Entries++
	if u == v {
		b.stats.SelfLoops++
		if b.declared < 0 {
			b.loops = append(b.loops, u)
		}
		return
	}
	b.pairs = append(b.pairs, u, v)
}

// finish relabels, deduplicates and sorts.
func (b *builder) finish(name string) (*Graph, error) {
	g := &Graph{Stats: b.stats, Skipped: b.skipped, Notes: b.notes}
	n := int64(0)
	switch {
	case b.original != nil:
		g.Original = b.original
		n = int64(len(g.Original))
	case b.declared >= 0:
		// The declared range needs no table; a header may declare
		// billions of vertices.
		g.Base, n = b.base, b.declared
	default:
		ids := make([]uint64, 0, len(b.pairs)+len(b.loops))
		ids = append(ids, b.pairs...)
		ids = append(ids, b.loops...)
		slices.Sort(ids)
		ids = slices.Compact(ids)
		g.Original = slices.Clip(ids)
		n = int64(len(ids))
		// Relabel in place through a rank lookup.
		for i, id := range b.pairs {
			r, _ := slices.BinarySearch(ids, id)
			b.pairs[i] = uint64(r)
		}
	}
	if n == 0 {
		return nil, &ParseError{Name: name, Err: ErrNoVertices}
	}
	if n > 1<<32-1 {
		return nil, &ParseError{Name: name, Err: ErrRange,
			Detail: fmt.Sprintf("%d vertices do not fit 32-bit ids", n)}
	}
	g.Vertices = uint32(n)
	g.Edges, g.Stats.Duplicates = simpleEdges(b.pairs)
	b.pairs = nil
	return g, nil
}

// simpleEdges returns the distinct undirected edges of the dense endpoint
// pairs, Src < Dst, sorted, and the number of repeats dropped.
func simpleEdges(pairs []uint64) ([]stream.Edge, int64) {
	keys := make([]uint64, len(pairs)/2)
	for i := range keys {
		u, v := pairs[2*i], pairs[2*i+1]
		keys[i] = min(u, v)<<32 | max(u, v)
	}
	slices.Sort(keys)
	uniq := slices.Compact(keys)
	edges := make([]stream.Edge, len(uniq))
	for i, k := range uniq {
		edges[i] = stream.Edge{Src: uint32(k >> 32), Dst: uint32(k)}
	}
	return edges, int64(len(keys) - len(uniq))
}

// ID returns the id vertex v had in the input. v must be < Vertices.
func (g *Graph) ID(v uint32) uint64 {
	if g.Original != nil {
		return g.Original[v]
	}
	return g.Base + uint64(v)
}

// IDs returns the input ids of all vertices in ascending order: Original,
// or a new slice of Vertices ids for a declared range (8 bytes a vertex,
// however few of them the edges name; WriteMap and Union do without it).
func (g *Graph) IDs() []uint64 {
	if g.Original != nil {
		return g.Original
	}
	ids := make([]uint64, g.Vertices)
	for v := range ids {
		ids[v] = g.Base + uint64(v)
	}
	return ids
}

// WriteMap writes "new original" lines, the dense id and the id the vertex
// had in the input, in ascending order: one per vertex when g has
// Original, and for a declared range (Original nil) one per vertex that
// has an edge, so that the map follows the edges read, not the count a
// header declares. A vertex v < Vertices missing from the map is then an
// isolated vertex of id Base+v.
func (g *Graph) WriteMap(w io.Writer) error {
	if g.Original != nil {
		return WriteMap(w, g.Original)
	}
	return writeMap(w, func(yield func(uint32, uint64) bool) {
		for _, v := range endpoints(g.Edges) {
			if !yield(v, g.Base+uint64(v)) {
				return
			}
		}
	})
}

// Union merges graphs over one id space (for example daily snapshots): it
// returns a graph u over the union of their vertices, whose Edges hold
// every edge of any of them once (sorted, Src < Dst), and each graph's
// edges relabelled to u's ids. Graphs that all declare a range from one
// Base (MTX, LG or Text files) keep their ids: u has that Base, the
// largest of their vertex counts and no Original, so nothing is held per
// declared vertex. Otherwise u.Original is the ascending union of their
// ids (a declared range counts all its ids) and edges are relabelled to
// ranks in it; relabelling is monotone, so every returned edge list keeps
// Src < Dst and its sorted order. It returns an error wrapping ErrRange if
// the union has 2^32 ids or more.
func Union(graphs []*Graph) (u *Graph, edges [][]stream.Edge, err error) {
	u = &Graph{}
	if ranges(graphs) {
		u.Base = graphs[0].Base
		edges = make([][]stream.Edge, len(graphs))
		for i, g := range graphs {
			u.Vertices = max(u.Vertices, g.Vertices)
			edges[i] = g.Edges
		}
		u.Edges = unionEdges(edges)
		return u, edges, nil
	}
	var original []uint64
	for _, g := range graphs {
		original = append(original, g.IDs()...)
	}
	slices.Sort(original)
	original = slices.Clip(slices.Compact(original))
	if int64(len(original)) > 1<<32-1 {
		return nil, nil, fmt.Errorf("%w: %d vertices in the union", ErrRange, len(original))
	}
	edges = make([][]stream.Edge, len(graphs))
	for i, g := range graphs {
		remap := make([]uint32, g.Vertices)
		j := 0
		for v, id := range g.IDs() {
			for original[j] != id {
				j++
			}
			remap[v] = uint32(j)
		}
		es := make([]stream.Edge, len(g.Edges))
		for k, e := range g.Edges {
			es[k] = stream.Edge{Src: remap[e.Src], Dst: remap[e.Dst]}
		}
		edges[i] = es
	}
	u.Vertices, u.Original, u.Edges = uint32(len(original)), original, unionEdges(edges)
	return u, edges, nil
}

// ranges reports whether every graph declares a range of ids from one
// Base.
func ranges(graphs []*Graph) bool {
	for _, g := range graphs {
		if g.Original != nil || g.Base != graphs[0].Base {
			return false
		}
	}
	return len(graphs) > 0
}

// unionEdges returns the distinct edges of the sorted edge lists, sorted.
func unionEdges(lists [][]stream.Edge) []stream.Edge {
	all := slices.Concat(lists...)
	slices.SortFunc(all, func(a, b stream.Edge) int {
		return cmp.Or(cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst))
	})
	return slices.Clip(slices.Compact(all))
}

// WriteMap writes one "new original" line per vertex: the dense id and the
// id it had in the input.
func WriteMap(w io.Writer, original []uint64) error {
	return writeMap(w, func(yield func(uint32, uint64) bool) {
		for v, id := range original {
			if !yield(uint32(v), id) {
				return
			}
		}
	})
}

// writeMap writes a "new original" line for each pair of ids.
func writeMap(w io.Writer, ids iter.Seq2[uint32, uint64]) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var line []byte
	for v, id := range ids {
		line = strconv.AppendUint(line[:0], uint64(v), 10)
		line = append(line, ' ')
		line = strconv.AppendUint(line, id, 10)
		line = append(line, '\n')
		bw.Write(line)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("edgelist: cannot write id map: %w", err)
	}
	return nil
}

// maxLineBytes bounds one input line so that a file with no line ends
// cannot make a parser buffer it whole.
const maxLineBytes = 1 << 20

// lineReader yields lines without their line ends and counts them. A line
// ends at LF, CRLF or a lone CR (the old Mac OS convention): CR is never
// part of a line.
type lineReader struct {
	ctx  context.Context // checked before each read of r
	r    io.Reader
	name string
	line int64 // number of the last line returned, 1-based
	err  error // sticky: io.EOF or a *ParseError

	buf      []byte
	pos, end int  // unread bytes are buf[pos:end]
	eof      bool // r has returned io.EOF
	noLF     bool // buf[pos:end] holds no LF (only lone CRs end lines there)
	cr       bool // the last line ended with CR: skip one LF that follows

	// The state before the last next, for back.
	prevPos int
	prevCR  bool
	canBack bool
}

func newLineReader(ctx context.Context, r io.Reader, name string) *lineReader {
	return &lineReader{ctx: ctx, r: r, name: name, buf: make([]byte, 64<<10)}
}

// next returns the next line, valid until the following call. It returns
// ok = false at the end of input or on error; see failure.
func (l *lineReader) next() (line []byte, ok bool) {
	l.canBack = false
	if l.err != nil {
		return nil, false
	}
	for {
		if l.cr && (l.pos < l.end || l.eof) {
			if l.pos < l.end && l.buf[l.pos] == '\n' {
				l.pos++
			}
			l.cr = false
		}
		if !l.cr {
			start := l.pos
			if i := stream.IndexLineEnd(l.buf[l.pos:l.end], &l.noLF); i >= 0 {
				l.prevPos, l.prevCR, l.canBack = start, false, true
				line = l.buf[start : start+i]
				l.cr = l.buf[start+i] == '\r'
				l.pos = start + i + 1
				l.line++
				return line, true
			}
			if l.eof {
				if l.pos == l.end {
					l.err = io.EOF
					return nil, false
				}
				l.prevPos, l.prevCR, l.canBack = start, false, true
				line = l.buf[l.pos:l.end] // a last line with no line end
				l.pos = l.end
				l.line++
				return line, true
			}
		}
		if err := l.fill(); err != nil {
			l.err = err
			return nil, false
		}
	}
}

// fill reads more input into buf, moving the unread bytes to its start and
// growing it up to maxLineBytes for a long line.
// record returns the next line that is neither a comment nor only
// separators, and its fields split into f's storage; it adds every line
// it reads, skipped ones included, to *lines. ok is false at the end of
// the input (or at an error, which failure reports).
func (l *lineReader) record(lines *int64, f [][]byte) (line []byte, fields [][]byte, ok bool) {
	for {
		if line, ok = l.next(); !ok {
			return nil, f, false
		}
		*lines++
		if isComment(line) {
			continue
		}
		if f = splitFields(line, f); len(f) > 0 { // else only separators, such as ","
			return line, f, true
		}
	}
}

func (l *lineReader) fill() error {
	if l.pos > 0 {
		l.end = copy(l.buf, l.buf[l.pos:l.end])
		l.pos = 0
	}
	if l.end == len(l.buf) {
		if l.end > maxLineBytes {
			return &ParseError{Name: l.name, Line: l.line + 1, Err: ErrSyntax,
				Detail: fmt.Sprintf("line longer than %d bytes", maxLineBytes)}
		}
		l.buf = append(l.buf, make([]byte, min(len(l.buf), maxLineBytes+1-len(l.buf)))...)
	}
	for empty := 0; ; {
		if err := l.ctx.Err(); err != nil {
			return &ParseError{Name: l.name, Line: l.line + 1, Err: err}
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if n > 0 {
			l.noLF = false
		}
		switch {
		case err == io.EOF:
			l.eof = true
			return nil
		case err != nil:
			return &ParseError{Name: l.name, Line: l.line + 1, Err: err}
		case n > 0:
			return nil
		}
		if empty++; empty == 100 {
			return &ParseError{Name: l.name, Line: l.line + 1, Err: io.ErrNoProgress}
		}
	}
}

// back makes the next call of next return the line the last call
// returned, again. It may be called once after each successful next.
func (l *lineReader) back() {
	if !l.canBack {
		panic("edgelist: lineReader.back without a line to return")
	}
	l.pos, l.cr, l.canBack = l.prevPos, l.prevCR, false
	l.line--
}

// failure returns the error that stopped next, or nil at a clean end.
func (l *lineReader) failure() error {
	if l.err == io.EOF {
		return nil
	}
	return l.err
}

// errorf returns a *ParseError for the current line.
func (l *lineReader) errorf(sentinel error, format string, args ...any) error {
	return &ParseError{Name: l.name, Line: l.line, Err: sentinel, Detail: fmt.Sprintf(format, args...)}
}

// splitFields appends to dst the fields of line separated by runs of
// spaces, tabs and commas.
func splitFields(line []byte, dst [][]byte) [][]byte {
	dst = dst[:0]
	start := -1
	for i, c := range line {
		if c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\v' || c == '\f' {
			if start >= 0 {
				dst = append(dst, line[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, line[start:])
	}
	return dst
}

// parseUint parses an unsigned decimal integer (digits only, no sign)
// without allocating. ok is false for anything else, including a value
// above 2^64−1.
func parseUint(b []byte) (n uint64, ok bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// idProblem says why b is not a vertex id of a free-id format (Snap,
// events), which is any unsigned 64-bit decimal (parseUint): it returns
// ErrRange for a negative number or one above 2^64−1, ErrSyntax for
// anything else, and a detail for the error.
func idProblem(b []byte) (sentinel error, detail string) {
	switch {
	case len(b) > 1 && b[0] == '-' && isNumber(b):
		return ErrRange, fmt.Sprintf("negative id %s: ids are unsigned 64-bit labels", b)
	case len(b) > 0 && allDigits(b):
		return ErrRange, fmt.Sprintf("id %s is above 2^64-1", b)
	}
	return ErrSyntax, fmt.Sprintf("id %q is not an unsigned integer", b)
}

// isNumber reports whether b is a decimal number: an optional sign, digits
// with at most one '.', and an optional exponent ("e-3").
func isNumber(b []byte) bool {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	mant, exp, _ := bytes.Cut(bytes.ToLower(b), []byte("e"))
	intPart, frac, _ := bytes.Cut(mant, []byte("."))
	if len(intPart)+len(frac) == 0 || !allDigits(intPart) || !allDigits(frac) {
		return false
	}
	if len(b) > len(mant) { // there is an exponent
		if len(exp) > 0 && (exp[0] == '-' || exp[0] == '+') {
			exp = exp[1:]
		}
		return len(exp) > 0 && allDigits(exp)
	}
	return true
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isComment reports whether a line is blank or a '#' or '%' comment.
func isComment(line []byte) bool {
	t := bytes.TrimLeft(line, " \t\r")
	return len(t) == 0 || t[0] == '#' || t[0] == '%'
}
