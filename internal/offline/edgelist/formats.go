package edgelist

import (
	"bytes"
	"fmt"
)

// parseSnap reads "u v [more columns]" lines.
func parseSnap(lr *lineReader) (*builder, error) {
	b := &builder{declared: -1}
	var f [][]byte
	first := true
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
		if len(f) == 0 {
			continue // only separators, such as ","
		}
		if first {
			first = false
			if _, isNum := parseInt(f[0]); !isNum {
				continue // a header such as "fromNode,toNode"
			}
		}
		if len(f) < 2 {
			return nil, lr.errorf(ErrSyntax, "want \"u v [more columns]\", got %q", line)
		}
		u, ok1 := parseInt(f[0])
		v, ok2 := parseInt(f[1])
		if !ok1 || !ok2 {
			return nil, lr.errorf(ErrSyntax, "want integer ids \"u v\", got %q", line)
		}
		b.add(u, v)
	}
	return b, lr.failure()
}

// declared describes a format whose header line declares the vertex
// count and the number of entry lines that follow: MatrixMarket, LG and the
// untyped text format. parseDeclared reads all three.
type declared struct {
	// header parses the header's fields into the vertex count and the
	// number of entries, or returns an error for lr's current line.
	header func(lr *lineReader, f [][]byte, line []byte) (vertices, entries int64, err error)
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
// [base, base+vertices).
func parseDeclared(lr *lineReader, b *builder, d declared) (*builder, error) {
	var f [][]byte
	var entries, read int64
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
			if n >= 1<<32 {
				return nil, lr.errorf(ErrRange, "%d vertices do not fit 32-bit ids", n)
			}
			b.declared, entries = n, m
			continue
		}
		if read == entries {
			return nil, lr.errorf(ErrCount, "entry %d, %s declares %d%s", read+1, d.headerName, entries, d.countNote)
		}
		if len(f) < 2 || (len(f) > 2 && !d.extraFields) {
			return nil, lr.errorf(ErrSyntax, "want %q, got %q", d.entry, line)
		}
		u, ok1 := parseInt(f[0])
		v, ok2 := parseInt(f[1])
		if !ok1 || !ok2 {
			return nil, lr.errorf(ErrSyntax, "want integer %q, got %q", d.entry, line)
		}
		u, v = u-b.base, v-b.base
		if u < 0 || u >= b.declared || v < 0 || v >= b.declared {
			return nil, lr.errorf(ErrRange, "entry (%d,%d), %d vertices (ids are %d-based)",
				u+b.base, v+b.base, b.declared, b.base)
		}
		read++
		b.add(u, v)
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

// parseMTX reads a MatrixMarket coordinate file.
func parseMTX(lr *lineReader) (*builder, error) {
	b := &builder{declared: -1, base: 1}
	banner, ok := lr.next()
	if !ok {
		if err := lr.failure(); err != nil {
			return nil, err
		}
		return nil, &ParseError{Name: lr.name, Err: ErrSyntax, Detail: "empty file, want a %%MatrixMarket banner"}
	}
	b.stats.Lines++
	bf := bytes.Fields(bytes.ToLower(banner))
	if len(bf) < 3 || string(bf[0]) != "%%matrixmarket" || string(bf[1]) != "matrix" {
		return nil, lr.errorf(ErrSyntax, "want \"%%%%MatrixMarket matrix coordinate ...\", got %q", banner)
	}
	if string(bf[2]) != "coordinate" {
		return nil, lr.errorf(ErrUnsupported, "MatrixMarket %q format; only coordinate is a graph", bf[2])
	}
	return parseDeclared(lr, b, declared{headerName: "size line", entry: "i j [value]", extraFields: true,
		header: func(lr *lineReader, f [][]byte, line []byte) (int64, int64, error) {
			if len(f) != 3 {
				return 0, 0, lr.errorf(ErrSyntax, "want size line \"rows cols entries\", got %q", line)
			}
			rows, ok1 := parseInt(f[0])
			cols, ok2 := parseInt(f[1])
			n, ok3 := parseInt(f[2])
			if !ok1 || !ok2 || !ok3 || rows < 0 || cols < 0 || n < 0 {
				return 0, 0, lr.errorf(ErrSyntax, "want size line \"rows cols entries\", got %q", line)
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
		header: func(lr *lineReader, f [][]byte, line []byte) (int64, int64, error) {
			if len(f) < 3 {
				return 0, 0, lr.errorf(ErrSyntax, "want header \"nv,ne,kind,name\", got %q", line)
			}
			nv, ok1 := parseInt(f[0])
			ne, ok2 := parseInt(f[1])
			kind := string(f[2])
			if !ok1 || !ok2 || nv < 0 || ne < 0 || (kind != "u" && kind != "d") {
				return 0, 0, lr.errorf(ErrSyntax, "want header \"nv,ne,kind,name\" with kind u or d, got %q", line)
			}
			return nv, ne, nil
		}})
}

// parseText reads the untyped text stream format: "n m", then m "u v"
// lines with 0-based ids.
func parseText(lr *lineReader) (*builder, error) {
	return parseDeclared(lr, &builder{declared: -1}, declared{headerName: "header", entry: "u v",
		header: func(lr *lineReader, f [][]byte, line []byte) (int64, int64, error) {
			n, ok1 := int64(0), false
			m, ok2 := int64(0), false
			if len(f) == 2 {
				n, ok1 = parseInt(f[0])
				m, ok2 = parseInt(f[1])
			}
			if !ok1 || !ok2 || n < 0 || m < 0 {
				return 0, 0, lr.errorf(ErrSyntax, "want header \"vertices edges\", got %q", line)
			}
			return n, m, nil
		}})
}
