package cputime

import (
	"math"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// TestSplitStages: CPU samples are summed by their "stage" and
// "goroutine" labels per update, "other" is the process time the labels
// do not cover, and the busiest goroutine and stage are named.
func TestSplitStages(t *testing.T) {
	sample := func(ns int64, stage, goroutine string) *profile.Sample {
		l := map[string][]string{}
		if stage != "" {
			l["stage"] = []string{stage}
		}
		if goroutine != "" {
			l["goroutine"] = []string{goroutine}
		}
		return &profile.Sample{Value: []int64{1, ns}, Label: l}
	}
	prof := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			sample(300, "read", "read-0"), sample(100, "read", "read-1"), sample(200, "insert", "insert-0"),
			sample(250, "ship", "ship-w1"), sample(50, "query", ""), sample(70, "", ""),
		},
	}
	got := splitStages(prof, 1000*time.Nanosecond, 10)
	want := map[string]float64{"read": 40, "insert": 20, "ship": 25, "merge": 0, "apply": 0, "query": 5, "other": 7,
		"unsampled": 3}
	for k, v := range want {
		if math.Abs(got.Stages[k]-v) > 1e-9 {
			t.Errorf("stage %s: %v ns/update, want %v", k, got.Stages[k], v)
		}
	}
	if got.Busiest != "read-0" || got.BusiestNs != 30 {
		t.Errorf("busiest goroutine %s at %v, want read-0 at 30", got.Busiest, got.BusiestNs)
	}
	if got.BusiestStage != "read" || got.BusiestStageNs != 40 {
		t.Errorf("busiest stage %s at %v, want read at 40", got.BusiestStage, got.BusiestStageNs)
	}
	if got.TotalNsPerUpdate != 100 {
		t.Errorf("total %v ns/update, want 100", got.TotalNsPerUpdate)
	}
}
