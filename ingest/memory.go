package ingest

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"sketchcc/sketch"
	"sketchcc/store"
)

// hugePageBytes is the size of a transparent huge page on x86-64 and arm64
// (4 KiB base pages).
const hugePageBytes = 2 << 20

// bookkeepingBytesPerVertex bounds the memory per vertex outside the two
// slabs: the vertex locks, the gutters' tails and lists, and a query's
// DSU, labels and Boruvka arrays (about 135 bytes measured at V = 6·10^5
// and 10^6 with 2 updates).
const bookkeepingBytesPerVertex = 192

// MemoryPlan is what an Engine needs over one stream, in bytes.
type MemoryPlan struct {
	// Vertices and Updates are the stream header's counts.
	Vertices uint32
	Updates  uint64
	// SketchSlab and GutterSlab are the two allocations (Memory), each
	// made at once for every vertex; the kernel provides a page only when
	// it is first written.
	SketchSlab, GutterSlab int64
	// Sketches and Gutters are the parts of the slabs the stream can fill,
	// and Bookkeeping the memory outside them.
	Sketches, Gutters, Bookkeeping int64
	// PageBytes is the page size the estimate assumed.
	PageBytes int64
	// Sets is the number of sketch sets (Config.Sets) in SketchSlab.
	Sets int
	// Budget is how PlanBudget shared a memory limit; zero from
	// PlanMemory.
	Budget Budget
}

// Total is the resident memory the run can reach.
func (m MemoryPlan) Total() int64 { return m.Sketches + m.Gutters + m.Bookkeeping }

// PlanMemory returns the memory an Engine for cfg needs over a stream of
// updates updates, with pages of cfg.HugePages' size or the machine's. It
// returns Memory's errors.
func PlanMemory(cfg Config, updates uint64) (MemoryPlan, error) {
	sketchSlab, gutterSlab, err := Memory(cfg)
	if err != nil {
		return MemoryPlan{}, err
	}
	page := int64(os.Getpagesize())
	if cfg.HugePages {
		page = hugePageBytes
	}
	m := estimateMemory(sketchSlab, gutterSlab, cfg.Vertices, updates, page)
	m.Sets = max(cfg.Sets, 1)
	return m, nil
}

// estimateMemory bounds the memory of a run over vertices and updates, given
// the slab sizes (Memory) and the page size. A stream of U updates
// writes neighbour ids into at most 2U gutters and deltas into at most
// min(2U, V) sketches, each id written lands in at most one page, and a
// query reads the first bucket of every sketch (a page each where the
// kernel does not map unwritten pages to its zero page), so
//
//	sketches = min(sketch slab, V · page + min(2U, V) · (sketch bytes per vertex + page))
//	gutters  = min(gutter slab, 2U · page)
//	total    = sketches + gutters + 192 bytes per vertex
//
// A dense stream fills both slabs; a sparse one touches a page per vertex
// (V = 10^6 with 2 updates: 4.2 GiB estimated, 3.9 GiB peak RSS measured,
// instead of the 33 GiB of both slabs).
func estimateMemory(sketchSlab, gutterSlab int64, vertices uint32, updates uint64, page int64) MemoryPlan {
	m := MemoryPlan{Vertices: vertices, Updates: updates, SketchSlab: sketchSlab, GutterSlab: gutterSlab, Sets: 1,
		PageBytes: page, Bookkeeping: int64(vertices) * bookkeepingBytesPerVertex}
	writes := updates * 2
	if writes/2 != updates {
		writes = ^uint64(0) // saturate
	}
	perVertex := sketchSlab / int64(max(vertices, 1))
	written := mulSat(min(writes, uint64(vertices)), perVertex+page)
	m.Sketches = min(sketchSlab, addSat(mulSat(uint64(vertices), page), written))
	m.Gutters = min(gutterSlab, mulSat(writes, page))
	return m
}

// addSat returns a+b for a, b >= 0, or the largest int64 if that
// overflows.
func addSat(a, b int64) int64 {
	if a > 1<<63-1-b {
		return 1<<63 - 1
	}
	return a + b
}

// mulSat returns a·b, or the largest int64 if that overflows.
func mulSat(a uint64, b int64) int64 {
	const maxInt64 = 1<<63 - 1
	if b <= 0 {
		return 0
	}
	if a > uint64(maxInt64/b) {
		return maxInt64
	}
	return int64(a) * b
}

// CheckMemory refuses a stream of updates updates over an Engine for cfg
// when its memory plan (PlanMemory) does not fit this machine
// (MachineBytes), before anything is allocated: it returns PlanMemory's
// errors, or the *MemoryError of MemoryPlan.Fit, whose input is named
// name; nil when it fits or the machine's memory is not known.
func CheckMemory(cfg Config, updates uint64, name string) error {
	plan, err := PlanMemory(cfg, updates)
	if err != nil {
		return err
	}
	have, err := MachineBytes()
	var me *MemoryError
	if err == nil && errors.As(plan.Fit(name, have), &me) {
		return me
	}
	return nil
}

// MachineBytes returns this machine's memory plus swap, in bytes, or an
// error when the kernel does not say.
func MachineBytes() (int64, error) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0, fmt.Errorf("ingest: cannot read the machine's memory: %w", err)
	}
	return int64(si.Totalram+si.Totalswap) * int64(si.Unit), nil
}

// MemoryError is Fit's refusal of a plan: what does not fit, and the
// Config field whose lowering shrinks it.
type MemoryError struct {
	// What says what exceeds the machine, with the numbers, starting with
	// the stream's name.
	What string
	// Lower is the Config field to lower: "SketchFactor" or "BatchFactor".
	Lower string
}

// Error names the field to lower with its Config prefix.
func (e *MemoryError) Error() string { return "ingest: " + e.Advise("Config."+e.Lower) }

// Advise returns the refusal with knob named as the thing to lower, so
// that a command can name its own setting for the Lower field.
func (e *MemoryError) Advise(knob string) string {
	shrink := ""
	if e.Lower == "BatchFactor" {
		shrink = " to shrink the gutters"
	}
	return fmt.Sprintf("%s; lower %s%s, or run on a machine with more memory", e.What, knob, shrink)
}

// Fit returns a *MemoryError when m cannot be allocated or filled on a
// machine with have bytes of memory and swap (MachineBytes), or nil. The
// stream header sets how much is allocated, and an allocation the kernel
// refuses is a fatal runtime error with a stack dump, not an error: each
// slab must be at most have (Linux refuses a larger single mapping), and
// what the stream can fill (Total) must fit too. name names the stream.
func (m MemoryPlan) Fit(name string, have int64) error {
	v := m.Vertices
	switch {
	case m.SketchSlab > have:
		return &MemoryError{Lower: "SketchFactor", What: fmt.Sprintf("%s declares %d vertices: their sketches "+
			"(%d set(s)) are %s, more than this machine's %s of memory and swap",
			name, v, m.Sets, FormatBytes(m.SketchSlab), FormatBytes(have))}
	case m.GutterSlab > have:
		return &MemoryError{Lower: "BatchFactor", What: fmt.Sprintf("%s declares %d vertices: their gutters are "+
			"one allocation of %s, more than this machine's %s of memory and swap",
			name, v, FormatBytes(m.GutterSlab), FormatBytes(have))}
	case m.Total() > have:
		return &MemoryError{Lower: "BatchFactor", What: fmt.Sprintf("%s (%d vertices, %d updates U) can fill %s, "+
			"more than this machine's %s of memory and swap: "+
			"sketches min(%s slab, V·page + min(2U, V)·(%d bytes per vertex + %s page)) = %s, "+
			"gutters min(%s slab, 2U·%s page) = %s, bookkeeping %d bytes per vertex = %s",
			name, v, m.Updates, FormatBytes(m.Total()), FormatBytes(have),
			FormatBytes(m.SketchSlab), m.SketchSlab/int64(max(v, 1)), FormatBytes(m.PageBytes), FormatBytes(m.Sketches),
			FormatBytes(m.GutterSlab), FormatBytes(m.PageBytes), FormatBytes(m.Gutters),
			bookkeepingBytesPerVertex, FormatBytes(m.Bookkeeping))}
	}
	return nil
}

// FormatBytes returns b bytes in the largest binary unit it reaches:
// "16.70 GiB", "4.0 MiB", "4.0 KiB", "512 B".
func FormatBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// runtimeReserveBytes is the memory a plan under a limit keeps for what no
// slab holds: the Go runtime and heap, the binary's pages, the stream
// reader's buffers.
const runtimeReserveBytes = 32 << 20

// ErrNeedsDisk is wrapped by PlanBudget when the plan does not fit the
// limit and no directory for the sketches was given.
var ErrNeedsDisk = errors.New("ingest: the sketches do not fit the memory limit")

// Budget is how PlanBudget shares a memory limit, in bytes.
type Budget struct {
	// Limit is the limit planned for; zero means none.
	Limit int64
	// OutOfCore is set when the sketches live on disk (Config.Disk).
	OutOfCore bool
	// Resident is the memory for resident sketches and a query's columns,
	// Buffers that of the spill and read buffers, and Ranges the number of
	// vertex ranges the table is split into (out of core).
	Resident, Buffers int64
	Ranges            int
	// BatchFactor is the gutter size the plan chose (Config.BatchFactor).
	BatchFactor float64
}

// PlanBudget returns cfg fitted to a memory limit of limit bytes over a
// stream of updates updates, and its plan. With no limit (zero), or a plan
// that fits it with runtimeReserveBytes and cfg.ReserveBytes to spare, cfg
// is unchanged: the sketches stay in memory. Otherwise the gutters are
// shrunk to a quarter of what the reserves and the bookkeeping leave (a
// lower BatchFactor), and the sketches go to disk in dir (Config.Disk),
// with the rest of the limit, less the bookkeeping, the reserves and the
// I/O buffers, resident. It returns PlanMemory's errors, an error wrapping
// ErrNeedsDisk when dir is empty, and a *MemoryError when the limit cannot
// hold one column of every vertex's sketch (what a query reads at a time).
// name names the stream.
func PlanBudget(cfg Config, updates uint64, limit int64, dir, name string) (Config, MemoryPlan, error) {
	m, err := PlanMemory(cfg, updates)
	if err != nil {
		return cfg, m, err
	}
	cfg.ensureDefaults()
	reserve := runtimeReserveBytes + max(cfg.ReserveBytes, 0)
	m.Budget = Budget{Limit: limit, BatchFactor: cfg.BatchFactor, Resident: m.Sketches}
	if limit <= 0 || m.Total()+reserve <= limit {
		return cfg, m, nil
	}
	if dir == "" {
		return cfg, m, fmt.Errorf("%w: %s can fill %s, more than the limit of %s less %s for the runtime; "+
			"give a directory to keep the sketches on disk", ErrNeedsDisk, name, FormatBytes(m.Total()), FormatBytes(limit),
			FormatBytes(reserve))
	}
	tooSmall := func(avail, col int64) error {
		return &MemoryError{Lower: "SketchFactor", What: fmt.Sprintf("%s: a memory limit of %s leaves %s for sketches "+
			"and I/O buffers after the gutters (%s), bookkeeping (%s) and runtime (%s), too little for one column of "+
			"every vertex's sketch (%s): raise the limit", name, FormatBytes(limit), FormatBytes(max(avail, 0)),
			FormatBytes(m.Gutters), FormatBytes(m.Bookkeeping), FormatBytes(reserve), FormatBytes(col))}
	}
	p, _, err := cfg.plan()
	if err != nil {
		return cfg, m, err
	}
	col := sketch.ColumnSetBuckets(p, 1) * sketch.BucketBytes
	share := (limit - reserve - m.Bookkeeping) / 4
	if share <= 0 {
		return cfg, m, tooSmall(0, col)
	}
	if m.Gutters > share {
		cfg.BatchFactor *= float64(share) / float64(m.Gutters)
		if m, err = PlanMemory(cfg, updates); err != nil {
			return cfg, m, err
		}
	}
	avail := limit - m.Gutters - m.Bookkeeping - reserve
	// The buffers follow the ranges, which follow the resident share: a
	// few rounds settle both. A range's spill buffer is an eighth of its
	// share of the limit, in [4 KiB, 256 KiB].
	dc := store.DiskConfig{Dir: dir, ResidentBytes: avail}
	var lay store.DiskLayout
	for range 4 {
		if lay, err = dc.Layout(p); err != nil {
			break
		}
		dc.BufferBytes = int(min(256<<10, max(4<<10, avail/int64(8*lay.Ranges))))
		if lay, err = dc.Layout(p); err != nil {
			break
		}
		dc.ResidentBytes = avail - lay.BufferBytes
	}
	// The last round's ranges may need more buffers than the round before
	// left room for: give the excess back from the resident share.
	for i := 0; err == nil && i < 8; i++ {
		if lay, err = dc.Layout(p); err != nil || lay.ResidentBytes+lay.BufferBytes <= avail {
			break
		}
		dc.ResidentBytes -= lay.ResidentBytes + lay.BufferBytes - avail + 4<<10
	}
	if err != nil || lay.ResidentBytes+lay.BufferBytes > avail {
		return cfg, m, tooSmall(avail, col)
	}
	cfg.Disk = &dc
	cfg.HugePages = false
	m.Sketches = lay.ResidentBytes + lay.BufferBytes
	m.Budget = Budget{Limit: limit, OutOfCore: true, Resident: lay.ResidentBytes, Buffers: lay.BufferBytes,
		Ranges: lay.Ranges, BatchFactor: cfg.BatchFactor}
	return cfg, m, nil
}

// LimitBytes returns the memory this process may use, in bytes, for a
// limit of "auto": the limit of its memory cgroup when one is set (cgroup
// v1 memory.limit_in_bytes, or v2 memory.max), else the memory the kernel
// says is available to new work (/proc/meminfo); an error when none can
// be read.
func LimitBytes() (int64, error) {
	if b, ok := cgroupLimit(); ok {
		return b, nil
	}
	f, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("ingest: cannot read the memory available: %w", err)
	}
	for line := range strings.SplitSeq(string(f), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("ingest: /proc/meminfo: bad MemAvailable %q", rest)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("ingest: /proc/meminfo has no MemAvailable")
}

// cgroupLimit returns the memory limit of this process's cgroup, and
// whether one is set (a v1 limit of 2^62 or more, or a v2 "max", is none).
func cgroupLimit() (int64, bool) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(own), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var path string
		switch {
		case parts[1] == "memory":
			path = "/sys/fs/cgroup/memory" + parts[2] + "/memory.limit_in_bytes"
		case parts[0] == "0" && parts[1] == "":
			path = "/sys/fs/cgroup" + parts[2] + "/memory.max"
		default:
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && n > 0 && n < 1<<62 {
			return n, true
		}
	}
	return 0, false
}
