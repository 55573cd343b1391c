package edgelist

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"sketchcc/stream"
)

// Event is one timestamped edge event over dense vertex ids.
type Event struct {
	// Edge has Src < Dst.
	Edge stream.Edge
	// Time is the event's timestamp in the input's units.
	Time float64
}

// Events is a list of timestamped edge events over the dense vertex ids
// [0, Vertices), in file order.
type Events struct {
	// Vertices is the number of distinct ids in the file.
	Vertices uint32
	// List holds the events that are not self-loops, in file order.
	List []Event
	// Original[v] is the id vertex v had in the input, ascending.
	Original []uint64
	// Stats counts lines, events (Entries), dropped self-loops and
	// skipped lines. Duplicates stays 0: repeated events are the point of
	// the format.
	Stats Stats
	// Skipped says which lines were skipped.
	Skipped Skipped
}

// ParseEvents reads timestamped events "u v ... t" in the Snap syntax
// (spaces, tabs or commas; '#'/'%' comments; lines of the leading header
// block that hold words are skipped and counted, as for Snap). timeColumn
// is the 1-based column of the timestamp, or 0 for the last column; it must
// be 0 or at least 3. Timestamps are decimal numbers, integer or not. Ids
// are unsigned 64-bit labels, relabelled by rank as for Snap, self-loop ids
// included; self-loop events are dropped and counted. Gzip input is
// decompressed first. Bad input is a *ParseError with its line number.
// ctx stops it as it stops Parse. With o.Lenient, a line after the first
// event that does not parse is skipped, counted and quoted instead of
// failing.
func ParseEvents(ctx context.Context, r io.Reader, name string, timeColumn int, o Options) (*Events, error) {
	if timeColumn != 0 && timeColumn < 3 {
		return nil, fmt.Errorf("%w: time column %d (want 0 for the last, or >= 3)", ErrUnsupported, timeColumn)
	}
	dr, err := Decompressed(r)
	if err != nil {
		return nil, &ParseError{Name: name, Err: err}
	}
	lr := newLineReader(ctx, dr, name)
	var (
		f      [][]byte
		ids    []uint64 // u, v per kept event
		loops  []uint64
		times  []float64
		b      builder // counts and skipped lines
		events bool    // an event line has been read
	)
	for {
		line, fields, ok := lr.record(&b.stats.Lines, f)
		if !ok {
			break
		}
		f = fields
		u, v, t, problem, sentinel := event(f, timeColumn)
		if sentinel != nil {
			switch {
			case !events && hasWord(f) && !hasIDs(f):
				// A header line: not an event, and not an event with a
				// bad timestamp either.
				b.skipHeader(lr.line)
			case o.Lenient && events:
				b.skipBad(lr.line, line, problem)
			default:
				return nil, lr.errorf(sentinel, "%s, in %q", problem, quoteLine(line))
			}
			continue
		}
		events = true
		b.stats.Entries++
		if u == v {
			b.stats.SelfLoops++
			loops = append(loops, u)
			continue
		}
		ids = append(ids, u, v)
		times = append(times, t)
	}
	if err := lr.failure(); err != nil {
		return nil, err
	}
	all := slices.Concat(ids, loops)
	slices.Sort(all)
	all = slices.Clip(slices.Compact(all))
	if len(all) == 0 {
		return nil, &ParseError{Name: name, Err: ErrNoVertices}
	}
	if int64(len(all)) > 1<<32-1 {
		return nil, &ParseError{Name: name, Err: ErrRange,
			Detail: fmt.Sprintf("%d vertices do not fit 32-bit ids", len(all))}
	}
	ev := &Events{Vertices: uint32(len(all)), Original: all, Stats: b.stats, Skipped: b.skipped, List: make([]Event, len(times))}
	for i, t := range times {
		a, _ := slices.BinarySearch(all, ids[2*i])
		b, _ := slices.BinarySearch(all, ids[2*i+1])
		e := &ev.List[i]
		e.Edge.Src, e.Edge.Dst = uint32(min(a, b)), uint32(max(a, b))
		e.Time = t
	}
	return ev, nil
}

// event parses an event line's ids and timestamp; it returns the sentinel
// and a detail when the line is not an event.
func event(f [][]byte, timeColumn int) (u, v uint64, t float64, problem string, sentinel error) {
	col := timeColumn - 1
	if timeColumn == 0 {
		col = len(f) - 1
	}
	if len(f) < 3 || col >= len(f) {
		return 0, 0, 0, fmt.Sprintf("want \"u v ... time\" with the time in column %d", col+1), ErrSyntax
	}
	u, v, problem, sentinel = snapEdge(f)
	if sentinel != nil {
		return 0, 0, 0, problem, sentinel
	}
	t, err := strconv.ParseFloat(string(f[col]), 64)
	if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
		return 0, 0, 0, fmt.Sprintf("bad timestamp %q in column %d", f[col], col+1), ErrSyntax
	}
	return u, v, t, "", nil
}

// hasIDs reports whether the first two fields of f are ids.
func hasIDs(f [][]byte) bool {
	_, _, _, sentinel := snapEdge(f)
	return sentinel == nil
}
