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

// Server serves one registry's metrics at /metrics over HTTP. Close stops
// it; its goroutine ends before Close returns.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
	once sync.Once
}

// Serve listens on addr (HOST:PORT; port 0 picks one, see Addr) and serves
// reg at /metrics until Close. Errors of the scrape handler go to log.
func Serve(addr string, reg *prometheus.Registry, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn), Registry: reg}))
	s := &Server{ln: ln, done: make(chan struct{}),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics server stopped", "err", err)
		}
	}()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, giving scrapes in progress a second to finish.
// It is safe to call more than once.
func (s *Server) Close() {
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.srv.Shutdown(ctx)
		<-s.done
	})
}
