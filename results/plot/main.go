// Command plot redraws the PNG plots under results/ from the dated
// Markdown tables there (the newest of each kind):
//
//		go run ./results/plot [--dir results]
//
//	  - ingestion-vs-workers.png, from cluster-*.md: updates/s against
//	    workers, measured on loopback, a naive projection to an EC2 fleet,
//	    and Landscape's published curve;
//	  - query-latency.png, from queries-*.md: flush and CC latency against
//	    queries per stream;
//	  - peak-rss-vs-vertices.png, from ingest-*.md: peak RSS and sketch
//	    bytes against vertices.
//
// Legends go below the data, never over a point. Each PNG carries, in
// iTXt chunks, the text of what it shows (series, points, axes) and the
// toolchain that drew it; TestPlotsCurrent fails when a committed plot is
// not what the committed tables give.
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"sketchcc/internal/cli"
)

func main() {
	os.Exit(cli.ExitCode("plot", run(os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("plot", pflag.ContinueOnError)
	fs.SetOutput(cli.UsageOutput(args, stdout, stderr))
	dir := fs.String("dir", "results", "directory of the dated tables and of the plots")
	var version bool
	var level slog.Level
	var format cli.LogFormat
	cli.VersionVar(fs, &version)
	cli.LevelVar(fs, &level, slog.LevelInfo)
	cli.LogFormatVar(fs, &format)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return cli.Usage(err)
	}
	if version {
		return cli.PrintVersion(stdout, "plot")
	}
	log := cli.NewLogger(stderr, format, level)
	return drawAll(*dir, *dir, log)
}

// plots are the files the command writes, each with the tables it reads
// (rssPlot reads every ingest-kron*.md).
var plots = []struct {
	pattern, out string
	draw         func(*table) (*figure, error)
}{
	{"cluster-*.md", "ingestion-vs-workers.png", ingestionPlot},
	{"queries-*.md", "query-latency.png", latencyPlot},
	{"ingest-kron*.md", "peak-rss-vs-vertices.png", nil},
}

// drawAll draws every plot from the tables in dir into outDir. It draws
// what it can and returns the errors of the others, joined.
func drawAll(dir, outDir string, log *slog.Logger) error {
	var errs []error
	for _, p := range plots {
		var f *figure
		var src string
		var err error
		if p.draw == nil {
			f, src, err = rssPlot(dir)
		} else {
			f, src, err = drawNewest(dir, p.pattern, p.draw)
		}
		if err == nil {
			err = save(f, filepath.Join(outDir, p.out))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.out, err))
			continue
		}
		log.Info("wrote a plot", "file", filepath.Join(outDir, p.out), "tables", src)
	}
	return errors.Join(errs...)
}

func drawNewest(dir, pattern string, draw func(*table) (*figure, error)) (*figure, string, error) {
	f, err := newest(dir, pattern)
	if err != nil {
		return nil, "", err
	}
	ts, err := readTables(f)
	if err != nil {
		return nil, "", err
	}
	if len(ts) == 0 {
		return nil, "", fmt.Errorf("%s holds no table", f)
	}
	p, err := draw(ts[0])
	return p, f, err
}

// save writes f as a PNG at path that carries f.describe() and the
// renderer, which TestPlotsCurrent compares with a fresh drawing.
func save(f *figure, path string) error {
	b, err := f.png()
	if err != nil {
		return err
	}
	return os.WriteFile(path, withText(b, keyDescription, f.describe(), keyRenderer, renderer()), 0o644)
}

// groupBy collects (x, y) points per key over t's rows; keep filters rows.
func groupBy(t *table, key func([]string) string, x, y func([]string) (float64, error), keep func([]string) bool) (map[string]plotter.XYs, []string, error) {
	pts := map[string]plotter.XYs{}
	var order []string
	for _, r := range t.rows {
		if keep != nil && !keep(r) {
			continue
		}
		xv, err := x(r)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", t.file, err)
		}
		yv, err := y(r)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", t.file, err)
		}
		k := key(r)
		if _, ok := pts[k]; !ok {
			order = append(order, k)
		}
		pts[k] = append(pts[k], plotter.XY{X: xv, Y: yv})
	}
	return pts, order, nil
}

// median merges the points of equal x into their median y.
func median(xys plotter.XYs) plotter.XYs {
	byX := map[float64][]float64{}
	for _, p := range xys {
		byX[p.X] = append(byX[p.X], p.Y)
	}
	var out plotter.XYs
	for _, x := range slices.Sorted(func(yield func(float64) bool) {
		for x := range byX {
			if !yield(x) {
				return
			}
		}
	}) {
		ys := byX[x]
		slices.Sort(ys)
		out = append(out, plotter.XY{X: x, Y: ys[len(ys)/2]})
	}
	return out
}

func logAxes(p *plot.Plot, x, y bool) {
	if x {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, roundedLogTicks{}
	}
	if y {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, roundedLogTicks{}
	}
	p.Add(plotter.NewGrid())
}

// roundedLogTicks are plot.LogTicks labelled with at most 3 significant
// digits, so that a power of ten the ticker computed inexactly reads 1e-05,
// not 9.999999999999999e-06 (and 1000 reads 1000).
type roundedLogTicks struct{}

func (roundedLogTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.LogTicks{Prec: -1}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			v, _ := strconv.ParseFloat(strconv.FormatFloat(ts[i].Value, 'g', 3, 64), 64)
			ts[i].Label = strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	return ts
}

// Landscape's published scaling (Tench et al., ALENEX 2025): 1.73 M
// updates/s with 16 worker processes (one 16-core machine) to 37.07 M/s
// with 352 (22 machines), about 1.7 M/s per machine, and 332 M/s with 40
// c5.4xlarge workers after its optimisations.
var (
	landscapeEarly = plotter.XYs{{X: 1, Y: 1.73e6}, {X: 22, Y: 37.07e6}}
	landscapeFinal = plotter.XYs{{X: 40, Y: 332e6}}
)

// Projection terms, from the instances' published specifications
// (https://aws.amazon.com/ec2/instance-types/c5/): a c5n.9xlarge main
// node has 36 vCPUs and 50 Gbit/s of network, a c5.4xlarge worker 16
// vCPUs and up to 10 Gbit/s.
const (
	mainVCPUs      = 36
	workerVCPUs    = 16
	mainNICBytes   = 50e9 / 8
	workerNICBytes = 10e9 / 8
)

// ingestionPlot draws updates/s against workers from a cluster table:
// the medians measured on loopback per stream, the local-only rate as the
// 0-worker reference, and a projection to N c5.4xlarge workers and a
// c5n.9xlarge main node from the same rows: the least of 36 × the
// local-only rate per core of this 2-core machine, N × 16 × the rate with
// one 1-thread worker, N × a worker's network bytes/s and the main node's
// network bytes/s, both divided by the measured network bytes per update.
func ingestionPlot(t *table) (*figure, error) {
	idx, err := t.cols("stream", "setup", "updates/s", "network B/update")
	if err != nil {
		return nil, err
	}
	si, wi, ri, bi := idx[0], idx[1], idx[2], idx[3]
	bytesPerUpdate := 0.0
	for _, r := range t.rows {
		if b, err := number(r[bi]); err == nil && b > bytesPerUpdate {
			bytesPerUpdate = b
		}
	}
	if bytesPerUpdate == 0 {
		return nil, fmt.Errorf("%s: no network bytes per update", t.file)
	}
	workers := func(r []string) (float64, error) {
		if r[wi] == "local only" {
			return 0, nil
		}
		var n int
		if _, err := fmt.Sscanf(r[wi], "1 main + %d", &n); err != nil {
			return 0, fmt.Errorf("setup %q: want \"local only\" or \"1 main + N workers\"", r[wi])
		}
		return float64(n), nil
	}
	pts, streams, err := groupBy(t, func(r []string) string { return r[si] }, workers,
		func(r []string) (float64, error) { return number(r[ri]) }, nil)
	if err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text = "Ingestion rate against workers"
	p.X.Label.Text = "workers (measured: loopback processes, 1 thread each; projected: c5.4xlarge)"
	p.Y.Label.Text = "updates/s"
	logAxes(p, true, true)
	p.Y.Min, p.X.Max = 1e6, 64
	// The worker counts of the measurements and projections, not only
	// the powers of ten.
	p.X.Tick.Marker = plot.ConstantTicks(workerTicks)
	var ss, projs []series
	for _, s := range streams {
		m := median(pts[s])
		var measured, proj plotter.XYs
		var local, one float64
		for _, pt := range m {
			switch pt.X {
			case 0:
				local = pt.Y
			default:
				if pt.X == 1 {
					one = pt.Y
				}
				measured = append(measured, pt)
			}
		}
		if len(measured) == 0 {
			return nil, fmt.Errorf("%s: no cluster rows for %s", t.file, s)
		}
		ss = append(ss, series{s + " measured (2-core box)", measured})
		if local > 0 && one > 0 {
			for _, n := range projectedWorkers {
				proj = append(proj, plotter.XY{X: n, Y: min(mainVCPUs*local/2, n*workerVCPUs*one,
					n*workerNICBytes/bytesPerUpdate, mainNICBytes/bytesPerUpdate)})
			}
			projs = append(projs, series{s + " projected on EC2", proj})
		}
	}
	ss = append(ss, mergeClose(projs, 0.05)...)
	ss = append(ss, series{"Landscape (1.7 M/s per machine)", landscapeEarly}, series{"Landscape, 40 × c5.4xlarge", landscapeFinal})
	return newFigure(p, ss)
}

// projectedWorkers are the fleet sizes the projection is drawn at.
var projectedWorkers = []float64{1, 2, 4, 8, 16, 40, 64}

// workerTicks label the ingestion plot's x axis at projectedWorkers.
var workerTicks = func() []plot.Tick {
	var ts []plot.Tick
	for _, n := range projectedWorkers {
		ts = append(ts, plot.Tick{Value: n, Label: strconv.FormatFloat(n, 'g', -1, 64)})
	}
	return ts
}()

// mergeClose merges the projections (named "STREAM projected on EC2")
// that lie within tol of the group's first at every point into one
// series, drawn at the lowest of their values, so that lines which would
// hide each other are one line named for every stream in it.
func mergeClose(projs []series, tol float64) []series {
	var groups [][]series
	close := func(a, b plotter.XYs) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i].X != b[i].X || math.Abs(a[i].Y-b[i].Y) > tol*max(a[i].Y, b[i].Y) {
				return false
			}
		}
		return true
	}
	for _, p := range projs {
		i := slices.IndexFunc(groups, func(g []series) bool { return close(g[0].pts, p.pts) })
		if i < 0 {
			groups = append(groups, []series{p})
			continue
		}
		groups[i] = append(groups[i], p)
	}
	var out []series
	for _, g := range groups {
		if len(g) == 1 {
			out = append(out, g[0])
			continue
		}
		var streams []string
		pts := slices.Clone(g[0].pts)
		for _, s := range g {
			streams = append(streams, strings.TrimSuffix(s.name, " projected on EC2"))
			for i := range pts {
				pts[i].Y = min(pts[i].Y, s.pts[i].Y)
			}
		}
		out = append(out, series{fmt.Sprintf("%s projected on EC2 (within %.0f%%)", strings.Join(streams, ", "), 100*tol), pts})
	}
	return out
}

// latencyPlot draws the median flush and CC latency against queries per
// stream (mid-stream queries + the final one), greedy on.
func latencyPlot(t *table) (*figure, error) {
	idx, err := t.cols("stream", "queries during stream", "greedy", "flush s", "CC s")
	if err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text = "Query latency against queries per stream"
	p.X.Label.Text = "queries per stream"
	p.Y.Label.Text = "seconds per query (median)"
	logAxes(p, true, true)
	var ss []series
	for _, phase := range []struct {
		name string
		col  int
	}{{"flush", idx[3]}, {"CC", idx[4]}} {
		pts, streams, err := groupBy(t, func(r []string) string { return r[idx[0]] },
			func(r []string) (float64, error) { k, err := number(r[idx[1]]); return k + 1, err },
			func(r []string) (float64, error) { return number(r[phase.col]) },
			// A zero median (no wait at all) has no place on the log
			// axis: that point is left out of its series.
			func(r []string) bool {
				v, err := number(r[phase.col])
				return r[idx[2]] == "on" && (err != nil || v > 0)
			})
		if err != nil {
			return nil, err
		}
		for _, s := range streams {
			ss = append(ss, series{s + " " + phase.name, median(pts[s])})
		}
	}
	if len(ss) == 0 {
		return nil, fmt.Errorf("%s: no rows with greedy on", t.file)
	}
	return newFigure(p, ss)
}

// rssPlot draws peak RSS and sketch bytes against vertices from every
// ingest-kron*.md table, one series per batch factor (run medians).
func rssPlot(dir string) (*figure, string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "ingest-kron*.md"))
	if err != nil || len(files) == 0 {
		return nil, "", fmt.Errorf("no table ingest-kron*.md in %s", dir)
	}
	slices.Sort(files)
	rss := map[string]plotter.XYs{}
	var factors []string
	var sketch plotter.XYs
	for _, f := range files {
		ts, err := readTables(f)
		if err != nil {
			return nil, "", err
		}
		for _, t := range ts {
			idx, err := t.cols("stream", "batch factor", "run", "peak RSS", "sketch bytes")
			if err != nil {
				return nil, "", err
			}
			for _, r := range t.rows {
				if r[idx[2]] != "median" {
					continue
				}
				v, ok := kronVertices(r[idx[0]])
				if !ok {
					continue
				}
				peak, err := number(r[idx[3]])
				if err != nil {
					return nil, "", fmt.Errorf("%s: %w", f, err)
				}
				sb, err := number(r[idx[4]])
				if err != nil {
					return nil, "", fmt.Errorf("%s: %w", f, err)
				}
				bf := "batch factor " + r[idx[1]]
				if _, ok := rss[bf]; !ok {
					factors = append(factors, bf)
				}
				rss[bf] = append(rss[bf], plotter.XY{X: v, Y: peak})
				sketch = append(sketch, plotter.XY{X: v, Y: sb})
			}
		}
	}
	if len(sketch) == 0 {
		return nil, "", fmt.Errorf("no median rows of kronN streams in %s", strings.Join(files, ", "))
	}
	p := plot.New()
	p.Title.Text = "Main node memory against vertices"
	p.X.Label.Text = "vertices"
	p.Y.Label.Text = "bytes"
	logAxes(p, true, true)
	// Ticks at the streams' vertex counts, not only at the powers of ten.
	var ticks []plot.Tick
	for _, pt := range median(sketch) {
		ticks = append(ticks, plot.Tick{Value: pt.X, Label: strconv.FormatFloat(pt.X, 'f', -1, 64)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	var ss []series
	for _, bf := range factors {
		ss = append(ss, series{"peak RSS, " + bf, median(rss[bf])})
	}
	ss = append(ss, series{"sketch bytes", median(sketch)})
	f, err := newFigure(p, ss)
	return f, strings.Join(files, ", "), err
}
