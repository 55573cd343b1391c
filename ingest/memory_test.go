package ingest

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestMemoryEstimate checks the estimate of what a stream can fill, with
// the slab sizes of V = 10^6 at the default factors: a sparse stream needs
// a page per vertex, not both slabs (it was refused on a 23.5 GiB machine
// for 33.4 GiB of slabs; measured peak RSS: 3.9 GiB), and a dense one
// needs both slabs.
func TestMemoryEstimate(t *testing.T) {
	const (
		v          = 1_000_000
		sketchSlab = 17_936_000_000 // 17,936 bytes per vertex
		gutterSlab = 17_937_000_000
		page       = 4096
		have       = 25_270_000_000 // 23.5 GiB
	)
	m := estimateMemory(sketchSlab, gutterSlab, v, 2, page)
	want := MemoryPlan{Vertices: v, Updates: 2, SketchSlab: sketchSlab, GutterSlab: gutterSlab, PageBytes: page, Sets: 1,
		Sketches: v*page + 4*(17_936+page), Gutters: 4 * page, Bookkeeping: v * bookkeepingBytesPerVertex}
	if m != want {
		t.Fatalf("V=10^6, 2 updates: %+v, want %+v", m, want)
	}
	if err := m.Fit("s.bin", have); err != nil {
		t.Fatalf("V=10^6, 2 updates refused: %v", err)
	}
	// A dense stream fills both slabs: refused, with the formula, naming
	// the field to lower.
	m = estimateMemory(sketchSlab, gutterSlab, v, 50_000_000, page)
	if m.Sketches != sketchSlab || m.Gutters != gutterSlab {
		t.Fatalf("dense: %+v", m)
	}
	err := m.Fit("s.bin", have)
	for _, part := range []string{"ingest: s.bin (1000000 vertices, 50000000 updates U) can fill 33.59 GiB",
		"sketches min(16.70 GiB slab, V·page + min(2U, V)·(17936 bytes per vertex + 4.0 KiB page)) = 16.70 GiB",
		"gutters min(16.71 GiB slab, 2U·4.0 KiB page) = 16.71 GiB", "192 bytes per vertex",
		"lower Config.BatchFactor to shrink the gutters, or run on a machine with more memory"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("dense: %v, want it to say %q", err, part)
		}
	}
	// One slab larger than the machine is refused whatever the stream.
	if err := estimateMemory(sketchSlab, 30e9, v, 2, page).Fit("s.bin", have); err == nil ||
		!strings.Contains(err.Error(), "gutters are one allocation of 27.94 GiB") {
		t.Errorf("a gutter slab above the machine: %v", err)
	}
	var me *MemoryError
	err = estimateMemory(30e9, gutterSlab, v, 2, page).Fit("s.bin", have)
	if !errors.As(err, &me) || me.Lower != "SketchFactor" || !strings.Contains(err.Error(), "sketches (1 set(s)) are") ||
		me.Advise("the knob") != strings.TrimPrefix(strings.Replace(err.Error(), "Config.SketchFactor", "the knob", 1), "ingest: ") {
		t.Errorf("a sketch slab above the machine: %v", err)
	}
	// No overflow for any header.
	m = estimateMemory(sketchSlab, gutterSlab, v, 1<<63+5, 2<<20)
	if m.Sketches != sketchSlab || m.Gutters != gutterSlab {
		t.Errorf("2^63 updates: %+v", m)
	}
}

// TestPlanMemory: the plan is Memory's slabs at the page size huge pages
// ask for, and Memory's errors.
func TestPlanMemory(t *testing.T) {
	cfg := Config{Vertices: 1 << 10, Workers: 1, Readers: 1}
	sketchSlab, gutterSlab, err := Memory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HugePages = true
	m, err := PlanMemory(cfg, 1)
	if err != nil || m.SketchSlab != sketchSlab || m.GutterSlab != gutterSlab || m.PageBytes != hugePageBytes {
		t.Errorf("plan %+v, %v; want slabs %d, %d with 2 MiB pages", m, err, sketchSlab, gutterSlab)
	}
	if _, err := PlanMemory(Config{Vertices: 1 << 10, BatchFactor: MaxBatchFactor + 1}, 1); err == nil {
		t.Error("a batch factor over MaxBatchFactor planned")
	}
	// The vertex cap is a Config field's range, with the limit, not in
	// the gutters' words.
	for _, v := range []uint32{MaxVertices + 1, 4_000_000_000} {
		_, err := PlanMemory(Config{Vertices: v, Workers: 1, Readers: 1}, 1)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "Vertices" || !strings.Contains(err.Error(), strconv.Itoa(MaxVertices)) {
			t.Errorf("%d vertices: %v, want a Vertices FieldError naming %d", v, err, MaxVertices)
		}
	}
	if _, err := PlanMemory(Config{Vertices: MaxVertices, Workers: 1, Readers: 1}, 1); err != nil {
		t.Errorf("MaxVertices vertices: %v", err)
	}
}

func TestFormatBytes(t *testing.T) {
	for b, want := range map[int64]string{512: "512 B", 4096: "4.0 KiB", 3 << 20: "3.0 MiB", 17_936_000_000: "16.70 GiB"} {
		if got := FormatBytes(b); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", b, got, want)
		}
	}
}

// TestPlanBudget: a limit the plan fits leaves the configuration alone; a
// smaller one puts the sketches on disk within the limit, with smaller
// gutters, or asks for a directory, or says it is too small.
func TestPlanBudget(t *testing.T) {
	cfg := Config{Vertices: 1 << 12, Workers: 1, Readers: 1}
	const updates = 1 << 24
	m, err := PlanMemory(cfg, updates)
	if err != nil {
		t.Fatal(err)
	}
	got, plan, err := PlanBudget(cfg, updates, m.Total()+runtimeReserveBytes, "", "s")
	if err != nil || got.Disk != nil || plan.Budget.OutOfCore || got.BatchFactor != DefaultBatchFactor(cfg.Vertices) {
		t.Fatalf("fitting limit: %+v, %+v, %v; want the configuration unchanged", got, plan.Budget, err)
	}
	limit := runtimeReserveBytes + m.SketchSlab/4
	if _, _, err := PlanBudget(cfg, updates, limit, "", "s"); !errors.Is(err, ErrNeedsDisk) {
		t.Fatalf("no directory: %v, want ErrNeedsDisk", err)
	}
	got, plan, err = PlanBudget(cfg, updates, limit, "dir", "s")
	if err != nil {
		t.Fatal(err)
	}
	b := plan.Budget
	if got.Disk == nil || got.Disk.Dir != "dir" || !b.OutOfCore || b.Ranges < 4 || got.BatchFactor >= DefaultBatchFactor(cfg.Vertices) {
		t.Fatalf("a quarter of the sketches: %+v, %+v; want them on disk in at least 4 ranges, smaller gutters", got, b)
	}
	if total := plan.Total() + runtimeReserveBytes; total > limit {
		t.Errorf("plan takes %d bytes, limit %d", total, limit)
	}
	var me *MemoryError
	if _, _, err := PlanBudget(cfg, updates, runtimeReserveBytes+1<<16, "dir", "s"); !errors.As(err, &me) {
		t.Fatalf("a tiny limit: %v, want a *MemoryError", err)
	}
	// A reserve for a remote pool comes out of the same limit: the plan
	// still fits it with both reserves, with less resident.
	withPool := cfg
	withPool.ReserveBytes = 1 << 20
	got, rplan, err := PlanBudget(withPool, updates, limit, "dir", "s")
	if err != nil {
		t.Fatal(err)
	}
	if total := rplan.Total() + runtimeReserveBytes + withPool.ReserveBytes; total > limit || got.Disk == nil ||
		rplan.Budget.Resident >= b.Resident {
		t.Errorf("with a 1 MiB reserve: plan %d bytes (limit %d), resident %d (without it %d); want less resident, within the limit",
			total, limit, rplan.Budget.Resident, b.Resident)
	}
	fits := m.Total() + runtimeReserveBytes
	if got, _, err := PlanBudget(withPool, updates, fits, "dir", "s"); err != nil || got.Disk == nil {
		t.Errorf("a limit that fits the plan but not the reserve: %v, %v; want the sketches on disk", got.Disk, err)
	}
}
