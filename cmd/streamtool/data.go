package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/offline/edgelist"
	"sketchcc/offline/streamgen"

	"sketchcc/internal/cli"
)

// openInput opens the input file at path. Once ctx is done the file is
// closed, which ends a read that blocks on a pipe or FIFO fed slowly; the
// returned func closes it otherwise.
func openInput(ctx context.Context, path string) (*os.File, func(), error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open input: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { in.Close() })
	return in, func() { stop(); in.Close() }, nil
}

// readGraph parses the file at path in format f, until ctx is done. A
// graph of fewer than 2 vertices is an error: a stream needs 2.
func readGraph(ctx context.Context, path string, f edgelist.Format, o edgelist.Options) (*edgelist.Graph, error) {
	in, closeIn, err := openInput(ctx, path)
	if err != nil {
		return nil, err
	}
	defer closeIn()
	g, err := edgelist.Parse(ctx, in, path, f, o)
	if err != nil {
		return nil, err
	}
	if g.Vertices < 2 {
		return nil, fmt.Errorf("%s: %d vertex and no edge: a stream needs at least 2 vertices", path, g.Vertices)
	}
	return g, nil
}

// parseFormatFlag returns the format named by --from and checks that
// --lenient applies to it.
func parseFormatFlag(name string, lenient bool) (edgelist.Format, error) {
	f, err := edgelist.ParseFormat(name)
	if err != nil {
		return 0, usagef("--from=%q: want snap, mtx, lg, gml or text", name)
	}
	if lenient && f != edgelist.Snap {
		return 0, usagef("--lenient applies to --from snap only; %s files declare their size and stay strict", name)
	}
	return f, nil
}

// lenientUsage is the help text of every --lenient flag.
const lenientUsage = "skip lines after the first edge line that do not parse (counted, the first few quoted in the summary) instead of failing; snap input only"

type convertResult struct {
	Input      string `json:"input"`
	Format     string `json:"format"`
	Output     string `json:"output"`
	Map        string `json:"map,omitempty"`
	Vertices   uint32 `json:"vertices"`
	Edges      int    `json:"edges"`
	Components int    `json:"components"`
	edgelist.Stats
	edgelist.Skipped
	// Notes states what was assumed about the input.
	Notes []string `json:"notes,omitempty"`
}

var convertCommand = &command{
	usage: "streamtool convert --from FORMAT IN -o OUT",
	about: `Converts a public edge list into a binary stream that inserts every edge
once, in ascending (src, dst) order. Formats: snap (SNAP/KONECT/CSV "u v
[more]" lines, '#'/'%' comments; ids are unsigned 64-bit labels, a
negative id is an error; lines of words before the first edge line are
skipped and listed in the summary, a line of numbers never), mtx
(MatrixMarket coordinate, 1-based, declared size; without the
%%MatrixMarket banner read as coordinate pattern symmetric, said in
"notes"), lg (Graphs.jl LG, 1-based, declared size), gml (node and edge
lists), text ("n m" then "u v" lines, 0-based). Lines end at LF, CRLF or
a lone CR. Gzip input is detected by its magic bytes. Ids become their
rank among all ids of the file (so 1..n become 0..n-1); OUT.map gets "new
original" lines. Direction is ignored; self-loops and repeated edges are
dropped and counted. A declared vertex count (mtx, lg, text) is kept,
isolated vertices included, up to 2^32-1 (more is an error); memory and
output follow the edges read, not that count: OUT.map then lists only the
vertices that have an edge, and an unlisted vertex v is isolated, id v+1
(v for text). A file that declares vertices and no edges gives a stream
of 0 updates (isolated vertices). Prints a JSON summary with the exact
number of components. Bad input names the file and line and leaves no
output; so does SIGINT or SIGTERM (exit status 1, "interrupted").
`,
	setup: func(fs *pflag.FlagSet) func(context.Context, *env, *pflag.FlagSet) error {
		var from, out string
		var noMap, lenient bool
		fs.StringVar(&from, "from", "", "input format (required): snap, mtx, lg, gml or text")
		fs.StringVarP(&out, "output", "o", "", "binary stream to write (required)")
		fs.BoolVar(&noMap, "no-map", false, "do not write OUTPUT.map")
		fs.BoolVar(&lenient, "lenient", false, lenientUsage)
		return func(ctx context.Context, e *env, fs *pflag.FlagSet) error {
			in, err := oneArg(fs, "input file")
			if err != nil {
				return err
			}
			if out == "" {
				return usagef("--output is required")
			}
			f, err := parseFormatFlag(from, lenient)
			if err != nil {
				return err
			}
			t0 := time.Now()
			g, err := readGraph(ctx, in, f, edgelist.Options{Lenient: lenient})
			if err != nil {
				return err
			}
			e.log.Info("parsed", "input", in, "vertices", g.Vertices, "edges", len(g.Edges),
				"duration", time.Since(t0).Round(time.Millisecond))
			var o outputs
			defer o.abort()
			w, err := o.create(ctx, out)
			if err != nil {
				return err
			}
			if err := streamgen.WriteInserts(w, g.Vertices, g.Edges); err != nil {
				return fmt.Errorf("%s: %w", in, err)
			}
			r := convertResult{Input: in, Format: f.String(), Output: out, Vertices: g.Vertices,
				Edges: len(g.Edges), Components: g.Components(), Stats: g.Stats, Skipped: g.Skipped, Notes: g.Notes}
			warnParse(e, in, g.Stats, g.Skipped, g.Notes)
			mp, err := o.commitWithMap(ctx, out, noMap, g.WriteMap)
			if err != nil {
				return err
			}
			r.Map = mp
			return e.printJSON(r)
		}
	},
}

type snapshotResult struct {
	File     string `json:"file"`
	Vertices uint32 `json:"vertices"`
	streamgen.Snapshot
	HeaderSkipped int64 `json:"header_lines_skipped,omitempty"`
	BadSkipped    int64 `json:"bad_lines_skipped,omitempty"`
	edgelist.Skipped
	Notes []string `json:"notes,omitempty"`
}

type snapshotsResult struct {
	Output     string           `json:"output"`
	Map        string           `json:"map,omitempty"`
	Vertices   uint32           `json:"vertices"`
	Updates    uint64           `json:"updates"`
	Inserts    uint64           `json:"inserts"`
	Deletes    uint64           `json:"deletes"`
	Edges      int              `json:"edges"`
	Components int              `json:"components"`
	Snapshots  []snapshotResult `json:"snapshots"`
}

var snapshotsCommand = &command{
	usage: "streamtool snapshots --from FORMAT A B C ... -o OUT",
	about: `Turns a series of snapshots of one graph (the same id space, for example
the daily as-733 files, given in time order) into one binary stream over
the union of their vertices: the inserts of A's edges, then per step
exactly the deletions and insertions that turn each snapshot into the
next (deletions first, each in ascending order). Ids are relabelled by
rank in the union (mtx, lg and text keep theirs, the union being the
largest declared count); OUT.map gets "new original" lines (for those,
as in convert, only for vertices that have an edge). Prints a JSON
summary with, per snapshot, the update count at its end (after_updates),
its edges and its exact number of components over the union vertex set.
`,
	setup: func(fs *pflag.FlagSet) func(context.Context, *env, *pflag.FlagSet) error {
		var from, out string
		var noMap, lenient bool
		fs.StringVar(&from, "from", "snap", "input format: snap, mtx, lg, gml or text")
		fs.StringVarP(&out, "output", "o", "", "binary stream to write (required)")
		fs.BoolVar(&noMap, "no-map", false, "do not write OUTPUT.map")
		fs.BoolVar(&lenient, "lenient", false, lenientUsage)
		return func(ctx context.Context, e *env, fs *pflag.FlagSet) error {
			if fs.NArg() == 0 {
				return usagef("missing snapshot files")
			}
			if out == "" {
				return usagef("--output is required")
			}
			f, err := parseFormatFlag(from, lenient)
			if err != nil {
				return err
			}
			var gs []*edgelist.Graph
			for _, path := range fs.Args() {
				g, err := readGraph(ctx, path, f, edgelist.Options{Lenient: lenient})
				if err != nil {
					return err
				}
				warnParse(e, path, g.Stats, g.Skipped, g.Notes)
				e.log.Info("parsed", "input", path, "vertices", g.Vertices, "edges", len(g.Edges))
				gs = append(gs, g)
			}
			u, edges, err := edgelist.Union(gs)
			if err != nil {
				return err
			}
			var o outputs
			defer o.abort()
			w, err := o.create(ctx, out)
			if err != nil {
				return err
			}
			v := u.Vertices
			snaps, err := streamgen.Snapshots(w, v, edges)
			if err != nil {
				return err
			}
			r := snapshotsResult{Output: out, Vertices: v}
			for i, s := range snaps {
				r.Snapshots = append(r.Snapshots, snapshotResult{File: fs.Arg(i), Vertices: gs[i].Vertices, Snapshot: s,
					HeaderSkipped: gs[i].Stats.HeaderSkipped, BadSkipped: gs[i].Stats.BadSkipped,
					Skipped: gs[i].Skipped, Notes: gs[i].Notes})
				r.Inserts += uint64(s.Inserted)
				r.Deletes += uint64(s.Deleted)
			}
			final := snaps[len(snaps)-1]
			r.Updates, r.Edges, r.Components = final.AfterUpdates, final.Edges, final.Components
			mp, err := o.commitWithMap(ctx, out, noMap, u.WriteMap)
			if err != nil {
				return err
			}
			r.Map = mp
			return e.printJSON(r)
		}
	},
}

type temporalResult struct {
	Input         string  `json:"input"`
	Output        string  `json:"output"`
	Map           string  `json:"map,omitempty"`
	Window        float64 `json:"window"`
	Lines         int64   `json:"lines"`
	SelfLoops     int64   `json:"self_loops_dropped"`
	HeaderSkipped int64   `json:"header_lines_skipped"`
	BadSkipped    int64   `json:"bad_lines_skipped"`
	edgelist.Skipped
	streamgen.TemporalSummary
}

var temporalCommand = &command{
	usage: "streamtool temporal --window W IN -o OUT",
	about: `Turns timestamped events ("u v t" or "u,v,rating,t": the timestamp is the
last column unless --time-column says otherwise) into a binary stream in
which each edge is inserted at its first event and deleted once more than
W time units pass without another event on it (it comes back at its next
event). Edges whose last event is within W of the last event stay. Events
are taken in time order (sorted stably if the file is not). Ids are
relabelled by rank; OUT.map gets "new original" lines. W may be "inf".
Prints a JSON summary with the final graph's exact components.
`,
	setup: func(fs *pflag.FlagSet) func(context.Context, *env, *pflag.FlagSet) error {
		var from, out string
		var checkpoints []string // accumulates over repeated --checkpoints
		var window float64
		var timeColumn int
		var noMap, lenient bool
		fs.StringVar(&from, "from", "snap", "input format: only snap (SNAP temporal or CSV) is supported")
		fs.Float64Var(&window, "window", -1, "edge lifetime after its last event, in the input's time units (required); inf keeps every edge")
		fs.Lookup("window").DefValue = "0" // required: pflag shows no default for "0"
		fs.IntVar(&timeColumn, "time-column", 0, "1-based column of the timestamp; 0 means the last column")
		fs.StringSliceVar(&checkpoints, "checkpoints", nil, "comma-separated fractions of the events (e.g. 0.25,0.5,0.75) after which to report edges and components; repeat the flag to add more")
		fs.StringVarP(&out, "output", "o", "", "binary stream to write (required)")
		fs.BoolVar(&noMap, "no-map", false, "do not write OUTPUT.map")
		fs.BoolVar(&lenient, "lenient", false, lenientUsage)
		return func(ctx context.Context, e *env, fs *pflag.FlagSet) error {
			in, err := oneArg(fs, "input file")
			if err != nil {
				return err
			}
			var errs []error
			if out == "" {
				errs = append(errs, errors.New("--output is required"))
			}
			if from != "snap" {
				errs = append(errs, fmt.Errorf("--from=%q: only snap is supported for events", from))
			}
			if !(window >= 0) {
				errs = append(errs, errors.New("--window is required and must be >= 0"))
			}
			if timeColumn != 0 && timeColumn < 3 {
				errs = append(errs, fmt.Errorf("--time-column=%d: want 0 (last) or >= 3", timeColumn))
			}
			var fractions []float64
			for _, s := range checkpoints {
				x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
				if err != nil || x < 0 || x > 1 {
					errs = append(errs, fmt.Errorf("--checkpoints: %q is not a fraction in [0, 1]", s))
					continue
				}
				fractions = append(fractions, x)
			}
			if err := errors.Join(errs...); err != nil {
				return cli.Usage(err)
			}
			fin, closeIn, err := openInput(ctx, in)
			if err != nil {
				return err
			}
			ev, err := edgelist.ParseEvents(ctx, fin, in, timeColumn, edgelist.Options{Lenient: lenient})
			closeIn()
			if err != nil {
				return err
			}
			if ev.Vertices < 2 {
				return fmt.Errorf("%s: %d vertex and no edge: a stream needs at least 2 vertices", in, ev.Vertices)
			}
			warnParse(e, in, ev.Stats, ev.Skipped, nil)
			cfg := streamgen.TemporalConfig{Window: window}
			at := map[int]float64{} // checkpoint -> the first fraction that gave it
			for _, x := range fractions {
				k := int(math.Round(x * float64(len(ev.List))))
				if first, ok := at[k]; ok {
					e.log.Warn("--checkpoints: two fractions fall after the same event; reporting once",
						"fractions", fmt.Sprintf("%v,%v", first, x), "events", k)
					continue
				}
				at[k] = x
				cfg.Checkpoints = append(cfg.Checkpoints, k)
			}
			slices.Sort(cfg.Checkpoints)
			var o outputs
			defer o.abort()
			w, err := o.create(ctx, out)
			if err != nil {
				return err
			}
			s, err := streamgen.Temporal(w, ev, cfg)
			if err != nil {
				return fmt.Errorf("%s: %w", in, err)
			}
			r := temporalResult{Input: in, Output: out, Window: window, Lines: ev.Stats.Lines,
				SelfLoops: ev.Stats.SelfLoops, HeaderSkipped: ev.Stats.HeaderSkipped, BadSkipped: ev.Stats.BadSkipped,
				Skipped: ev.Skipped, TemporalSummary: s}
			if math.IsInf(window, 1) {
				r.Window = math.MaxFloat64 // JSON has no infinity
			}
			mp, err := o.commitWithMap(ctx, out, noMap, func(w io.Writer) error { return edgelist.WriteMap(w, ev.Original) })
			if err != nil {
				return err
			}
			r.Map = mp
			return e.printJSON(r)
		}
	},
}

// warnParse logs the lines a parser skipped and what it assumed, which the
// JSON summary holds too, so that they are seen when stdout goes to a file.
func warnParse(e *env, input string, st edgelist.Stats, sk edgelist.Skipped, notes []string) {
	for _, n := range notes {
		e.log.Warn("assumed", "input", input, "note", n)
	}
	if st.HeaderSkipped > 0 {
		e.log.Warn("skipped header lines before the first edge line", "input", input,
			"count", st.HeaderSkipped, "lines", sk.HeaderLines)
	}
	if st.BadSkipped > 0 {
		first := sk.BadLines[0]
		e.log.Warn("--lenient: skipped lines that do not parse", "input", input, "count", st.BadSkipped,
			"first_line", first.Line, "first_text", first.Text, "problem", first.Problem)
	}
}
