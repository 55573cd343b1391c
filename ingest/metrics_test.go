package ingest

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"sketchcc/internal/testgraph"
	"sketchcc/stream"
)

// TestCollectors reads the engine's metrics as a scrape does, after it
// ingested a stream: each one gives the value of its accessor. Nobody
// takes the batches (Remote), so the queue holds all the full ones.
func TestCollectors(t *testing.T) {
	const vertices, updates = 256, 3000
	e, err := New(Config{Vertices: vertices, Remote: true, BatchFactor: 0.01, QueueBatches: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r, err := stream.NewReader(bytes.NewReader(testgraph.RandomStream(t, vertices, updates)))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(e.Collectors(updates + 7)...)
	if _, err := e.IngestN(context.Background(), r, math.MaxUint64); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		m := mf.GetMetric()[0]
		got[mf.GetName()] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	want := map[string]float64{
		"sketchcc_updates_read_total": updates,
		"sketchcc_stream_updates":     updates + 7,
		"sketchcc_sketch_bytes":       float64(e.SketchBytes()),
		"sketchcc_batch_queue_depth":  float64(len(e.Gutters().Batches())),
	}
	if want["sketchcc_batch_queue_depth"] == 0 {
		t.Fatal("no batch queued: the test needs smaller gutters")
	}
	for name, v := range want {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s = %v (reported: %v), want %v", name, g, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d metrics, want %d: %v", len(got), len(want), got)
	}
}
