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
	var f [][]byte
	var nnz, read int64
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
			if len(f) != 3 {
				return nil, lr.errorf(ErrSyntax, "want size line \"rows cols entries\", got %q", line)
			}
			rows, ok1 := parseInt(f[0])
			cols, ok2 := parseInt(f[1])
			n, ok3 := parseInt(f[2])
			if !ok1 || !ok2 || !ok3 || rows < 0 || cols < 0 || n < 0 {
				return nil, lr.errorf(ErrSyntax, "want size line \"rows cols entries\", got %q", line)
			}
			if rows != cols {
				return nil, lr.errorf(ErrUnsupported, "matrix is %d×%d; an adjacency matrix is square", rows, cols)
			}
			if rows >= 1<<32 {
				return nil, lr.errorf(ErrRange, "%d vertices do not fit 32-bit ids", rows)
			}
			b.declared, nnz = rows, n
			continue
		}
		if read == nnz {
			return nil, lr.errorf(ErrCount, "entry %d, size line declares %d", read+1, nnz)
		}
		if len(f) < 2 {
			return nil, lr.errorf(ErrSyntax, "want \"i j [value]\", got %q", line)
		}
		i, ok1 := parseInt(f[0])
		j, ok2 := parseInt(f[1])
		if !ok1 || !ok2 {
			return nil, lr.errorf(ErrSyntax, "want integer \"i j [value]\", got %q", line)
		}
		if i < 1 || i > b.declared || j < 1 || j > b.declared {
			return nil, lr.errorf(ErrRange, "entry (%d,%d), size %d×%d (ids are 1-based)", i, j, b.declared, b.declared)
		}
		read++
		b.add(i-1, j-1)
	}
	if err := lr.failure(); err != nil {
		return nil, err
	}
	if b.declared < 0 {
		return nil, &ParseError{Name: lr.name, Line: lr.line, Err: ErrSyntax, Detail: "no size line"}
	}
	if read != nnz {
		return nil, &ParseError{Name: lr.name, Line: lr.line, Err: ErrCount,
			Detail: fmt.Sprintf("%d entries, size line declares %d", read, nnz)}
	}
	return b, nil
}

// parseLG reads a Graphs.jl LG file: "nv,ne,kind,name[,...]", then ne
// "u,v" lines. Only the first graph of a multi-graph file is read; any data
// after its ne lines is an error.
func parseLG(lr *lineReader) (*builder, error) {
	b := &builder{declared: -1, base: 1}
	var f [][]byte
	var ne, read int64
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
			if len(f) < 3 {
				return nil, lr.errorf(ErrSyntax, "want header \"nv,ne,kind,name\", got %q", line)
			}
			nv, ok1 := parseInt(f[0])
			n, ok2 := parseInt(f[1])
			kind := string(f[2])
			if !ok1 || !ok2 || nv < 0 || n < 0 || (kind != "u" && kind != "d") {
				return nil, lr.errorf(ErrSyntax, "want header \"nv,ne,kind,name\" with kind u or d, got %q", line)
			}
			if nv >= 1<<32 {
				return nil, lr.errorf(ErrRange, "%d vertices do not fit 32-bit ids", nv)
			}
			b.declared, ne = nv, n
			continue
		}
		if read == ne {
			return nil, lr.errorf(ErrCount, "edge %d, header declares %d (only one graph per file is read)", read+1, ne)
		}
		if len(f) != 2 {
			return nil, lr.errorf(ErrSyntax, "want \"u,v\", got %q", line)
		}
		u, ok1 := parseInt(f[0])
		v, ok2 := parseInt(f[1])
		if !ok1 || !ok2 {
			return nil, lr.errorf(ErrSyntax, "want integer \"u,v\", got %q", line)
		}
		if u < 1 || u > b.declared || v < 1 || v > b.declared {
			return nil, lr.errorf(ErrRange, "edge (%d,%d), nv %d (ids are 1-based)", u, v, b.declared)
		}
		read++
		b.add(u-1, v-1)
	}
	if err := lr.failure(); err != nil {
		return nil, err
	}
	if b.declared < 0 {
		return nil, &ParseError{Name: lr.name, Line: lr.line, Err: ErrSyntax, Detail: "no header line"}
	}
	if read != ne {
		return nil, &ParseError{Name: lr.name, Line: lr.line, Err: ErrCount,
			Detail: fmt.Sprintf("%d edges, header declares %d", read, ne)}
	}
	return b, nil
}

// parseText reads the untyped text stream format: "n m", then m "u v"
// lines with 0-based ids.
func parseText(lr *lineReader) (*builder, error) {
	b := &builder{declared: -1}
	var f [][]byte
	var m, read int64
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
			var n int64
			good := len(f) == 2
			if good {
				var ok1, ok2 bool
				n, ok1 = parseInt(f[0])
				m, ok2 = parseInt(f[1])
				good = ok1 && ok2 && n >= 0 && m >= 0
			}
			if !good {
				return nil, lr.errorf(ErrSyntax, "want header \"vertices edges\", got %q", line)
			}
			if n >= 1<<32 {
				return nil, lr.errorf(ErrRange, "%d vertices do not fit 32-bit ids", n)
			}
			b.declared = n
			continue
		}
		if read == m {
			return nil, lr.errorf(ErrCount, "edge %d, header declares %d", read+1, m)
		}
		if len(f) != 2 {
			return nil, lr.errorf(ErrSyntax, "want \"u v\", got %q", line)
		}
		u, ok1 := parseInt(f[0])
		v, ok2 := parseInt(f[1])
		if !ok1 || !ok2 {
			return nil, lr.errorf(ErrSyntax, "want integer \"u v\", got %q", line)
		}
		if u < 0 || u >= b.declared || v < 0 || v >= b.declared {
			return nil, lr.errorf(ErrRange, "edge (%d,%d), vertices %d (ids are 0-based)", u, v, b.declared)
		}
		read++
		b.add(u, v)
	}
	if err := lr.failure(); err != nil {
		return nil, err
	}
	if b.declared < 0 {
		return nil, &ParseError{Name: lr.name, Line: lr.line, Err: ErrSyntax, Detail: "no header line"}
	}
	if read != m {
		return nil, &ParseError{Name: lr.name, Line: lr.line, Err: ErrCount,
			Detail: fmt.Sprintf("%d edges, header declares %d", read, m)}
	}
	return b, nil
}
