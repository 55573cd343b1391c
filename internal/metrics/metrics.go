// Package metrics serves a command's Prometheus metrics: a registry of its
// own (never the global one) holding the process and Go runtime
// collectors, and an HTTP server for it on --metrics-listen.
//
// The commands add collectors that read the libraries' Stats methods at
// scrape time (client_golang's CounterFunc, GaugeFunc or a custom
// Collector), so the libraries keep no Prometheus state and need no hooks
// on their hot paths. Names follow the Prometheus conventions: a
// sketchcc_ prefix, base units, _total on counters, _bytes and _seconds
// suffixes.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/net/netutil"
	"golang.org/x/sys/unix"
)

// NewRegistry returns a registry with the process collector (CPU seconds,
// resident and virtual memory, open file descriptors), the Go runtime
// collector and the Go build information.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
		collectors.NewBuildInfoCollector(),
	)
	return reg
}

// Defaults of Config. A scraper needs a connection or two; the limits keep
// anyone else who reaches the port (20,000 idle keep-alive connections,
// say) from taking the descriptors that the data plane, the stream and
// the checkpoints need.
const (
	// DefaultMaxConns is the most connections served at once; more wait
	// in the kernel's accept queue, holding no descriptor of the process.
	// A connection that sends no header holds its place for
	// DefaultReadHeaderTimeout: a scrape behind N such connections waits
	// about ⌊N/MaxConns⌋ header timeouts (the soak of 2026-12-02: 20 s
	// behind 300 at 64 and 5 s; about 1 s at 256 and 1 s).
	DefaultMaxConns = 256
	// FDShare is the share of the open-file limit (the soft
	// RLIMIT_NOFILE) that the connection limit may take, 1/FDShare: the
	// rest is the data plane's reserve.
	FDShare = 8
	// The timeouts of a connection: for a request's header, for the
	// whole request, for writing the answer, and for waiting, idle, for
	// the next request.
	DefaultReadHeaderTimeout = time.Second // a scraper sends its request at once
	DefaultReadTimeout       = 10 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
)

// ListenUsage is the help text of a command's --metrics-listen flag, with
// the limits above.
var ListenUsage = fmt.Sprintf("serve Prometheus metrics at http://ADDR/metrics (HOST:PORT; port 0 picks one, logged); "+
	"at most %d connections at once, and at most 1/%d of the open-file limit, which keeps the rest for the data plane; "+
	"a connection gets %ds for a request's header, %ds for the request, %ds for the answer, and is closed after %ds idle",
	DefaultMaxConns, FDShare, DefaultReadHeaderTimeout/time.Second, DefaultReadTimeout/time.Second,
	DefaultWriteTimeout/time.Second, DefaultIdleTimeout/time.Second)

// Config configures Serve. A zero field takes its default.
type Config struct {
	// MaxConns is the most connections served at once. Zero means
	// MaxConnsFor(the soft RLIMIT_NOFILE).
	MaxConns int
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout are
	// http.Server's. Zero means DefaultReadHeaderTimeout,
	// DefaultReadTimeout, DefaultWriteTimeout and DefaultIdleTimeout.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Logger receives the scrape handler's and the server's errors; nil
	// discards them.
	Logger *slog.Logger
}

// MaxConnsFor returns the default connection limit for a process allowed
// openFiles descriptors: DefaultMaxConns, and at most openFiles/FDShare,
// at least 1.
func MaxConnsFor(openFiles uint64) int {
	return int(max(1, min(DefaultMaxConns, openFiles/FDShare)))
}

// OpenFileLimit returns the process's soft RLIMIT_NOFILE. Go raises it to
// the hard limit (less one) as the process starts (go.dev/issue/46279),
// so it is the most descriptors the process can get.
func OpenFileLimit() (uint64, error) {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &l); err != nil {
		return 0, fmt.Errorf("cannot read the open-file limit: %w", err)
	}
	return l.Cur, nil
}

func (c *Config) ensureDefaults() error {
	if c.MaxConns == 0 {
		n, err := OpenFileLimit()
		if err != nil {
			return err
		}
		c.MaxConns = MaxConnsFor(n)
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&c.ReadHeaderTimeout, DefaultReadHeaderTimeout}, {&c.ReadTimeout, DefaultReadTimeout},
		{&c.WriteTimeout, DefaultWriteTimeout}, {&c.IdleTimeout, DefaultIdleTimeout}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Server serves one registry's metrics at /metrics over HTTP. Close stops
// it; its goroutine ends before Close returns. A nil *Server serves
// nothing: its Close and Linger do nothing.
type Server struct {
	ln       net.Listener
	srv      *http.Server
	maxConns int
	log      *slog.Logger
	done     chan struct{}
	once     sync.Once
}

// Serve listens on addr (HOST:PORT; port 0 picks one, see Addr) and serves
// reg at /metrics until Close, within cfg's limits. A connection over
// MaxConns waits for one to close. An address it cannot listen on is an
// error that quotes addr; the command adds its flag's name.
func Serve(addr string, reg *prometheus.Registry, cfg Config) (*Server, error) {
	if err := cfg.ensureDefaults(); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: cannot listen on %q: %w", addr, err)
	}
	log := cfg.Logger
	errLog := slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: errLog, Registry: reg}))
	s := &Server{ln: ln, maxConns: cfg.MaxConns, log: log, done: make(chan struct{}),
		srv: &http.Server{Handler: mux, ErrorLog: errLog, ReadHeaderTimeout: cfg.ReadHeaderTimeout,
			ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout, IdleTimeout: cfg.IdleTimeout}}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(netutil.LimitListener(ln, cfg.MaxConns)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics server stopped", "err", err)
		}
	}()
	return s, nil
}

// MaxConns returns the most connections the server serves at once.
func (s *Server) MaxConns() int { return s.maxConns }

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Linger keeps serving for d after a command has printed its result, so
// that a scraper sees the final counts, or until ctx is done; then it
// closes the server (Close). With d > 0 it logs at info, with the address,
// that it lingers.
func (s *Server) Linger(ctx context.Context, d time.Duration) {
	if s == nil {
		return
	}
	if d > 0 {
		s.log.Info("result printed; serving the final metrics", "addr", s.Addr(), "duration", d)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	s.Close()
}

// closeGrace is how long Close lets the scrapes in progress finish.
const closeGrace = time.Second

// Close stops the server, giving scrapes in progress closeGrace to
// finish. It is safe to call more than once.
func (s *Server) Close() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		defer cancel()
		s.srv.Shutdown(ctx)
		<-s.done
	})
}
