package metrics

import (
	"io"
	"net/http"
	"strings"
	"testing"

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
