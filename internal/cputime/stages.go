package cputime

import (
	"bytes"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/sys/unix"
)

// Profile is a process's CPU profile: it goes to a file, and, when kept,
// also into memory to be split by the pprof labels the pipeline sets ("stage", "goroutine";
// package ingest's doc), with the process's CPU time from getrusage
// beside it.
type Profile struct {
	file   *os.File      // or nil
	buf    *bytes.Buffer // kept for the split, or nil
	start  time.Duration // process CPU time when the profile started
	stages *Stages       // set by Stop
}

// Stages is a process's CPU per
// stream update, split by pipeline stage and by goroutine. Stages and
// goroutines come from the CPU profile (100 samples per second of CPU);
// "other" is the samples without a stage (the runtime's scheduler and
// garbage collector, memberlist), and "unsampled" the process's CPU time
// (getrusage) that the profile did not sample (the profiler's own
// goroutine and signal handling among it).
type Stages struct {
	TotalNsPerUpdate float64            `json:"total_ns_per_update"`
	Stages           map[string]float64 `json:"stages_ns_per_update"` // read, greedy, insert, apply, ship, merge, query, other, unsampled
	Busiest          string             `json:"busiest_goroutine"`
	BusiestNs        float64            `json:"busiest_goroutine_ns_per_update"`
	BusiestStage     string             `json:"busiest_stage"`
	BusiestStageNs   float64            `json:"busiest_stage_ns_per_update"`
	Goroutines       map[string]float64 `json:"goroutines_ns_per_update"`
}

// StartProfile starts the CPU profiler when path is set (its file is
// created) or keep asks for the stage split; it returns nil when neither
// does, or when only keep asked and another profile runs in the process.
// Its error is the file's or the profiler's. Call it, and Stop, from one
// goroutine.
func StartProfile(path string, keep bool) (*Profile, error) {
	if path == "" && !keep {
		return nil, nil
	}
	p := &Profile{start: processCPU()}
	var ws []io.Writer
	if path != "" {
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		p.file = f
		ws = append(ws, f)
	}
	if keep {
		p.buf = new(bytes.Buffer)
		ws = append(ws, p.buf)
	}
	if err := pprof.StartCPUProfile(io.MultiWriter(ws...)); err != nil {
		if p.file == nil {
			// Only the stage split asked for it (another profile runs in
			// this process): no split.
			return nil, nil
		}
		p.file.Close()
		return nil, err
	}
	return p, nil
}

// Stop ends the profile, closes the file and, when kept, splits the
// CPU of updates stream updates by stage. It may be called on nil and
// more than once.
func (p *Profile) Stop(updates uint64) {
	if p == nil || (p.file == nil && p.buf == nil) {
		return
	}
	pprof.StopCPUProfile()
	total := processCPU() - p.start
	if p.file != nil {
		p.file.Close()
		p.file = nil
	}
	if p.buf != nil && updates > 0 {
		if prof, err := profile.Parse(p.buf); err == nil {
			p.stages = splitStages(prof, total, updates)
		}
		p.buf = nil
	}
}

// Split returns the stage split made by Stop, or nil.
func (p *Profile) Split() *Stages {
	if p == nil {
		return nil
	}
	return p.stages
}

// splitStages sums prof's CPU samples by the "stage" and "goroutine"
// labels, in nanoseconds per update.
func splitStages(prof *profile.Profile, total time.Duration, updates uint64) *Stages {
	cpu := -1
	for i, st := range prof.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			cpu = i
		}
	}
	if cpu < 0 {
		return nil
	}
	per := func(ns int64) float64 { return float64(ns) / float64(updates) }
	stages, goroutines := map[string]int64{}, map[string]int64{}
	var sampled int64
	for _, s := range prof.Sample {
		v := s.Value[cpu]
		sampled += v
		if st := s.Label["stage"]; len(st) > 0 {
			stages[st[0]] += v
		} else {
			stages["other"] += v
		}
		if g := s.Label["goroutine"]; len(g) > 0 {
			goroutines[g[0]] += v
		}
	}
	out := &Stages{TotalNsPerUpdate: per(total.Nanoseconds()), Stages: map[string]float64{},
		Goroutines: map[string]float64{}}
	for _, name := range []string{"read", "greedy", "insert", "apply", "ship", "merge", "query", "other"} {
		out.Stages[name] = per(stages[name])
	}
	out.Stages["unsampled"] = per(max(0, total.Nanoseconds()-sampled))
	out.Busiest, out.BusiestNs = largest(goroutines)
	delete(stages, "query") // not per-update work
	delete(stages, "other")
	out.BusiestStage, out.BusiestStageNs = largest(stages)
	out.BusiestNs, out.BusiestStageNs = per(int64(out.BusiestNs)), per(int64(out.BusiestStageNs))
	for g, v := range goroutines {
		out.Goroutines[g] = per(v)
	}
	return out
}

// largest returns the key with the largest value, the smallest key on a
// tie, and its value.
func largest(m map[string]int64) (string, float64) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	best, v := "", int64(-1)
	for _, k := range keys {
		if m[k] > v {
			best, v = k, m[k]
		}
	}
	return best, float64(max(v, 0))
}

// processCPU returns the user and system CPU time of the process so far.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
