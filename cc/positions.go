package cc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Skip says why Positions left a position out.
type Skip int

const (
	// SkipRepeated is a position given more than once: queried once.
	SkipRepeated Skip = iota + 1
	// SkipZero is position 0: no query comes before the first update.
	SkipZero
	// SkipPastEnd is a position past the end of the stream: the final
	// query answers for it.
	SkipPastEnd
	// SkipNoUpdates is every evenly spaced query of a stream of no
	// updates: the final query answers for its isolated vertices.
	SkipNoUpdates
	// SkipCrowded is evenly spaced queries that outnumber the updates:
	// one query after every update.
	SkipCrowded
)

// Skipped is a position Positions left out, and why; Position is 0 for
// SkipNoUpdates and SkipCrowded, which concern the count of evenly spaced
// queries.
type Skipped struct {
	Position uint64
	Why      Skip
}

// Positions returns Schedule.At for a stream of total updates: the update
// counts in at, or, when at is empty, queries−1 evenly spaced ones; and
// always total; sorted and distinct. skipped lists what it left out, once
// per position, in the order of at.
func Positions(at []uint64, queries int, total uint64) (pos []uint64, skipped []Skipped) {
	times := map[uint64]int{}
	for _, p := range at {
		times[p]++
		switch {
		case times[p] == 2:
			skipped = append(skipped, Skipped{p, SkipRepeated})
		case times[p] > 2:
		case p == 0:
			skipped = append(skipped, Skipped{p, SkipZero})
		case p > total:
			skipped = append(skipped, Skipped{p, SkipPastEnd})
		default:
			pos = append(pos, p)
		}
	}
	if len(at) == 0 {
		switch {
		case queries > 1 && total == 0:
			skipped = append(skipped, Skipped{0, SkipNoUpdates})
		case queries > 1 && uint64(queries) > total:
			skipped = append(skipped, Skipped{0, SkipCrowded})
		}
		for i := 1; i < queries; i++ {
			if p := uint64(float64(total) * float64(i) / float64(queries)); p > 0 {
				pos = append(pos, p)
			}
		}
	}
	pos = append(pos, total)
	slices.Sort(pos)
	return slices.Compact(pos), skipped
}

// Pair is a point query: are U and V connected.
type Pair struct{ U, V uint32 }

// Connected answers p from res's labels.
func (res *Result) Connected(p Pair) bool { return res.Labels[p.U] == res.Labels[p.V] }

// ReadPairsFile reads the point queries of the file at path (ReadPairs).
func ReadPairsFile(path string, vertices uint32) ([]Pair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read point queries: %w", err)
	}
	defer f.Close()
	return ReadPairs(f, path, vertices)
}

// ReadPairs reads point queries from r, one "u v" line each (blank lines
// and # comments allowed), with ids below vertices. Its errors name the
// input as name and the line.
func ReadPairs(r io.Reader, name string, vertices uint32) ([]Pair, error) {
	var out []Pair
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		if len(fs) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"u v\", got %q", name, line, sc.Text())
		}
		u, err1 := strconv.ParseUint(fs[0], 10, 32)
		v, err2 := strconv.ParseUint(fs[1], 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: want \"u v\", got %q", name, line, sc.Text())
		}
		if u >= uint64(vertices) || v >= uint64(vertices) {
			return nil, fmt.Errorf("%s:%d: vertex out of range: (%d,%d), stream has %d vertices",
				name, line, u, v, vertices)
		}
		out = append(out, Pair{uint32(u), uint32(v)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return out, nil
}
