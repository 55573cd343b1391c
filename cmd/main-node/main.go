package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/cc"
	"sketchcc/checkpoint"
	"sketchcc/distributor"
	"sketchcc/ingest"
	"sketchcc/service"
	"sketchcc/sketch"
	"sketchcc/stream"

	"sketchcc/internal/cli"
	"sketchcc/internal/cputime"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal asks for an orderly stop; restore the default
	// action then, so that a second one kills a run that is slow to stop
	// (a query does not watch ctx).
	go func() { <-ctx.Done(); stop() }()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

func exitCode(err error, stderr io.Writer) int {
	return cli.ExitCode("main-node", err, stderr)
}

type config struct {
	stream       string
	format       string
	json         bool
	labels       string
	forest       string
	engine       ingest.Config // --workers, --readers, --sketch-factor, --batch-factor, --seed, --queue-batches
	cluster      clusterConfig
	metrics      metricsConfig
	progress     string
	hugePages    string
	directIO     cli.DirectIO
	logLevel     slog.Level
	logFormat    cli.LogFormat
	version      bool
	cpuProfile   string
	queries      int
	queryAtList  []string // accumulates over repeated --query-at
	queryAt      []uint64
	pointQueries string
	noGreedy     bool
	checkpoint   checkpointConfig
	kconn        cli.KConn  // --k-connectivity, --k-out, --bridges, --min-cut, --forests
	live         cli.Live   // --updates-listen, --query-listen, --token-file, --producers, --query-gap
	mem          cli.Memory // --memory-limit, --sketch-dir
}

func parseFlags(args []string, stdout, stderr io.Writer) (config, error) {
	var c config
	fs := pflag.NewFlagSet("main-node", pflag.ContinueOnError)
	usageOut := cli.UsageOutput(args, stdout, stderr)
	fs.SetOutput(usageOut)
	fs.StringVar(&c.stream, "stream", "", "edge-update stream to ingest; - reads a live stream from standard input")
	fs.StringVar(&c.format, "format", "binary", "stream format: binary (12-byte header, 9-byte records) or text (typed or untyped)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object on stdout instead of the summary")
	fs.StringVar(&c.labels, "labels", "", "write 'vertex component' lines to this file")
	fs.StringVar(&c.forest, "forest", "", "write the spanning forest as 'u v' lines to this file")
	fs.IntVar(&c.engine.Workers, "workers", runtime.GOMAXPROCS(0), "local delta workers")
	fs.IntVar(&c.engine.Readers, "readers", 0, "goroutines reading a binary stream file, each with a gutter inserter; 1 reads and inserts on one goroutine; 0: one per 4 cores, at least 2 above 2^16 vertices on 2 cores or more")
	addClusterFlags(fs, &c.cluster)
	addMetricsFlags(fs, &c.metrics)
	fs.Float64Var(&c.engine.SketchFactor, "sketch-factor", sketch.DefaultFactor, "sketch factor f: columns = max(18, ceil(f·log2 V/0.737)); raise it if a query runs out of rounds")
	fs.Float64Var(&c.engine.BatchFactor, "batch-factor", 0, "gutter size as a multiple of the sketch bytes per vertex / 4; 0: 1 up to 2^16 vertices, 0.4 above")
	fs.Uint64Var(&c.engine.Seed, "seed", ingest.DefaultSeed, "seed of the sketch hashes")
	fs.IntVar(&c.engine.QueueBatches, "queue-batches", 0, "batches queued before the reader blocks (0: 32 × workers)")
	fs.IntVar(&c.queries, "queries", 1, "run this many evenly spaced connected-components queries, the last at the end of the stream")
	fs.StringSliceVar(&c.queryAtList, "query-at", nil, "comma-separated update counts after which to query (plus one at the end); repeat the flag to add more; not with --queries")
	fs.StringVar(&c.pointQueries, "point-queries", "", "file of 'u v' lines: answer 'are u and v connected' at every query")
	fs.BoolVar(&c.noGreedy, "no-greedy", false, "turn off the greedy shortcut: every query flushes and runs Boruvka")
	addCheckpointFlags(fs, &c.checkpoint)
	c.kconn.AddFlags(fs)
	c.live.AddFlags(fs)
	fs.StringVar(&c.progress, "progress", "auto", "progress bar on stderr: auto (when stderr is a terminal), always, never")
	fs.StringVar(&c.hugePages, "huge-pages", "auto", "transparent huge pages for sketches and gutters: auto (when the stream has at least as many updates as vertices), on, off; slabs under 8 MiB never ask")
	c.directIO.AddFlag(fs)
	c.mem.AddFlags(fs)
	cli.LevelVar(fs, &c.logLevel, slog.LevelWarn)
	cli.LogFormatVar(fs, &c.logFormat)
	cli.VersionVar(fs, &c.version)
	cli.KernelVar(fs)
	fs.StringVar(&c.cpuProfile, "cpu-profile", "", "write a pprof CPU profile of ingestion and queries to this file")
	fs.Usage = func() {
		fmt.Fprintf(usageOut, "Usage: main-node --stream FILE [flags]\n\n"+
			"Ingests an edge-update stream into per-vertex ℓ0 sketches and prints the\n"+
			"connected components of the final graph.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return c, err
		}
		return c, cli.Usage(err)
	}
	if c.version {
		return c, cli.PrintVersion(stdout, "main-node")
	}
	if err := c.validate(fs); err != nil {
		return c, cli.Usage(err)
	}
	return c, nil
}

// validate checks the parsed flags of fs, all at once, and fills in
// c.queryAt.
func (c *config) validate(fs *pflag.FlagSet) error {
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if c.stream == "" && c.live.UpdatesListen == "" {
		errs = append(errs, errors.New("--stream is required (or --updates-listen)"))
	}
	errs = append(errs, liveErrors(c.live, fs, c.stream == "-")...)
	errs = append(errs, cli.OneOf("--format", c.format, "binary", "text"), cli.OneOf("--huge-pages", c.hugePages, "auto", "on", "off"), cli.OneOf("--direct-io", c.directIO.Mode, "auto", "on", "off"),
		cli.OneOf("--progress", c.progress, "auto", "always", "never"))
	errs = append(errs, flagErrors(c.engine.ValidateExplicit())...)
	errs = append(errs, c.cluster.validate(fs.Changed("workers"))...)
	if c.queries < 1 {
		errs = append(errs, fmt.Errorf("--queries=%d, want at least 1", c.queries))
	}
	if fs.Changed("queries") && fs.Changed("query-at") {
		errs = append(errs, errors.New("--queries and --query-at both given: give one (evenly spaced queries, or queries at those counts)"))
	}
	errs = append(errs, c.checkpoint.validate(fs, c.format)...)
	errs = append(errs, kconnErrors(c.kconn)...)
	errs = append(errs, c.mem.Validate()...)
	for _, f := range c.queryAtList {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("--query-at: %q is not an update count", f))
			continue
		}
		c.queryAt = append(c.queryAt, n)
	}
	return errors.Join(errs...)
}

// fieldFlags maps the fields of ingest.Config and distributor.Config
// that flags set to those flags (their names do not clash).
var fieldFlags = map[string]string{
	"Workers": "--workers", "Readers": "--readers", "SketchFactor": "--sketch-factor",
	"BatchFactor": "--batch-factor", "QueueBatches": "--queue-batches", "Credits": "--credits",
	"FlushDelay": "--frame-delay", "AnswerTimeout": "--answer-timeout", "DialTimeout": "--dial-timeout",
	"HandshakeTimeout": "--handshake-timeout", "RedialBackoff": "--redial-backoff",
}

// flagErrors returns the problems of err, ingest.Config's or
// distributor.Config's ValidateExplicit error, spelled with fieldFlags.
func flagErrors(err error) []error { return cli.FieldErrors(err, fieldFlags) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	return cli.InFormat(cli.TextHint(ingestAndReport(ctx, c, stdout, stderr), c.stream, c.format), c.logFormat)
}

// ingestAndReport runs the command as c says, after its flags have been parsed.
func ingestAndReport(ctx context.Context, c config, stdout, stderr io.Writer) error {
	log := cli.NewLogger(stderr, c.logFormat, c.logLevel)
	if c.cluster.cores > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.cluster.cores))
	}

	open := openInput
	if c.liveOn() {
		open = openLive
	}
	in, release, err := open(ctx, c, stderr, log)
	if err != nil {
		return err
	}
	defer release()
	src, res0, from := in.src, in.res0, in.from
	h := src.Header()
	cfg, err := checkMemory(c, engineConfig(c, h, res0), h.Updates)
	if err != nil {
		return err
	}
	e, err := ingest.New(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	if res0 != nil {
		log.Info("resuming", "checkpoint", checkpoint.Path(c.checkpoint.resume), "updates", from,
			"greedy", res0.Meta.GreedyValid)
	}
	log.Info("ingesting", "stream", c.stream, "vertices", h.Vertices, "updates", h.Updates,
		"sketch_bytes", e.SketchBytes(), "batch_updates", e.BatchUpdates(), "local_workers", e.Config().Workers)

	prof, err := cputime.StartProfile(c.cpuProfile, c.json)
	if err != nil {
		return fmt.Errorf("--cpu-profile: %w", err)
	}
	defer prof.Stop(0)
	mm, err := startMetrics(c.metrics, e, h.Updates, log)
	if err != nil {
		return err
	}
	defer mm.srv.Close()
	cl, err := startCluster(ctx, c.cluster, e, mm.pool.Store, log)
	if err != nil {
		return err
	}
	defer cl.Close()
	stopProgress := cli.StartProgress(c.progress, stderr, "ingesting", h.Updates, e.Updates)
	// Queries get a goroutine per core the main node started with (or
	// --cores): same-host workers may hold all but one by now, and give
	// them back before the last query.
	cores := cmp.Or(c.cluster.cores, startCores)
	var flushTimeout time.Duration // a main node alone waits for nobody
	if cl != nil {
		flushTimeout = c.cluster.flushTimeout
	}
	room := cc.New(e, cc.Config{NoGreedy: c.noGreedy, Workers: max(cfg.Workers, cores),
		FlushTimeout: flushTimeout, Late: cl.Late})
	sched, taker, err := schedule(c, in, e, room, log)
	if err != nil {
		return err
	}
	sched.KAnswer = c.kconn.Answerer(h.Vertices, h.Updates)
	var res *runResult
	// The querying goroutine's own work, and the Boruvka goroutines it
	// starts, are the "query" stage; ingestion relabels its own.
	pprof.Do(ctx, pprof.Labels("stage", "query"), func(ctx context.Context) {
		if c.liveOn() {
			res, err = serveLive(ctx, c, room, in)
		} else {
			res, err = ingestAndQuery(ctx, c, room, src, sched, mm.observeQuery, log)
		}
	})
	stopProgress()
	if err != nil {
		return err
	}
	res.cores = runtime.GOMAXPROCS(0) // before the workers go and give the cores back
	res.taker, res.in = taker, in
	// Drained, so that --json's counters add up (batches = merged + re-sent + late).
	cl.Drain(ctx, func(ctx context.Context) error { _, err := e.Settle(ctx); return err }, flushTimeout,
		fmt.Errorf("--flush-timeout=%v passed", flushTimeout))
	prof.Stop(res.final.AfterUpdates)
	res.cpu = prof.Split()
	if err := report(stdout, c, e, h, res, cl); err != nil {
		return err
	}
	cl.Close() // the workers are told the run is over before the metrics linger
	mm.srv.Linger(ctx, c.metrics.linger)
	return nil
}

// checkMemory fits cfg to --memory-limit, or refuses a stream that cannot fit
// (cli.Memory.Plan), naming the flag to change. A sketch factor or a K
// whose columns exceed sketch.MaxColumns is a usage error.
func checkMemory(c config, cfg ingest.Config, updates uint64) (ingest.Config, error) {
	cfg, err := c.mem.Plan(cfg, updates, c.stream)
	var me *ingest.MemoryError
	switch {
	case errors.Is(err, sketch.ErrParams) && (c.kconn.K > 1 || c.engine.SketchFactor != 1):
		return cfg, cli.Usage(fmt.Errorf("--k-connectivity=%d, --sketch-factor=%v: %w", c.kconn.K, c.engine.SketchFactor, err))
	case errors.As(err, &me):
		return cfg, errors.New(me.Advise(fieldFlags[me.Lower]))
	case err != nil:
		return cfg, fmt.Errorf("%s declares %d vertices: %w", c.stream, cfg.Vertices, err)
	}
	return cfg, nil
}

// engineConfig returns the ingest.Config of the flags for a stream with
// header h, started from the checkpoint res0 when it is not nil.
func engineConfig(c config, h stream.Header, res0 *checkpoint.Resume) ingest.Config {
	cfg := c.engine
	cfg.Vertices, cfg.Sets = h.Vertices, c.kconn.K
	cfg.Workers, cfg.Remote = c.cluster.engineWorkers(cfg.Workers)
	cfg.ReserveBytes = distributor.PoolReserveBytes(c.cluster.listen != "", c.cluster.expectWorkers, c.cluster.pool)
	// Huge pages pay when most sketches and gutters get touched; on a
	// sparse stream they would make whole 2 MiB regions resident.
	cfg.HugePages = c.hugePages == "on" || c.hugePages == "auto" && h.Updates >= uint64(h.Vertices)
	if res0 != nil { // the checkpoint's sketches, and its batch factor unless --batch-factor is given
		p := res0.Params
		cfg.SketchFactor, cfg.Seed, cfg.Sketches, cfg.Restore = p.Factor(), p.Seed(), res0.Table, res0.Load
		if !c.checkpoint.batchSet {
			cfg.BatchFactor = res0.Meta.BatchFactor
		}
	}
	return cfg
}

// input is the stream a run reads and, with --resume, the checkpoint it
// continues from.
type input struct {
	src     stream.Source
	cur     *stream.Cursor // a binary stream file's (else nil): the digest of the records read
	id      checkpoint.StreamID
	res0    *checkpoint.Resume // nil without --resume
	from    uint64             // the updates res0 holds
	checked time.Duration      // how long hashing the stream's first from updates took
	live    *service.Live      // a live stream and its API
	direct  bool               // the file is read with O_DIRECT (--direct-io)
}

// openInput checks that the output files can be written, takes the
// checkpoint directory, reads the checkpoint of --resume, opens the stream
// and checks its first updates against that checkpoint, in that order.
// The returned func releases what it took; on an error nothing is held.
func openInput(ctx context.Context, c config, stderr io.Writer, log *slog.Logger) (in input, release func(), err error) {
	// What it took, released in reverse order; no-ops until taken.
	unlock, closeSrc, unwatch := func() {}, func() {}, func() bool { return false }
	undo := func() { unwatch(); closeSrc(); unlock() }
	defer func() {
		if err != nil {
			undo()
		}
	}()
	if err := errors.Join(cli.CheckWritable("--labels", c.labels), cli.CheckWritable("--forest", c.forest)); err != nil {
		return in, nil, err
	}
	if c.checkpoint.dir != "" {
		l, _, err := checkpoint.Claim(c.checkpoint.dir, log)
		if err != nil {
			return in, nil, fmt.Errorf("--checkpoint-dir=%s: %w", c.checkpoint.dir, err)
		}
		unlock = func() { l.Unlock() }
		if in.id, err = checkpoint.Identify(c.stream); err != nil {
			return in, nil, err
		}
	}
	if c.checkpoint.resume != "" {
		if in.res0, err = readResume(c, in.id); err != nil {
			return in, nil, err
		}
	}
	src, closeFile, err := cli.OpenStream(c.stream, c.format)
	if err != nil {
		return in, nil, err
	}
	in.src, closeSrc = src, closeFile
	in.cur, _ = src.(*stream.Cursor)
	if in.cur != nil && in.cur.Seekable() {
		// A regular file's reads do not block; it stays open when the run
		// is interrupted, so that the parallel readers finish the blocks
		// they hold and a stop checkpoint holds a prefix of the stream.
		in.direct = c.directIO.Apply(in.cur.File(), c.stream, log)
	} else {
		// A read blocked on a pipe that has gone quiet ends when the run
		// is interrupted: the stream is closed under it.
		unwatch = context.AfterFunc(ctx, closeSrc)
		if c.engine.Readers > 1 {
			log.Warn("--readers > 1 needs a binary stream in a regular file; reading on one goroutine",
				"readers", c.engine.Readers, "format", c.format, "stream", c.stream)
		}
	}
	if in.res0 != nil {
		in.from = in.res0.Meta.Updates
		if in.checked, err = checkPrefix(ctx, c, in.cur, in.res0.Meta, stderr, log); err != nil {
			return in, nil, err
		}
	}
	return in, undo, nil
}
