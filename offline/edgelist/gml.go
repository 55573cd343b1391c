package edgelist

import (
	"fmt"
	"slices"
)

// maxGMLDepth bounds list nesting so that a hostile file cannot recurse
// without limit.
const maxGMLDepth = 64

// gmlToken is one token: a '[' or ']', a quoted string, or a bare word
// (key or number).
type gmlToken struct {
	text   []byte
	quoted bool
	line   int64
}

// gmlLexer splits lines into tokens. Quoted strings may span lines and
// '#' starts a comment that runs to the end of the line.
type gmlLexer struct {
	lr    *lineReader
	line  []byte
	pos   int
	lines int64
	str   []byte // scratch for a quoted string that spans lines
}

// next returns the next token, ok = false at the end of input.
func (x *gmlLexer) next() (gmlToken, bool, error) {
	for {
		for x.pos < len(x.line) {
			c := x.line[x.pos]
			switch {
			case c == ' ' || c == '\t' || c == '\r':
				x.pos++
			case c == '#':
				x.pos = len(x.line)
			case c == '[' || c == ']':
				x.pos++
				return gmlToken{text: x.line[x.pos-1 : x.pos], line: x.lr.line}, true, nil
			case c == '"':
				return x.quoted()
			default:
				start := x.pos
				for x.pos < len(x.line) {
					c := x.line[x.pos]
					if c == ' ' || c == '\t' || c == '\r' || c == '[' || c == ']' || c == '"' {
						break
					}
					x.pos++
				}
				return gmlToken{text: x.line[start:x.pos], line: x.lr.line}, true, nil
			}
		}
		line, ok := x.lr.next()
		if !ok {
			return gmlToken{}, false, x.lr.failure()
		}
		x.lines++
		x.line, x.pos = line, 0
	}
}

func (x *gmlLexer) quoted() (gmlToken, bool, error) {
	startLine := x.lr.line
	x.pos++ // opening quote
	x.str = x.str[:0]
	for {
		for x.pos < len(x.line) {
			c := x.line[x.pos]
			x.pos++
			if c == '"' {
				return gmlToken{text: x.str, quoted: true, line: startLine}, true, nil
			}
			x.str = append(x.str, c)
		}
		line, ok := x.lr.next()
		if !ok {
			if err := x.lr.failure(); err != nil {
				return gmlToken{}, false, err
			}
			return gmlToken{}, false, &ParseError{Name: x.lr.name, Line: startLine, Err: ErrSyntax,
				Detail: "string not closed before the end of the file"}
		}
		x.lines++
		x.str = append(x.str, '\n')
		x.line, x.pos = line, 0
	}
}

// gmlParser reads "key value" pairs where a value is a word, a string or
// a bracketed list of pairs.
type gmlParser struct {
	x *gmlLexer
}

// token returns the next token; its text is valid until the next call.
func (p *gmlParser) token() (gmlToken, bool, error) { return p.x.next() }

func (p *gmlParser) errAt(line int64, format string, args ...any) error {
	return &ParseError{Name: p.x.lr.name, Line: line, Err: ErrSyntax, Detail: fmt.Sprintf(format, args...)}
}

// gmlPair is one key with a scalar value.
type gmlPair struct {
	key   string
	value gmlToken
	line  int64
}

// pairs reads "key value" pairs until a closing ']' (depth > 0) or the end
// of input (depth 0). For a list value, onList is called to consume it; if
// onList is nil the list is skipped.
func (p *gmlParser) pairs(depth int, onPair func(gmlPair) error, onList func(key string, depth int) error) error {
	if depth > maxGMLDepth {
		t, _, _ := p.token()
		return p.errAt(t.line, "lists nested deeper than %d", maxGMLDepth)
	}
	for {
		k, ok, err := p.token()
		if err != nil {
			return err
		}
		if !ok {
			if depth > 0 {
				return p.errAt(p.x.lr.line, "list not closed before the end of the file")
			}
			return nil
		}
		if !k.quoted && string(k.text) == "]" {
			if depth == 0 {
				return p.errAt(k.line, "unexpected \"]\"")
			}
			return nil
		}
		if k.quoted || string(k.text) == "[" {
			return p.errAt(k.line, "want a key, got %q", k.text)
		}
		key := string(k.text)
		v, ok, err := p.token()
		if err != nil {
			return err
		}
		if !ok {
			return p.errAt(k.line, "key %q has no value", key)
		}
		if !v.quoted && string(v.text) == "]" {
			return p.errAt(v.line, "key %q has no value", key)
		}
		if !v.quoted && string(v.text) == "[" {
			if onList != nil {
				err = onList(key, depth+1)
			} else {
				err = p.pairs(depth+1, nil, nil)
			}
			if err != nil {
				return err
			}
			continue
		}
		if onPair != nil {
			if err := onPair(gmlPair{key: key, value: v, line: k.line}); err != nil {
				return err
			}
		}
	}
}

// gmlGraph is what the graph list declares: node ids and the edges
// between them, in node ids, with the line of each edge block.
type gmlGraph struct {
	ids       []uint64
	edges     []uint64 // source, target pairs
	edgeLines []int64
}

// uint returns pr's value as an unsigned integer, or an error.
func (p *gmlParser) uint(pr gmlPair) (uint64, error) {
	n, ok := parseUint(pr.value.text)
	if pr.value.quoted || !ok {
		return 0, p.errAt(pr.line, "%s: want an unsigned integer, got %q", pr.key, pr.value.text)
	}
	return n, nil
}

// block reads the list of a kind block (node, edge) and returns the
// unsigned values of keys, each required once, and the line the block
// starts at. Other keys are ignored.
func (p *gmlParser) block(kind string, depth int, keys ...string) ([]uint64, int64, error) {
	vals := make([]uint64, len(keys))
	seen := make([]bool, len(keys))
	line := p.x.lr.line
	err := p.pairs(depth, func(pr gmlPair) error {
		for i, k := range keys {
			if pr.key == k {
				if seen[i] {
					return p.errAt(pr.line, "%s has two %q keys", kind, k)
				}
				n, err := p.uint(pr)
				if err != nil {
					return err
				}
				vals[i], seen[i] = n, true
			}
		}
		return nil
	}, nil)
	if err != nil {
		return nil, 0, err
	}
	for i, k := range keys {
		if !seen[i] {
			return nil, 0, p.errAt(line, "%s without %q", kind, k)
		}
	}
	return vals, line, nil
}

// graph reads the list of a graph block into g: its node and edge
// blocks; other lists are skipped.
func (p *gmlParser) graph(depth int, g *gmlGraph) error {
	return p.pairs(depth, nil, func(key string, depth int) error {
		switch key {
		case "node":
			v, _, err := p.block("node", depth, "id")
			if err != nil {
				return err
			}
			g.ids = append(g.ids, v[0])
		case "edge":
			v, line, err := p.block("edge", depth, "source", "target")
			if err != nil {
				return err
			}
			g.edges = append(g.edges, v[0], v[1])
			g.edgeLines = append(g.edgeLines, line)
		default:
			return p.pairs(depth, nil, nil)
		}
		return nil
	})
}

// parseGML reads the first "graph [ ... ]" list of a GML file.
func parseGML(lr *lineReader) (*builder, error) {
	p := &gmlParser{x: &gmlLexer{lr: lr}}
	b := &builder{declared: -1}
	var g gmlGraph
	found := false
	err := p.pairs(0, nil, func(key string, depth int) error {
		if key != "graph" || found {
			return p.pairs(depth, nil, nil)
		}
		found = true
		return p.graph(depth, &g)
	})
	b.stats.Lines = p.x.lines
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &ParseError{Name: lr.name, Err: ErrSyntax, Detail: "no \"graph [ ... ]\" list"}
	}
	// Node ids in ascending order become 0..n-1.
	order := slices.Clone(g.ids)
	slices.Sort(order)
	for i := 1; i < len(order); i++ {
		if order[i] == order[i-1] {
			return nil, &ParseError{Name: lr.name, Err: ErrSyntax,
				Detail: fmt.Sprintf("node id %d declared twice", order[i])}
		}
	}
	b.declared = int64(len(order))
	b.original = order
	if len(order) == 0 {
		b.original = nil
	}
	for i := 0; i < len(g.edges); i += 2 {
		s, okS := slices.BinarySearch(order, g.edges[i])
		t, okT := slices.BinarySearch(order, g.edges[i+1])
		if !okS || !okT {
			bad := g.edges[i]
			if okS {
				bad = g.edges[i+1]
			}
			return nil, &ParseError{Name: lr.name, Line: g.edgeLines[i/2], Err: ErrRange,
				Detail: fmt.Sprintf("edge names node %d, which is not declared", bad)}
		}
		b.add(uint64(s), uint64(t))
	}
	return b, nil
}
