package edgelist

import (
	"bytes"
	"fmt"
	"math"
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

// parseSnap reads "u v [more columns]" lines. Before the first edge line, a
// line that is not an edge and holds a word (a column header, a comment
// that lost its '#') is skipped and counted; a line of numbers is never
// skipped. After it, a line that does not parse is an error, or with
// o.Lenient is skipped, counted and quoted.
func parseSnap(lr *lineReader, o Options) (*builder, error) {
	b := &builder{declared: -1}
	var f [][]byte
	edges := false // an edge line has been read
	for {
		line, fields, ok := lr.record(&b.stats.Lines, f)
		if !ok {
			break
		}
		f = fields
		u, v, problem, sentinel := snapEdge(f)
		if sentinel == nil {
			edges = true
			b.add(u, v)
			continue
		}
		switch {
		case !edges && hasWord(f):
			b.skipHeader(lr.line)
		case o.Lenient && edges:
			b.skipBad(lr.line, line, problem)
		default:
			return nil, lr.errorf(sentinel, "%s, in %q", problem, quoteLine(line))
		}
	}
	return b, lr.failure()
}

// snapEdge parses the first two fields of a Snap or events line as ids. It
// returns the sentinel and a detail when they are not two ids.
func snapEdge(f [][]byte) (u, v uint64, problem string, sentinel error) {
	if len(f) < 2 {
		return 0, 0, "want \"u v [more columns]\"", ErrSyntax
	}
	u, ok1 := parseUint(f[0])
	v, ok2 := parseUint(f[1])
	switch {
	case !ok1:
		sentinel, problem = idProblem(f[0])
	case !ok2:
		sentinel, problem = idProblem(f[1])
	}
	return u, v, problem, sentinel
}

// hasWord reports whether a field of f is not a number.
func hasWord(f [][]byte) bool {
	for _, x := range f {
		if !isNumber(x) {
			return true
		}
	}
	return false
}

// declared describes a format whose header line declares the vertex
// count and the number of entry lines that follow: MatrixMarket, LG and the
// untyped text format. parseDeclared reads all three.
type declared struct {
	// header parses the header's fields into the vertex count and the
	// number of entries, or returns an error for lr's current line.
	header func(lr *lineReader, f [][]byte, line []byte) (vertices, entries uint64, err error)
	// headerName names the header line in errors ("size line", "header").
	headerName string
	// entry shows an entry line in errors, for example "u,v".
	entry string
	// extraFields allows fields after the two ids (a MatrixMarket value).
	extraFields bool
	// countNote is added to the error for entries past the declared count.
	countNote string
}

// parseDeclared reads the lines after any banner: comments, the header
// line, then exactly the declared number of entries with ids in
// [base, base+vertices). Nothing is allocated per declared vertex or
// entry, only per entry read: a header is a claim, not a size to trust.
func parseDeclared(lr *lineReader, b *builder, d declared) (*builder, error) {
	var f [][]byte
	var entries, read uint64
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		b.stats.Lines++
		if isComment(line) {
			continue
		}
		f = splitFields(line, f)
		if b.declared < 0 {
			n, m, err := d.header(lr, f, line)
			if err != nil {
				return nil, err
			}
			if n > math.MaxUint32 {
				return nil, lr.errorf(ErrRange, "%s declares %d vertices; a stream holds at most %d (2^32-1)",
					d.headerName, n, uint32(math.MaxUint32))
			}
			b.declared, entries = int64(n), m
			continue
		}
		if read == entries {
			return nil, lr.errorf(ErrCount, "entry %d, %s declares %d%s", read+1, d.headerName, entries, d.countNote)
		}
		if len(f) < 2 || (len(f) > 2 && !d.extraFields) {
			return nil, lr.errorf(ErrSyntax, "want %q, got %q", d.entry, line)
		}
		u, ok1 := parseUint(f[0])
		v, ok2 := parseUint(f[1])
		if !ok1 || !ok2 {
			return nil, lr.errorf(ErrSyntax, "want unsigned integers %q, got %q", d.entry, quoteLine(line))
		}
		n := uint64(b.declared)
		if u < b.base || u-b.base >= n || v < b.base || v-b.base >= n {
			return nil, lr.errorf(ErrRange, "entry (%d,%d), %d vertices (ids are %d-based)",
				u, v, b.declared, b.base)
		}
		read++
		b.add(u-b.base, v-b.base)
	}
	if err := lr.failure(); err != nil {
		return nil, err
	}
	if b.declared < 0 {
		return nil, &ParseError{Name: lr.name, Line: lr.line, Err: ErrSyntax, Detail: "no " + d.headerName}
	}
	if read != entries {
		return nil, &ParseError{Name: lr.name, Line: lr.line, Err: ErrCount,
			Detail: fmt.Sprintf("%d entries, %s declares %d", read, d.headerName, entries)}
	}
	return b, nil
}

// NoBannerNote is the Graph.Notes entry of a MatrixMarket file read
// without its banner.
const NoBannerNote = "no %%MatrixMarket banner: read as \"coordinate pattern symmetric\" (1-based \"i j\" entries after the size line \"n n entries\")"

// parseMTX reads a MatrixMarket coordinate file. A file whose first line
// is not a %%MatrixMarket banner is read as "coordinate pattern symmetric"
// (some repositories publish them so); its first line that is not a
// comment must then be a size line "n n entries".
func parseMTX(lr *lineReader) (*builder, error) {
	b := &builder{declared: -1, base: 1}
	banner, ok := lr.next()
	if !ok {
		if err := lr.failure(); err != nil {
			return nil, err
		}
		return nil, &ParseError{Name: lr.name, Err: ErrSyntax, Detail: "empty file, want a %%MatrixMarket banner or a size line"}
	}
	bf := bytes.Fields(bytes.ToLower(banner))
	sizeWant := "size line \"rows cols entries\""
	if len(bf) > 0 && string(bf[0]) == "%%matrixmarket" {
		b.stats.Lines++
		if len(bf) < 3 || string(bf[1]) != "matrix" {
			return nil, lr.errorf(ErrSyntax, "want \"%%%%MatrixMarket matrix coordinate ...\", got %q", quoteLine(banner))
		}
		if string(bf[2]) != "coordinate" {
			return nil, lr.errorf(ErrUnsupported, "MatrixMarket %q format; only coordinate is a graph", bf[2])
		}
	} else {
		lr.back()
		b.notes = append(b.notes, NoBannerNote)
		sizeWant = "a %%MatrixMarket banner or a size line \"rows cols entries\""
	}
	return parseDeclared(lr, b, declared{headerName: "size line", entry: "i j [value]", extraFields: true,
		header: func(lr *lineReader, f [][]byte, line []byte) (uint64, uint64, error) {
			if len(f) != 3 {
				return 0, 0, lr.errorf(ErrSyntax, "want %s, got %q", sizeWant, quoteLine(line))
			}
			rows, ok1 := parseUint(f[0])
			cols, ok2 := parseUint(f[1])
			n, ok3 := parseUint(f[2])
			if !ok1 || !ok2 || !ok3 {
				return 0, 0, lr.errorf(ErrSyntax, "want %s, got %q", sizeWant, quoteLine(line))
			}
			if rows != cols {
				return 0, 0, lr.errorf(ErrUnsupported, "matrix is %d×%d; an adjacency matrix is square", rows, cols)
			}
			return rows, n, nil
		}})
}

// parseLG reads a Graphs.jl LG file: "nv,ne,kind,name[,...]", then ne
// "u,v" lines. Only the first graph of a multi-graph file is read; any data
// after its ne lines is an error.
func parseLG(lr *lineReader) (*builder, error) {
	return parseDeclared(lr, &builder{declared: -1, base: 1}, declared{headerName: "header", entry: "u,v",
		countNote: " (only one graph per file is read)",
		header: func(lr *lineReader, f [][]byte, line []byte) (uint64, uint64, error) {
			if len(f) < 3 {
				return 0, 0, lr.errorf(ErrSyntax, "want header \"nv,ne,kind,name\", got %q", line)
			}
			nv, ok1 := parseUint(f[0])
			ne, ok2 := parseUint(f[1])
			kind := string(f[2])
			if !ok1 || !ok2 || (kind != "u" && kind != "d") {
				return 0, 0, lr.errorf(ErrSyntax, "want header \"nv,ne,kind,name\" with kind u or d, got %q", line)
			}
			return nv, ne, nil
		}})
}

// parseText reads the untyped text stream format: "n m", then m "u v"
// lines with 0-based ids.
func parseText(lr *lineReader) (*builder, error) {
	return parseDeclared(lr, &builder{declared: -1}, declared{headerName: "header", entry: "u v",
		header: func(lr *lineReader, f [][]byte, line []byte) (uint64, uint64, error) {
			n, ok1 := uint64(0), false
			m, ok2 := uint64(0), false
			if len(f) == 2 {
				n, ok1 = parseUint(f[0])
				m, ok2 = parseUint(f[1])
			}
			if !ok1 || !ok2 {
				return 0, 0, lr.errorf(ErrSyntax, "want header \"vertices edges\", got %q", line)
			}
			return n, m, nil
		}})
}
