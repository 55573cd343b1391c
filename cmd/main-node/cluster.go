package main

// The main node's side of scale-out: its flags, and starting memberlist
// and the work distributors (distributor.Cluster, where the logic lives).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/distributor"
	"sketchcc/ingest"
)

// clusterConfig holds the cluster flags. Without --listen the main node
// runs alone, exactly as before.
type clusterConfig struct {
	listen        string
	expectWorkers int
	waitTimeout   time.Duration
	localWorkers  int // -1: not given, --workers decides
	keyFile       string
	flushTimeout  time.Duration
	gossipLocal   bool
	cores         int                // 0: the machine's, less same-host workers' threads
	pool          distributor.Config // --local-cutoff, --credits, --frame-delay, the connection timeouts
}

func addClusterFlags(fs *pflag.FlagSet, c *clusterConfig) {
	fs.StringVar(&c.listen, "listen", "", "gossip address for workers to --join, HOST:PORT (port 0 picks one; the address is logged); turns on remote workers")
	fs.IntVar(&c.expectWorkers, "expect-workers", 0, "wait for this many workers before reading the stream")
	fs.DurationVar(&c.waitTimeout, "wait-timeout", time.Minute, "give up waiting for --expect-workers after this long")
	fs.IntVar(&c.localWorkers, "local-workers", -1, "in-process delta workers; the same as --workers, except that 0 (only with --listen) sends all work to remote workers while any is connected")
	fs.Lookup("local-workers").DefValue = "that of --workers"
	fs.StringVar(&c.keyFile, "cluster-key-file", "", "file with the cluster key (base64 of 16, 24 or 32 bytes): encrypts the gossip and authenticates workers")
	fs.DurationVar(&c.flushTimeout, "flush-timeout", 5*time.Minute, "a query fails, naming the workers that did not answer, if the batches handed out are not all merged by then")
	fs.IntVar(&c.pool.LocalCutoff, "local-cutoff", distributor.DefaultLocalCutoff, "batches of fewer updates are sketched on the main node rather than shipped (negative: ship all)")
	fs.IntVar(&c.pool.Credits, "credits", distributor.DefaultCredits, "batches in flight per worker")
	fs.DurationVar(&c.pool.FlushDelay, "frame-delay", distributor.DefaultFlushDelay, "a partly filled frame of batches waits at most this long")
	fs.BoolVar(&c.gossipLocal, "gossip-local", false, "memberlist timings for loopback (tests): faster failure detection")
	fs.DurationVar(&c.pool.AnswerTimeout, "answer-timeout", distributor.DefaultAnswerTimeout, "each batch's deadline: a batch a worker has not answered by then is sketched on the main node; a worker that holds batches and sends nothing for this long loses its connection")
	fs.DurationVar(&c.pool.DialTimeout, "dial-timeout", distributor.DefaultDialTimeout, "connecting to a worker's data port gives up after this long")
	fs.DurationVar(&c.pool.HandshakeTimeout, "handshake-timeout", distributor.DefaultHandshakeTimeout, "a worker must finish the handshake within this")
	fs.IntVar(&c.cores, "cores", 0, "cores the main node runs on (GOMAXPROCS), at most the machine's CPUs; 0: all of the machine's, less the delta threads of workers connected from this same machine, so that on a shared machine the main node's idle goroutines do not spin on the workers' cores")
	fs.DurationVar(&c.pool.RedialBackoff, "redial-backoff", distributor.DefaultRedialBackoff, "longest wait between re-dials of a worker still in the cluster whose connection dropped (from 100ms, doubling)")
}

// validate checks the cluster flags; workers is --workers.
func (c *clusterConfig) validate(workersSet bool) []error {
	var errs []error
	if c.listen != "" {
		if _, port, err := net.SplitHostPort(c.listen); err != nil {
			errs = append(errs, fmt.Errorf("--listen=%q: %v", c.listen, err))
		} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			errs = append(errs, fmt.Errorf("--listen=%q: port %q, want a number in [0, 65535]", c.listen, port))
		}
	}
	if c.listen == "" && c.expectWorkers != 0 {
		errs = append(errs, errors.New("--expect-workers needs --listen"))
	}
	if c.listen == "" && c.keyFile != "" {
		errs = append(errs, errors.New("--cluster-key-file needs --listen"))
	}
	switch {
	case c.localWorkers == 0 && c.listen == "":
		errs = append(errs, errors.New("--local-workers=0 needs --listen: without remote workers nobody would compute deltas"))
	case c.localWorkers < -1 || c.localWorkers > ingest.MaxWorkers:
		errs = append(errs, fmt.Errorf("--local-workers=%d, want [0, %d]", c.localWorkers, ingest.MaxWorkers))
	case c.localWorkers >= 0 && workersSet:
		errs = append(errs, errors.New("give --workers or --local-workers, not both"))
	}
	if c.cores < 0 || c.cores > runtime.NumCPU() {
		errs = append(errs, fmt.Errorf("--cores=%d, want [0, %d] (this machine's CPUs)", c.cores, runtime.NumCPU()))
	}
	if c.expectWorkers < 0 {
		errs = append(errs, fmt.Errorf("--expect-workers=%d, want >= 0", c.expectWorkers))
	}
	errs = append(errs, flagErrors(c.pool.ValidateExplicit())...)
	if c.waitTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--wait-timeout=%v, want > 0", c.waitTimeout))
	}
	if c.flushTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--flush-timeout=%v, want > 0", c.flushTimeout))
	}
	return errs
}

// startCores is GOMAXPROCS as the process started, before --cores or
// same-host workers changed it.
var startCores = runtime.GOMAXPROCS(0)

// sameHost returns the distributor's Config.SameHost for the flags: nil
// when --cores fixes the main node's cores, else one that gives the main
// node the cores it started with less the delta threads of connected
// workers on this machine (distributor.SameHostCores).
func (c *clusterConfig) sameHost(log *slog.Logger) func(threads int) {
	if c.cores > 0 {
		return nil
	}
	return distributor.SameHostCores(startCores, log)
}

// engineWorkers returns ingest.Config's Workers and Remote for
// --workers=workers: --local-workers=0 sends every batch to the workers.
func (c *clusterConfig) engineWorkers(workers int) (int, bool) {
	switch {
	case c.localWorkers == 0:
		return 0, true
	case c.localWorkers > 0:
		return c.localWorkers, false
	}
	return workers, false
}

// startCluster starts memberlist on --listen and the work distributors on
// e; onPool, if not nil, gets the Pool before the wait for
// --expect-workers (the metrics read it). It returns nil, a main node
// alone, without --listen.
func startCluster(ctx context.Context, c clusterConfig, e *ingest.Engine, onPool func(*distributor.Pool), log *slog.Logger) (*distributor.Cluster, error) {
	if c.listen == "" {
		return nil, nil
	}
	var key []byte
	if c.keyFile != "" {
		var err error
		if key, err = distributor.LoadKey(c.keyFile); err != nil {
			return nil, err
		}
	}
	pc := c.pool
	pc.SameHost = c.sameHost(log)
	dc, err := distributor.StartCluster(ctx, e.Gutters(), e.Store(), distributor.ClusterConfig{Listen: c.listen, Key: key,
		GossipLocal: c.gossipLocal, Logger: log, Pool: pc})
	if err != nil {
		return nil, err
	}
	if onPool != nil {
		onPool(dc.Pool())
	}
	// Scripts read addr at --log-level info when --listen has port 0.
	join := dc.JoinAddrs()
	log.Info("main node listening", "addr", join[0], "join", strings.Join(join, ","), "name", dc.Name(),
		"local_workers", e.Config().Workers, "cores", runtime.GOMAXPROCS(0))
	log.Debug("gossip advertised", "addr", dc.Addr())
	if c.expectWorkers > 0 {
		err := dc.AwaitWorkers(ctx, c.expectWorkers, c.waitTimeout, fmt.Errorf("--wait-timeout=%v passed", c.waitTimeout))
		if err != nil {
			dc.Close()
			return nil, fmt.Errorf("waiting for --expect-workers=%d: %w", c.expectWorkers, err)
		}
	}
	return dc, nil
}
