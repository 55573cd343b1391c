package streamgen

import (
	"cmp"
	"fmt"
	"io"
	"iter"
	"slices"

	"sketchcc/dsu"
	"sketchcc/offline/edgelist"
	"sketchcc/stream"
)

// WriteInserts writes a binary stream over [0, vertices) that inserts each
// of edges once, in the given order. Edges must be distinct, with
// Src != Dst, both < vertices. No edges is a stream of 0 updates: vertices
// isolated vertices.
func WriteInserts(w io.Writer, vertices uint32, edges []stream.Edge) error {
	return writeUpdates(w, stream.Header{Vertices: vertices, Updates: uint64(len(edges))},
		func(yield func(stream.Update) bool) {
			for _, e := range edges {
				if !yield(stream.Update{Type: stream.Insert, Edge: e}) {
					return
				}
			}
		})
}

// writeUpdates writes a binary stream of header h and updates, which
// must be h.Updates long.
func writeUpdates(w io.Writer, h stream.Header, updates iter.Seq[stream.Update]) error {
	sw, err := stream.NewWriter(w, h)
	if err != nil {
		return err
	}
	for u := range updates {
		if err := sw.Write(u); err != nil {
			return err
		}
	}
	return sw.Close()
}

// Snapshot describes the stream at the end of one snapshot.
type Snapshot struct {
	// AfterUpdates is the number of updates from the start of the stream to
	// the end of this snapshot's differences.
	AfterUpdates uint64 `json:"after_updates"`
	// Edges is the number of edges of the snapshot.
	Edges int `json:"edges"`
	// Inserted and Deleted count the updates that turn the previous
	// snapshot (the empty graph for the first) into this one.
	Inserted int `json:"inserted"`
	Deleted  int `json:"deleted"`
	// Components is the number of connected components of the snapshot over
	// the whole vertex set of the stream, isolated vertices included.
	Components int `json:"components"`
}

// Snapshots writes a binary stream over [0, vertices) that inserts the
// edges of snapshots[0] and then, for each next snapshot, deletes the edges
// of the previous one it lacks and inserts its new edges: after the
// updates of step i the graph is exactly snapshots[i]. Within a step,
// deletions come first, each group in ascending edge order. Each snapshot
// must hold distinct edges with Src < Dst, sorted by (Src, Dst), as
// edgelist.Union returns them. It returns one Snapshot per snapshot;
// snapshots without edges give a stream of 0 updates.
func Snapshots(w io.Writer, vertices uint32, snapshots [][]stream.Edge) ([]Snapshot, error) {
	cmpEdge := func(a, b stream.Edge) int {
		return cmp.Or(cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst))
	}
	for i, s := range snapshots {
		for j, e := range s {
			if e.Src >= e.Dst || e.Dst >= vertices || (j > 0 && cmpEdge(s[j-1], e) >= 0) {
				return nil, fmt.Errorf("streamgen: snapshot %d: edge %d %v is not canonical, in range and in order", i, j, e)
			}
		}
	}
	var total uint64
	out := make([]Snapshot, len(snapshots))
	// diff calls del and ins for the edges of prev not in next and of next
	// not in prev.
	diff := func(prev, next []stream.Edge, del, ins func(stream.Edge)) {
		i, j := 0, 0
		for i < len(prev) || j < len(next) {
			switch {
			case j == len(next) || (i < len(prev) && cmpEdge(prev[i], next[j]) < 0):
				del(prev[i])
				i++
			case i == len(prev) || cmpEdge(prev[i], next[j]) > 0:
				ins(next[j])
				j++
			default:
				i++
				j++
			}
		}
	}
	var prev []stream.Edge
	for k, s := range snapshots {
		diff(prev, s, func(stream.Edge) { out[k].Deleted++ }, func(stream.Edge) { out[k].Inserted++ })
		total += uint64(out[k].Inserted + out[k].Deleted)
		out[k].AfterUpdates = total
		out[k].Edges = len(s)
		out[k].Components = edgelist.Components(vertices, s)
		prev = s
	}
	sw, err := stream.NewWriter(w, stream.Header{Vertices: vertices, Updates: total})
	if err != nil {
		return nil, err
	}
	var werr error
	write := func(t stream.UpdateType) func(stream.Edge) {
		return func(e stream.Edge) {
			if werr == nil {
				werr = sw.Write(stream.Update{Type: t, Edge: e})
			}
		}
	}
	prev = nil
	for _, s := range snapshots {
		diff(prev, s, write(stream.Delete), func(stream.Edge) {})
		diff(prev, s, func(stream.Edge) {}, write(stream.Insert))
		prev = s
	}
	if werr != nil {
		return nil, werr
	}
	return out, sw.Close()
}

// TemporalConfig configures Temporal.
type TemporalConfig struct {
	// Window is the lifetime of an edge after its last event, in the
	// events' time units: an edge is deleted once more than Window passes
	// without an event on it. +Inf keeps every edge.
	Window float64
	// Checkpoints lists event counts k (in [0, events]) after which to
	// report the state of the stream, in any order.
	Checkpoints []int
}

// Checkpoint is the state of a temporal stream after its first Events
// events (in time order).
type Checkpoint struct {
	Events       int    `json:"events"`
	AfterUpdates uint64 `json:"after_updates"`
	Edges        int    `json:"edges"`
	Components   int    `json:"components"`
}

// TemporalSummary describes a stream written by Temporal.
type TemporalSummary struct {
	Vertices uint32 `json:"vertices"`
	// Events is the number of events used (self-loops excluded).
	Events  int    `json:"events"`
	Updates uint64 `json:"updates"`
	Inserts uint64 `json:"inserts"`
	Deletes uint64 `json:"deletes"`
	// Edges and Components describe the final graph: the edges whose last
	// event lies within Window of the last event of the input.
	Edges       int          `json:"edges"`
	Components  int          `json:"components"`
	Checkpoints []Checkpoint `json:"checkpoints,omitempty"`
}

// Temporal writes a binary stream over the vertices of ev in which each
// edge is inserted at its first event and deleted once more than
// cfg.Window time units pass without another event on it; it is inserted
// again at its next event. Events are taken in time order (stably sorted,
// so ties keep file order); a deletion is placed just before the first
// event that comes more than Window after the edge's last event. Edges whose
// last event is within Window of the last event stay. Events that are all
// self-loops give a stream of 0 updates.
func Temporal(w io.Writer, ev *edgelist.Events, cfg TemporalConfig) (TemporalSummary, error) {
	if !(cfg.Window >= 0) {
		return TemporalSummary{}, &FieldError{"Window", cfg.Window, ">= 0"}
	}
	for _, k := range cfg.Checkpoints {
		if k < 0 || k > len(ev.List) {
			return TemporalSummary{}, &FieldError{"Checkpoints", k, fmt.Sprintf("[0, %d], the number of events", len(ev.List))}
		}
	}
	events := ev.List
	if !slices.IsSortedFunc(events, func(a, b edgelist.Event) int { return cmp.Compare(a.Time, b.Time) }) {
		events = slices.Clone(events)
		slices.SortStableFunc(events, func(a, b edgelist.Event) int { return cmp.Compare(a.Time, b.Time) })
	}
	// Dense edge ids: rank among the distinct edges.
	keys := make([]uint64, len(events))
	for i, e := range events {
		keys[i] = uint64(e.Edge.Src)<<32 | uint64(e.Edge.Dst)
	}
	distinct := slices.Clone(keys)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	last := make([]float64, len(distinct))
	present := make([]bool, len(distinct))

	type pending struct {
		edge int
		time float64
	}
	var queue []pending // one entry per event, in time order
	var head int
	var updates []stream.Update
	edges := 0
	s := TemporalSummary{Vertices: ev.Vertices, Events: len(events)}
	checkpoint := func(k int) {
		for _, c := range cfg.Checkpoints {
			if c != k {
				continue
			}
			s.Checkpoints = append(s.Checkpoints, Checkpoint{Events: k,
				AfterUpdates: uint64(len(updates)), Edges: edges, Components: components(ev.Vertices, distinct, present)})
		}
	}
	edgeOf := func(i int) stream.Edge {
		return stream.Edge{Src: uint32(distinct[i] >> 32), Dst: uint32(distinct[i])}
	}
	checkpoint(0)
	for k, e := range events {
		for head < len(queue) && queue[head].time+cfg.Window < e.Time {
			p := queue[head]
			head++
			if present[p.edge] && last[p.edge] == p.time {
				present[p.edge] = false
				edges--
				updates = append(updates, stream.Update{Type: stream.Delete, Edge: edgeOf(p.edge)})
			}
		}
		if head > len(queue)/2 && head > 1024 {
			queue = append(queue[:0], queue[head:]...)
			head = 0
		}
		id, _ := slices.BinarySearch(distinct, keys[k])
		if !present[id] {
			present[id] = true
			edges++
			updates = append(updates, stream.Update{Type: stream.Insert, Edge: edgeOf(id)})
		}
		last[id] = e.Time
		queue = append(queue, pending{id, e.Time})
		checkpoint(k + 1)
	}
	slices.SortFunc(s.Checkpoints, func(a, b Checkpoint) int { return cmp.Compare(a.Events, b.Events) })
	s.Updates = uint64(len(updates))
	for _, u := range updates {
		if u.Type == stream.Insert {
			s.Inserts++
		} else {
			s.Deletes++
		}
	}
	s.Edges = edges
	s.Components = components(ev.Vertices, distinct, present)
	return s, writeUpdates(w, stream.Header{Vertices: ev.Vertices, Updates: s.Updates}, slices.Values(updates))
}

// components returns the number of connected components of the graph on
// [0, vertices) whose edges are the keys Src<<32|Dst of distinct that
// present marks.
func components(vertices uint32, distinct []uint64, present []bool) int {
	d := dsu.New(vertices)
	for i, p := range present {
		if p {
			d.Union(uint32(distinct[i]>>32), uint32(distinct[i]))
		}
	}
	return d.Sets()
}
