package metrics

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestServe(t *testing.T) {
	reg := NewRegistry()
	n := 0.0
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sketchcc_test_total", Help: "A test counter."},
		func() float64 { n++; return n }))
	s, err := Serve("127.0.0.1:0", reg, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for want := 1.0; want <= 2; want++ {
		resp, err := http.Get("http://" + s.Addr() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
		if err != nil {
			t.Fatalf("scrape does not parse: %v\n%s", err, body)
		}
		if got := fams["sketchcc_test_total"].GetMetric()[0].GetCounter().GetValue(); got != want {
			t.Errorf("scrape %v: counter %v; it must be read at scrape time", want, got)
		}
		for _, name := range []string{"process_cpu_seconds_total", "go_goroutines", "go_build_info"} {
			if fams[name] == nil {
				t.Errorf("no %s", name)
			}
		}
	}
	s.Close()
	s.Close()
	if _, err := http.Get("http://" + s.Addr() + "/metrics"); err == nil {
		t.Error("the server still answers after Close")
	}
	if _, err := Serve(s.Addr()+"x", reg, Config{}); err == nil || !strings.Contains(err.Error(), "metrics: cannot listen on \""+s.Addr()+"x\"") {
		t.Errorf("Serve on a bad address: %v", err)
	}
}

// TestLinger: Linger serves on for its duration, saying so, and closes
// the server after it, or at once when the context is done; a nil Server
// has nothing to serve.
func TestLinger(t *testing.T) {
	var none *Server
	none.Linger(t.Context(), time.Hour) // a test timeout if it waits
	none.Close()

	var logb bytes.Buffer
	s, err := Serve("127.0.0.1:0", NewRegistry(), Config{Logger: slog.New(slog.NewTextHandler(&logb, nil))})
	if err != nil {
		t.Fatal(err)
	}
	const d = 300 * time.Millisecond
	t0 := time.Now()
	done := make(chan struct{})
	go func() { s.Linger(context.Background(), d); close(done) }()
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatalf("no scrape while lingering: %v", err)
	}
	resp.Body.Close()
	<-done
	if el := time.Since(t0); el < d {
		t.Errorf("Linger(%v) returned after %v", d, el)
	}
	if _, err := http.Get("http://" + s.Addr() + "/metrics"); err == nil {
		t.Error("the server still answers after Linger")
	}
	if !strings.Contains(logb.String(), "serving the final metrics") || !strings.Contains(logb.String(), s.Addr()) {
		t.Errorf("Linger logged %q", logb.String())
	}

	s, err = Serve("127.0.0.1:0", NewRegistry(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Linger(ctx, time.Hour) // a test timeout if it waits
	if _, err := http.Get("http://" + s.Addr() + "/metrics"); err == nil {
		t.Error("the server still answers after Linger with its context done")
	}
}
