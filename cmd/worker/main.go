// Command worker computes sketch deltas for a sketchcc main node.
//
// Usage:
//
//	worker --join HOST:PORT [--listen ADDR] [--advertise HOST:PORT] [--threads N]
//	       [--cluster-key-file F] [--metrics-listen ADDR] [--log-format text|json]
//	worker --version
//
// The worker listens for the main node's data-plane connection on
// --listen (port 0 picks one), joins the main node's memberlist cluster
// through --join, advertising that address (or --advertise, where the main
// node reaches it through NAT, port forwarding or a proxy) in its node
// metadata, and then
// turns the batches it receives into deltas until the main node says stop
// (exit 0), the main node leaves the cluster (exit 0), or SIGINT/SIGTERM
// (exit 0 after answering the batches already read). When the cluster
// declares the main node dead, which a main node paused for a few seconds
// is too, the worker serves on and tries to rejoin (see distributor/attend.go for the
// back-off): it goes on when the main node, or a new main node process at
// --join, is back, and exits 1 if none is back within --rejoin-timeout
// (10 minutes by default, long enough for a VM migration or a main node
// resumed from its checkpoint; 0 never gives up). It keeps no state
// between batches: the main node sends the graph's sketch parameters when
// it connects. The actual listen and gossip addresses are logged ("worker
// listening") so that scripts can use port 0.
//
// Exit status: 0 on a normal stop, 1 on a runtime error (the cluster
// cannot be joined, for instance with the wrong cluster key), 2 on a usage
// error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/distributor"

	"sketchcc/internal/cli"
	"sketchcc/internal/metrics"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

func exitCode(err error, stderr io.Writer) int {
	return cli.ExitCode("worker", err, stderr)
}

type config struct {
	join, listen, advertise, name      string
	keyFile                            string
	metricsListen                      string
	cpuProfile                         string
	logLevel                           slog.Level
	logFormat                          cli.LogFormat
	version                            bool
	gossipPort, threads, maxFrameBytes int
	joinTimeout, leaveTimeout          time.Duration
	writeTimeout, shutdownTimeout      time.Duration
	handshakeTimeout, rejoinTimeout    time.Duration
	local                              bool
}

func parseFlags(args []string, stdout, stderr io.Writer) (config, error) {
	var c config
	fs := pflag.NewFlagSet("worker", pflag.ContinueOnError)
	usageOut := cli.UsageOutput(args, stdout, stderr)
	fs.SetOutput(usageOut)
	fs.StringVar(&c.join, "join", "", "gossip address of the main node, HOST:PORT (required)")
	fs.StringVar(&c.listen, "listen", "0.0.0.0:0", "data-plane address to listen on; port 0 picks one")
	fs.StringVar(&c.advertise, "advertise", "", "data-plane address the main node dials, HOST:PORT, when it reaches this worker at another address than --listen's (NAT, port forwarding, a proxy); default: the listener's")
	fs.IntVar(&c.gossipPort, "gossip-port", 0, "memberlist port, on --listen's host; 0 picks one")
	fs.IntVar(&c.threads, "threads", runtime.GOMAXPROCS(0), "goroutines computing deltas; fewer than the machine's cores also caps the worker's cores (GOMAXPROCS) at this many, leaving the rest to other processes")
	fs.StringVar(&c.keyFile, "cluster-key-file", "", "file with the cluster key (base64 of 16, 24 or 32 bytes): gossip encryption and data-plane authentication")
	fs.StringVar(&c.name, "name", "", "node name, unique in the cluster (default worker-HOST-RANDOM)")
	fs.IntVar(&c.maxFrameBytes, "max-frame-bytes", distributor.DefaultMaxFrameBytes, "largest frame payload accepted from the main node (its MaxFrameBytes in a main node's refusal)")
	fs.DurationVar(&c.joinTimeout, "join-timeout", 30*time.Second, "keep trying to join for this long (a wrong cluster key fails at once)")
	fs.DurationVar(&c.rejoinTimeout, "rejoin-timeout", 10*time.Minute, "when the cluster declares the main node dead (a crash, or a pause: SIGSTOP, a long GC, a VM migration), keep serving and trying to rejoin it for this long, then exit 1; 0: never give up")
	fs.DurationVar(&c.leaveTimeout, "leave-timeout", 500*time.Millisecond, "on SIGINT/SIGTERM, wait at most this long for the gossip to spread the leave")
	fs.DurationVar(&c.handshakeTimeout, "handshake-timeout", distributor.DefaultHandshakeTimeout, "a main node must finish the handshake within this")
	fs.DurationVar(&c.writeTimeout, "write-timeout", distributor.DefaultWriteTimeout, "a main node that reads nothing for this long loses the connection")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", distributor.DefaultShutdownTimeout, "on SIGINT/SIGTERM, answer the batches already read within this, then leave; the main node sends the rest elsewhere")
	fs.StringVar(&c.metricsListen, "metrics-listen", "", metrics.ListenUsage)
	fs.BoolVar(&c.local, "gossip-local", false, "memberlist timings for loopback (tests): faster failure detection")
	fs.StringVar(&c.cpuProfile, "cpu-profile", "", "write a pprof CPU profile of the whole run to this file")
	cli.LevelVar(fs, &c.logLevel, slog.LevelInfo)
	cli.LogFormatVar(fs, &c.logFormat)
	cli.VersionVar(fs, &c.version)
	cli.KernelVar(fs)
	fs.Usage = func() {
		fmt.Fprintf(usageOut, "Usage: worker --join HOST:PORT [flags]\n\nComputes sketch deltas for a sketchcc main node.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return c, err
		}
		return c, cli.Usage(err)
	}
	if c.version {
		return c, cli.PrintVersion(stdout, "worker")
	}
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if c.join == "" {
		errs = append(errs, errors.New("--join is required"))
	} else if _, _, err := net.SplitHostPort(c.join); err != nil {
		errs = append(errs, fmt.Errorf("--join=%q: %v", c.join, err))
	}
	if _, _, err := net.SplitHostPort(c.listen); err != nil {
		errs = append(errs, fmt.Errorf("--listen=%q: %v", c.listen, err))
	}
	if c.advertise != "" {
		if err := distributor.CheckDialAddr(c.advertise); err != nil {
			errs = append(errs, fmt.Errorf("--advertise=%q: %v", c.advertise, err))
		}
		// The main node ignores a member whose metadata it cannot read,
		// and the worker would idle as if it had joined: refuse it now.
		// --name is NewMembership's to check.
		meta := distributor.NodeMeta{Role: distributor.RoleWorker, Addr: c.advertise, Incarnation: math.MaxUint64}
		if err := meta.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("--advertise: %w", err))
		}
	}
	if c.threads < 1 || c.threads > distributor.MaxThreads {
		errs = append(errs, fmt.Errorf("--threads=%d, want [1, %d]", c.threads, distributor.MaxThreads))
	}
	if c.gossipPort < 0 || c.gossipPort > 65535 {
		errs = append(errs, fmt.Errorf("--gossip-port=%d, want [0, 65535]", c.gossipPort))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--join-timeout", c.joinTimeout}, {"--leave-timeout", c.leaveTimeout}, {"--handshake-timeout", c.handshakeTimeout},
		{"--write-timeout", c.writeTimeout}, {"--shutdown-timeout", c.shutdownTimeout}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s=%v, want > 0", d.name, d.v))
		}
	}
	if c.rejoinTimeout < 0 {
		errs = append(errs, fmt.Errorf("--rejoin-timeout=%v, want >= 0 (0: never give up)", c.rejoinTimeout))
	}
	if c.maxFrameBytes < 1<<16 || int64(c.maxFrameBytes) > 1<<31 {
		errs = append(errs, fmt.Errorf("--max-frame-bytes=%d, want [64 KiB, 2 GiB]", c.maxFrameBytes))
	}
	if err := errors.Join(errs...); err != nil {
		return c, cli.Usage(err)
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	return cli.InFormat(serve(ctx, c, stdout, stderr), c.logFormat)
}

// serve runs the command as c says, after its flags have been parsed.
func serve(ctx context.Context, c config, stdout, stderr io.Writer) error {
	var err error
	log := cli.NewLogger(stderr, c.logFormat, c.logLevel)
	stopProfile, err := cli.StartCPUProfile(c.cpuProfile)
	if err != nil {
		return fmt.Errorf("--cpu-profile: %w", err)
	}
	defer func() {
		if err := stopProfile(); err != nil {
			log.Error("cannot write the CPU profile", "file", c.cpuProfile, "err", err)
		}
	}()

	var key []byte
	if c.keyFile != "" {
		if key, err = distributor.LoadKey(c.keyFile); err != nil {
			return err
		}
	}
	// A worker given fewer threads than cores keeps to that many: Go's
	// idle Ps would otherwise spin on cores that other processes use
	// (with a main node and two single-thread workers on 2 cores, GOMAXPROCS
	// set to 1 for the workers alone took their CPU per update from
	// 72.8 / 62.1 ns to 53.1 / 50.7, kron15; AMD EPYC family 26 model 2,
	// results/perf-notes.md, fifth session).
	if c.threads < runtime.GOMAXPROCS(0) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.threads))
	}
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return fmt.Errorf("cannot listen: %w", err)
	}
	local, err := distributor.Advertised(ln.Addr().(*net.TCPAddr), c.join)
	if err != nil {
		ln.Close()
		return err
	}
	addr := local
	if c.advertise != "" {
		addr = c.advertise
	}
	w, err := distributor.NewWorker(distributor.WorkerConfig{Name: c.name, Threads: c.threads, Key: key,
		MaxFrameBytes: c.maxFrameBytes, HandshakeTimeout: c.handshakeTimeout, WriteTimeout: c.writeTimeout,
		ShutdownTimeout: c.shutdownTimeout, Logger: log})
	if err != nil {
		ln.Close()
		return err
	}
	ms, err := startMetrics(c.metricsListen, w, c.threads, log)
	if err != nil {
		ln.Close()
		return err
	}
	if ms != nil {
		defer ms.Close()
	}
	host, _, _ := net.SplitHostPort(c.listen)
	// The gossip is advertised at the listener's host: the local IP
	// that routes to the main node when --listen's host is unspecified
	// (--advertise names the data plane only).
	adHost, _, _ := net.SplitHostPort(local)
	m, err := distributor.NewMembership(distributor.MembershipConfig{
		Name: c.name, BindAddr: net.JoinHostPort(host, fmt.Sprint(c.gossipPort)), AdvertiseHost: adHost, Key: key, Local: c.local,
		Meta:   distributor.NodeMeta{Role: distributor.RoleWorker, Addr: addr},
		Logger: log.With("component", "memberlist"),
	})
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("worker listening", "addr", addr, "listen", ln.Addr().String(), "gossip", m.Addr(), "name", m.Name(), "incarnation", m.Incarnation(), "threads", c.threads)
	reason, err := w.Attend(ctx, ln, m, distributor.AttendConfig{Join: c.join, JoinTimeout: c.joinTimeout,
		RejoinTimeout: c.rejoinTimeout, LeaveTimeout: c.leaveTimeout, Logger: log})
	var gone *distributor.MainGoneError
	switch {
	case errors.Is(err, distributor.ErrAuth):
		return fmt.Errorf("%w (--cluster-key-file must name the same key on every node)", err)
	case errors.Is(err, distributor.ErrJoin):
		return fmt.Errorf("%w (--join-timeout=%v)", err, c.joinTimeout)
	case errors.As(err, &gone):
		return fmt.Errorf("%w (--rejoin-timeout=%v; 0 never gives up)", err, c.rejoinTimeout)
	case err != nil:
		return err
	}
	log.Info("worker done", "reason", reason, "peak_rss_bytes", cli.PeakRSS())
	return nil
}
