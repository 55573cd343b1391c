package gutters

import (
	"errors"
	"fmt"
	"math"
)

// Defaults and bounds of Config's fields.
const (
	DefaultBatchUpdates = 1024
	MaxBatchUpdates     = 1 << 24
	DefaultQueueBatches = 16
	MaxQueueBatches     = 1 << 20
)

// The number of neighbour ids in a vertex's tail line, one 64-byte cache
// line: 32 ids of 16 bits when Vertices ≤ NarrowMaxVertices, else 16 of 32
// bits. A narrow line spills twice as many ids per trip to the slab, whose
// random pages are what a spill waits on. Against 16-bit tail lines
// widened into a 32-bit slab, the 16-bit slab took kron15's insert stage
// (cluster, 8 readers) from 16.6-20.5 to 13.9-15.1 ns per update on an
// AMD EPYC family 26 model 2 (results/perf-notes.md).
const (
	narrowTailIDs = 32
	wideTailIDs   = 16
)

// NarrowMaxVertices is the most vertices whose gutters hold 16-bit
// neighbour ids; above, they hold 32-bit ids and take twice the memory a
// batch.
const NarrowMaxVertices = 1 << 16

// Config configures Gutters. A zero field takes its default.
type Config struct {
	// Vertices is the number of vertices, in [2, 2^31); ids are in
	// [0, Vertices).
	Vertices uint32
	// BatchUpdates is the number of neighbour ids a gutter holds before it
	// becomes a batch, at most MaxBatchUpdates. Zero means
	// DefaultBatchUpdates. The ingestion pipeline sizes it from the
	// sketch: batch factor · sketch bytes per vertex / 4 (DESIGN.md §3).
	BatchUpdates int
	// QueueBatches is the number of spare buffers: full batches queued or
	// being sketched before InsertBatch blocks, at most MaxQueueBatches.
	// Zero means DefaultQueueBatches.
	QueueBatches int
	// Queue, when set, is called with a batch's vertex as the batch is
	// queued, on the goroutine inserting or flushing; its result travels
	// in Batch.Ticket (the sketch store's ledger, store.Store.Queue).
	Queue func(vertex uint32) uint64

	// wideTails keeps 32-bit tail lines at any vertex count, so that
	// tests cover them on small graphs.
	wideTails bool
}

// Validate reports every problem with c at once.
func (c Config) Validate() error {
	var errs []error
	if c.Vertices < 2 {
		errs = append(errs, fmt.Errorf("gutters: Vertices = %d, need at least 2", c.Vertices))
	}
	if c.BatchUpdates < 0 || c.BatchUpdates > MaxBatchUpdates {
		errs = append(errs, fmt.Errorf("gutters: BatchUpdates = %d, need [1, 2^24]", c.BatchUpdates))
	}
	if c.QueueBatches < 0 || c.QueueBatches > MaxQueueBatches {
		errs = append(errs, fmt.Errorf("gutters: QueueBatches = %d, need [1, 2^20]", c.QueueBatches))
	}
	if c.Vertices >= 1<<31 {
		errs = append(errs, fmt.Errorf("gutters: Vertices = %d, need < 2^31", c.Vertices))
	} else if q := c.withDefaults().QueueBatches; q > 0 && uint64(c.Vertices)+uint64(q) > math.MaxInt32 {
		// Buffers are numbered by int32: one per vertex, then the spares.
		errs = append(errs, fmt.Errorf("gutters: Vertices + QueueBatches = %d, need < 2^31",
			uint64(c.Vertices)+uint64(q)))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	c.ensureDefaults()
	return c
}

func (c *Config) ensureDefaults() {
	if c.BatchUpdates == 0 {
		c.BatchUpdates = DefaultBatchUpdates
	}
	if c.QueueBatches == 0 {
		c.QueueBatches = DefaultQueueBatches
	}
}

// Bytes returns the memory of the gutters for c, with defaults filled in:
// the slab's (Vertices + QueueBatches) buffers of BatchUpdates ids, each
// rounded up to a whole 64-byte line, and the Vertices tail lines of 64
// bytes. An id takes 2 bytes when Vertices ≤ 2^16, else 4.
func (c Config) Bytes() int64 {
	c.ensureDefaults()
	return c.slabBytes() + int64(c.Vertices)*64
}

// slabBytes is the size of the slab.
func (c Config) slabBytes() int64 { return int64(c.slabIDs()) * int64(64/c.tailIDs()) }

// narrow reports whether the tail lines hold 16-bit ids.
func (c Config) narrow() bool { return c.Vertices <= NarrowMaxVertices && !c.wideTails }

// tailIDs is the number of ids in a tail line.
func (c Config) tailIDs() int {
	if c.narrow() {
		return narrowTailIDs
	}
	return wideTailIDs
}

// slabIDs is the length of the slab: a buffer per vertex and per spare.
func (c Config) slabIDs() int {
	return (int(c.Vertices) + c.QueueBatches) * c.stride()
}

// stride is the distance in ids between buffers of the slab: BatchUpdates
// rounded up to whole tail lines, so that a full tail line goes to one
// 64-byte line of the buffer.
func (c Config) stride() int {
	k := c.tailIDs()
	return (c.BatchUpdates + k - 1) &^ (k - 1)
}
