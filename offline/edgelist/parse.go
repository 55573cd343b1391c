package edgelist

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"slices"

	"sketchcc/stream"
)

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

// Parse reads a graph in format f from r, stopped by ctx. name is used
// in errors. Gzip input is decompressed first. It returns a *ParseError
// for bad input and an error wrapping ErrNoVertices for an input with no
// vertex. A graph may have no edges: a header that declares vertices and
// no entries is a graph of isolated vertices. Its memory follows the
// entries read, whatever count a header declares. Once ctx is done it
// reads no more of r and returns a *ParseError, naming the next line,
// that wraps ctx.Err(). A Read of r that blocks is not interrupted; the
// caller closes r to end it.
func Parse(ctx context.Context, r io.Reader, name string, f Format, o Options) (*Graph, error) {
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
