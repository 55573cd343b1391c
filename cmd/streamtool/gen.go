package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
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
}

// register registers the shared flags with the defaults of def, a
// generator's default Config.
func (g *genFlags) register(fs *pflag.FlagSet, def streamgen.Config, isolatedHelp string) {
	fs.StringVarP(&g.out, "output", "o", "", "binary stream to write (required); the final edge set goes to OUTPUT.cum")
	fs.Uint64Var(&g.seed, "seed", 1, "seed: the output is a function of the seed and the model flags only")
	fs.BoolVar(&g.noCum, "no-cum", false, "do not write OUTPUT.cum")
	fs.IntVar(&g.rounds, "rounds", def.Rounds, "churn rounds: in each, a share --churn of the final edges is deleted and re-inserted")
	fs.Float64Var(&g.churn, "churn", def.Churn, "per-round probability that a final edge is deleted and re-inserted, [0, 1]")
	fs.Float64Var(&g.transient, "transient", def.Transient, "share of updates that insert and later delete a non-edge, [0, 1)")
	fs.IntVar(&g.isolated, "isolated", -1, isolatedHelp)
	fs.IntVar(&g.pass, "pass-updates", streamgen.DefaultPassUpdates, "updates held in memory per pass, 8 bytes each; fewer means more passes over the pairs")
	fs.IntVar(&g.workers, "workers", defaultWorkers(), "goroutines scanning vertex pairs")
	fs.StringVar(&g.format, "format", "binary", "stream format: binary (GraphZeppelin, 9 bytes an update) or packed (see streamtool pack --help)")
}

// check returns the usage problems of the shared flags.
func (g *genFlags) check() []error {
	var errs []error
	if g.out == "" {
		errs = append(errs, errors.New("--output is required"))
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

// generate runs gen with the output files created, commits them and
// prints the summary.
func (g *genFlags) generate(e *env, gen func(o *outputs) (streamgen.Summary, error)) error {
	var o outputs
	defer o.abort()
	t0 := time.Now()
	s, err := gen(&o)
	if err != nil {
		return err
	}
	if err := o.commit(); err != nil {
		return err
	}
	r := genResult{Summary: s, Output: g.out, Seconds: time.Since(t0).Seconds()}
	if !g.noCum {
		r.Cumulative = g.out + ".cum"
	}
	fi, err := os.Stat(g.out)
	if err != nil {
		return err
	}
	r.Bytes = fi.Size()
	return e.printJSON(r)
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
			return g.generate(e, func(o *outputs) (streamgen.Summary, error) {
				out, cum, err := g.files(ctx, o)
				if err != nil {
					return streamgen.Summary{}, err
				}
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
summary with the exact number of components.
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
			return g.generate(e, func(o *outputs) (streamgen.Summary, error) {
				out, cum, err := g.files(ctx, o)
				if err != nil {
					return streamgen.Summary{}, err
				}
				return streamgen.Erdos(ctx, cfg, out, cum)
			})
		}
	},
}

// files creates the stream file and, unless --no-cum, the cumulative file.
// The returned cum is a nil interface when there is none.
func (g *genFlags) files(ctx context.Context, o *outputs) (out, cum io.Writer, err error) {
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
