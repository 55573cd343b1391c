package edgelist

import (
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
	Original []int64
	// Stats counts lines, events (Entries) and dropped self-loops.
	// Duplicates stays 0: repeated events are the point of the format.
	Stats Stats
}

// ParseEvents reads timestamped events "u v ... t" in the Snap syntax
// (spaces, tabs or commas; '#'/'%' comments; a header line of words is
// skipped). timeColumn is the 1-based column of the timestamp, or 0 for the
// last column; it must be 0 or at least 3. Timestamps are decimal numbers,
// integer or not. Ids are relabelled by rank as for Snap, self-loop ids
// included; self-loop events are dropped and counted. Gzip input is
// decompressed first. Bad input is a *ParseError with its line number.
func ParseEvents(r io.Reader, name string, timeColumn int) (*Events, error) {
	if timeColumn != 0 && timeColumn < 3 {
		return nil, fmt.Errorf("%w: time column %d (want 0 for the last, or >= 3)", ErrUnsupported, timeColumn)
	}
	dr, err := Decompressed(r)
	if err != nil {
		return nil, &ParseError{Name: name, Err: err}
	}
	lr := newLineReader(dr, name)
	var (
		f     [][]byte
		ids   []int64 // u, v per kept event, then self-loop ids
		loops []int64
		times []float64
		st    Stats
		first = true
	)
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		st.Lines++
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
				continue
			}
		}
		col := timeColumn - 1
		if timeColumn == 0 {
			col = len(f) - 1
		}
		if len(f) < 3 || col >= len(f) {
			return nil, lr.errorf(ErrSyntax, "want \"u v ... time\" with the time in column %d, got %q",
				col+1, line)
		}
		u, ok1 := parseInt(f[0])
		v, ok2 := parseInt(f[1])
		if !ok1 || !ok2 {
			return nil, lr.errorf(ErrSyntax, "want integer ids \"u v ... time\", got %q", line)
		}
		t, err := strconv.ParseFloat(string(f[col]), 64)
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, lr.errorf(ErrSyntax, "bad timestamp %q in column %d", f[col], col+1)
		}
		st.Entries++
		if u == v {
			st.SelfLoops++
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
	ev := &Events{Vertices: uint32(len(all)), Original: all, Stats: st, List: make([]Event, len(times))}
	for i, t := range times {
		a, _ := slices.BinarySearch(all, ids[2*i])
		b, _ := slices.BinarySearch(all, ids[2*i+1])
		e := &ev.List[i]
		e.Edge.Src, e.Edge.Dst = uint32(min(a, b)), uint32(max(a, b))
		e.Time = t
	}
	return ev, nil
}
