package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/internal/cli"
	"sketchcc/offline/streamgen"
	"sketchcc/stream"
)

// genFlags are the flags both generators share.
type genFlags struct {
	out       string
	seed      uint64
	noCum     bool
	rounds    int
	churn     float64
	transient float64
	isolated  int
	pass      int
	workers   int
	format    string
	summary   string
}

// register registers the shared flags with the defaults of def, a
// generator's default Config.
func (g *genFlags) register(fs *pflag.FlagSet, def streamgen.Config, isolatedHelp string) {
	fs.StringVarP(&g.out, "output", "o", "", "binary stream to write (required); the final edge set goes to OUTPUT.cum. "+
		"- writes the stream to standard output, implies --no-cum and prints the JSON summary to standard error "+
		"(or --summary); the header's update count is exact, known before the first update is written")
	fs.Uint64Var(&g.seed, "seed", 1, "seed: the output is a function of the seed and the model flags only")
	fs.BoolVar(&g.noCum, "no-cum", false, "do not write OUTPUT.cum")
	fs.IntVar(&g.rounds, "rounds", def.Rounds, "churn rounds: in each, a share --churn of the final edges is deleted and re-inserted")
	fs.Float64Var(&g.churn, "churn", def.Churn, "per-round probability that a final edge is deleted and re-inserted, [0, 1]")
	fs.Float64Var(&g.transient, "transient", def.Transient, "share of updates that insert and later delete a non-edge, [0, 1)")
	fs.IntVar(&g.isolated, "isolated", -1, isolatedHelp)
	fs.IntVar(&g.pass, "pass-updates", streamgen.DefaultPassUpdates, "updates held in memory per pass, 8 bytes each; fewer means more passes over the pairs")
	fs.IntVar(&g.workers, "workers", defaultWorkers(), "goroutines scanning vertex pairs")
	fs.StringVar(&g.format, "format", "binary", "stream format: binary (GraphZeppelin, 9 bytes an update) or packed (see streamtool pack --help)")
	fs.StringVar(&g.summary, "summary", "", "write the JSON summary to this file instead of standard output (standard error with -o -)")
}

// toStdout says whether the stream goes to standard output (-o -).
func (g *genFlags) toStdout() bool { return g.out == "-" }

// check returns the usage problems of the shared flags.
func (g *genFlags) check() []error {
	var errs []error
	if g.out == "" {
		errs = append(errs, errors.New("--output is required"))
	}
	if g.summary != "" && (g.summary == "-" || g.summary == g.out) {
		errs = append(errs, usagef("--summary=%q, want a file other than the stream", g.summary))
	}
	if g.workers < 1 {
		errs = append(errs, usagef("--workers=%d, want at least 1", g.workers))
	}
	if g.pass < 1 {
		errs = append(errs, usagef("--pass-updates=%d, want at least 1", g.pass))
	}
	if _, err := parseStreamFormat(g.format); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// apply sets the fields of c, a generator's default Config, that the
// shared flags give; a negative --isolated keeps c's Isolated.
func (g *genFlags) apply(c *streamgen.Config, e *env) {
	c.Rounds, c.Churn, c.Transient = g.rounds, g.churn, g.transient
	c.PassUpdates, c.Workers, c.Logger = g.pass, g.workers, e.log
	c.Format, _ = parseStreamFormat(g.format) // check has refused a bad one
	if g.isolated >= 0 {
		c.Isolated = g.isolated
	}
}

// genFlagNames maps the fields of the generators' configs to their flags.
// Workers and PassUpdates have none: their flags must be at least 1, which
// check tests, stricter than the library's zero-means-default.
var genFlagNames = map[string]string{
	"Scale": "scale", "Vertices": "vertices", "Density": "density", "Rounds": "rounds",
	"Churn": "churn", "Transient": "transient", "Isolated": "isolated",
	"Workers": "", "PassUpdates": "", "Format": "",
}

// flagErrors returns the problems of err, a generator config's Validate
// error, each *streamgen.FieldError spelled with its flag. It leaves out
// those of the fields that check tests and of the fields in missing,
// required flags that were not given.
func flagErrors(err error, missing ...string) []error {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []error
	for _, err := range errs {
		var fe *streamgen.FieldError
		if errors.As(err, &fe) {
			flag, ok := genFlagNames[fe.Field]
			if (ok && flag == "") || slices.Contains(missing, fe.Field) {
				continue
			}
			if ok {
				err = fmt.Errorf("--%s=%v, want %s", flag, fe.Value, fe.Want)
			}
		}
		out = append(out, err)
	}
	return out
}

// genResult is the JSON printed by both generators.
type genResult struct {
	streamgen.Summary
	Output     string  `json:"output"`
	Cumulative string  `json:"cumulative,omitempty"`
	Bytes      int64   `json:"bytes"`
	Seconds    float64 `json:"seconds"`
}

// generate runs gen with the outputs created by g.files, commits them and
// prints the summary: to --summary if given, else to standard output, or
// to standard error when the stream goes to standard output.
func (g *genFlags) generate(ctx context.Context, e *env, gen func(out, cum io.Writer) (streamgen.Summary, error)) error {
	var o outputs
	defer o.abort()
	t0 := time.Now()
	out, cum, err := g.files(ctx, e, &o)
	if err != nil {
		return err
	}
	s, err := gen(out, cum)
	if err != nil {
		if g.toStdout() && errors.Is(err, syscall.EPIPE) {
			return fmt.Errorf("cannot write the stream to standard output: its reader closed the pipe after %d bytes: %w",
				out.(*countingWriter).n, err)
		}
		return err
	}
	if err := o.commit(); err != nil {
		return err
	}
	r := genResult{Summary: s, Output: g.out, Seconds: time.Since(t0).Seconds()}
	if cum != nil {
		r.Cumulative = g.out + ".cum"
	}
	if g.toStdout() {
		r.Bytes = out.(*countingWriter).n
	} else {
		fi, err := os.Stat(g.out)
		if err != nil {
			return err
		}
		r.Bytes = fi.Size()
	}
	switch {
	case g.summary != "":
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(g.summary, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("cannot write the summary: %w", err)
		}
		return nil
	case g.toStdout():
		return (&env{stdout: e.stderr}).printJSON(r)
	}
	return e.printJSON(r)
}

// countingWriter counts the bytes written through it and fails once ctx
// is done, so that a generator writing to standard output stops at a
// signal.
type countingWriter struct {
	ctx context.Context
	w   io.Writer
	n   int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

var genKronCommand = &command{
	usage: "streamtool gen kron --scale N [--seed S] -o OUT",
	about: `Writes a dynamic stream whose final graph is a stochastic Kronecker graph
on 2^N vertices (Graph500 initiator 0.57/0.19/0.19/0.05, Poisson model of
repeated R-MAT drops, about half of all pairs are edges, labels permuted),
with a few vertices left isolated. Inserts come in random order; a share of
edges is deleted and re-inserted and some non-edges are inserted and
deleted again, all well formed. Writes OUT (binary) and OUT.cum (final edge
set: "V E", then "u v" lines) and prints a JSON summary with the exact
number of components. Scale 13: ~17.6 M updates (151 MiB); scale 15:
~282 M updates (2.4 GiB) plus a 2.8 GiB OUT.cum. Memory is bounded by
--pass-updates, not by the number of edges; each pass rescans all pairs.
For scale 17 (~4.5 G updates, 38 GiB) use --pass-updates 1073741824 (8 GiB
of memory, 5 passes) and --no-cum (the cumulative file would be ~50 GiB).
With -o - the stream goes to standard output, no OUT.cum is written and the
summary goes to standard error.
`,
	setup: func(fs *pflag.FlagSet) func(context.Context, *env, *pflag.FlagSet) error {
		var g genFlags
		var scale int
		var density float64
		fs.IntVar(&scale, "scale", 0, "vertices = 2^scale (required), [2, 20]")
		// The defaults that do not depend on the scale.
		def := streamgen.DefaultKronConfig(streamgen.MaxKronScale, 1)
		fs.Float64Var(&density, "density", def.Density, "target share of vertex pairs that are edges, (0, 1)")
		g.register(fs, def.Config, "deliberately isolated vertices; -1 means 25·2^((scale−13)/2), rounded")
		return func(ctx context.Context, e *env, fs *pflag.FlagSet) error {
			errs := g.check()
			if fs.NArg() > 0 {
				errs = append(errs, usagef("unexpected arguments %q", fs.Args()))
			}
			cfg := streamgen.DefaultKronConfig(scale, g.seed)
			cfg.Density = density
			g.apply(&cfg.Config, e)
			if !fs.Changed("scale") {
				errs = append(errs, usagef("--scale is required"))
				errs = append(errs, flagErrors(cfg.Validate(), "Scale")...)
			} else {
				errs = append(errs, flagErrors(cfg.Validate())...)
			}
			if err := errors.Join(errs...); err != nil {
				return cli.Usage(err)
			}
			return g.generate(ctx, e, func(out, cum io.Writer) (streamgen.Summary, error) {
				return streamgen.Kron(ctx, cfg, out, cum)
			})
		}
	},
}

var genErdosCommand = &command{
	usage: "streamtool gen erdos --vertices N --density P [--seed S] -o OUT",
	about: `Writes a dynamic Erdős–Rényi stream: the final graph is G(N, P); over
several rounds a share of its edges is deleted and re-inserted, and some
non-edges are inserted and deleted again, all well formed and in random
order. Writes OUT (binary) and OUT.cum (final edge set) and prints a JSON
summary with the exact number of components. With -o - the stream goes to
standard output (for example into main-node --stream -), no OUT.cum is
written and the summary goes to standard error; the log line "streamgen:
counted" gives the components before the first update is written.
A sparse graph (an update on fewer than 1/64 of the pairs) is walked by
geometric skips: time in proportion to the updates, not to N², so N up to
2^21 is practical; e.g. --vertices 1048576 --density 0.00123 gives about
1.1 G updates.
`,
	setup: func(fs *pflag.FlagSet) func(context.Context, *env, *pflag.FlagSet) error {
		var g genFlags
		var vertices uint32
		var density float64
		fs.Uint32Var(&vertices, "vertices", 0, "number of vertices (required), [2, 2^21]")
		fs.Float64Var(&density, "density", -1, "probability that a pair is a final edge (required), [0, 1]")
		fs.Lookup("density").DefValue = "0" // required: pflag shows no default for "0"
		g.register(fs, streamgen.DefaultErdosConfig(2, 0, 1).Config, "deliberately isolated vertices; -1 means none")
		return func(ctx context.Context, e *env, fs *pflag.FlagSet) error {
			errs := g.check()
			if fs.NArg() > 0 {
				errs = append(errs, usagef("unexpected arguments %q", fs.Args()))
			}
			cfg := streamgen.DefaultErdosConfig(vertices, density, g.seed)
			g.apply(&cfg.Config, e)
			if !fs.Changed("density") {
				// Its default, -1, is out of range: say it is missing, once.
				errs = append(errs, usagef("--density is required"))
				errs = append(errs, flagErrors(cfg.Validate(), "Density")...)
			} else {
				errs = append(errs, flagErrors(cfg.Validate())...)
			}
			if err := errors.Join(errs...); err != nil {
				return cli.Usage(err)
			}
			return g.generate(ctx, e, func(out, cum io.Writer) (streamgen.Summary, error) {
				return streamgen.Erdos(ctx, cfg, out, cum)
			})
		}
	},
}

// files creates the stream file and, unless --no-cum, the cumulative file.
// The returned cum is a nil interface when there is none. With -o - the
// stream goes to e's stdout through a *countingWriter, with no cumulative
// file, and SIGPIPE is ignored so that a reader closing the pipe is a
// write error (EPIPE) rather than the end of the process.
func (g *genFlags) files(ctx context.Context, e *env, o *outputs) (out, cum io.Writer, err error) {
	if g.toStdout() {
		signal.Ignore(syscall.SIGPIPE)
		return &countingWriter{ctx: ctx, w: e.stdout}, nil, nil
	}
	f, err := o.create(ctx, g.out)
	if err != nil {
		return nil, nil, err
	}
	if g.noCum {
		return f, nil, nil
	}
	c, err := o.create(ctx, g.out+".cum")
	if err != nil {
		return nil, nil, err
	}
	return f, c, nil
}

// parseStreamFormat returns the stream format --format names.
func parseStreamFormat(name string) (stream.Format, error) {
	switch name {
	case "binary":
		return stream.FormatBinary, nil
	case "packed":
		return stream.FormatPacked, nil
	}
	return 0, usagef("--format=%q, want binary or packed", name)
}
