package main

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"sketchcc/ingest"
	"sketchcc/internal/cli"
	"sketchcc/sketch"
)

// hugePageBytes is the size of a transparent huge page on x86-64 and arm64
// (4 KiB base pages).
const hugePageBytes = 2 << 20

// bookkeepingBytesPerVertex bounds the memory per vertex outside the two
// slabs: the vertex locks, the gutters' tails and lists, and a query's
// DSU, labels and Boruvka arrays (about 135 bytes measured at V = 6·10^5
// and 10^6 with 2 updates).
const bookkeepingBytesPerVertex = 192

// memoryNeed is what a run needs, in bytes.
type memoryNeed struct {
	// sketchSlab and gutterSlab are the two allocations, each made at once
	// for every vertex; the kernel provides a page only when it is first
	// written.
	sketchSlab, gutterSlab int64
	// sketches and gutters are the parts of the slabs the stream can fill,
	// and bookkeeping the memory outside them.
	sketches, gutters, bookkeeping int64
	// page is the page size the estimate assumed.
	page int64
}

// total is the resident memory the run can reach.
func (m memoryNeed) total() int64 { return m.sketches + m.gutters + m.bookkeeping }

// estimateMemory bounds the memory of a run over vertices and updates, given
// the slab sizes (ingest.Memory) and the page size. A stream of U updates
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
func estimateMemory(sketchSlab, gutterSlab int64, vertices uint32, updates uint64, page int64) memoryNeed {
	m := memoryNeed{sketchSlab: sketchSlab, gutterSlab: gutterSlab, page: page,
		bookkeeping: int64(vertices) * bookkeepingBytesPerVertex}
	writes := updates * 2
	if writes/2 != updates {
		writes = ^uint64(0) // saturate
	}
	perVertex := sketchSlab / int64(max(vertices, 1))
	written := mulSat(min(writes, uint64(vertices)), perVertex+page)
	m.sketches = min(sketchSlab, addSat(mulSat(uint64(vertices), page), written))
	m.gutters = min(gutterSlab, mulSat(writes, page))
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

// checkMemory refuses a stream whose sketches and gutters cannot be
// allocated on this machine, before trying: the 12-byte header sets how
// much is allocated, and an allocation the kernel refuses is a fatal
// runtime error with a stack dump, not an error. Each slab must be at most
// the machine's memory and swap (Linux refuses a larger single mapping),
// and what the stream can fill (estimateMemory) must fit too. A sketch
// factor whose columns exceed sketch.MaxColumns is a usage error.
func checkMemory(c config, cfg ingest.Config, updates uint64) error {
	sketchSlab, gutterSlab, err := ingest.Memory(cfg)
	if errors.Is(err, sketch.ErrParams) && c.sketchFactor != 1 {
		return cli.Usage(fmt.Errorf("--sketch-factor=%v: %w", c.sketchFactor, err))
	}
	if err != nil {
		return fmt.Errorf("%s declares %d vertices: %w", c.stream, cfg.Vertices, err)
	}
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return nil // cannot tell; let the allocation decide
	}
	have := int64(si.Totalram+si.Totalswap) * int64(si.Unit)
	page := int64(os.Getpagesize())
	if cfg.HugePages {
		page = hugePageBytes
	}
	return memoryVerdict(c.stream, cfg.Vertices, updates, estimateMemory(sketchSlab, gutterSlab, cfg.Vertices, updates, page), have)
}

// memoryVerdict returns the error of checkMemory for a run that needs m on
// a machine with have bytes of memory and swap, or nil.
func memoryVerdict(stream string, vertices uint32, updates uint64, m memoryNeed, have int64) error {
	switch {
	case m.sketchSlab > have:
		return fmt.Errorf("%s declares %d vertices: their sketches are one allocation of %s, more than this machine's "+
			"%s of memory and swap; lower --sketch-factor, or run on a machine with more memory",
			stream, vertices, humanBytes(m.sketchSlab), humanBytes(have))
	case m.gutterSlab > have:
		return fmt.Errorf("%s declares %d vertices: their gutters are one allocation of %s, more than this machine's "+
			"%s of memory and swap; lower --batch-factor to shrink the gutters, or run on a machine with more memory",
			stream, vertices, humanBytes(m.gutterSlab), humanBytes(have))
	case m.total() > have:
		return fmt.Errorf("%s (%d vertices, %d updates U) can fill %s, more than this machine's %s of memory and swap: "+
			"sketches min(%s slab, V·page + min(2U, V)·(%d bytes per vertex + %s page)) = %s, "+
			"gutters min(%s slab, 2U·%s page) = %s, bookkeeping %d bytes per vertex = %s; "+
			"lower --batch-factor to shrink the gutters, or run on a machine with more memory",
			stream, vertices, updates, humanBytes(m.total()), humanBytes(have),
			humanBytes(m.sketchSlab), m.sketchSlab/int64(max(vertices, 1)), humanBytes(m.page), humanBytes(m.sketches),
			humanBytes(m.gutterSlab), humanBytes(m.page), humanBytes(m.gutters),
			bookkeepingBytesPerVertex, humanBytes(m.bookkeeping))
	}
	return nil
}
