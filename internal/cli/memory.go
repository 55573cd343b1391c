package cli

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"sketchcc/ingest"
)

// Memory is main-node's --memory-limit and --sketch-dir: the memory a run
// may use, and where its sketches go when they do not fit
// (ingest.PlanBudget).
type Memory struct {
	// Limit is --memory-limit as given: BYTES (with an optional K, M, G
	// or T suffix, powers of 1024), auto, or empty for none.
	Limit string
	// Dir is --sketch-dir.
	Dir string
	// bytes is Limit parsed (by Validate); 0 for none.
	bytes int64
}

// AddFlags defines --memory-limit and --sketch-dir on fs, bound to m.
func (m *Memory) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&m.Limit, "memory-limit", "", "memory the run may use, BYTES (K, M, G, T suffixes: powers of 1024) or auto "+
		"(the memory cgroup's limit, else the memory available); the sketches go to --sketch-dir when they do not fit. Default: this machine's memory, and refuse what does not fit")
	fs.StringVar(&m.Dir, "sketch-dir", "", "directory for the sketch and spill files when the sketches do not fit --memory-limit (removed at exit)")
}

// Validate parses the limit and returns its problem, if any.
func (m *Memory) Validate() []error {
	var errs []error
	if m.Limit != "" {
		b, err := parseBytes(m.Limit)
		if err != nil {
			errs = append(errs, err)
		}
		m.bytes = b
	}
	return errs
}

// parseBytes reads a --memory-limit.
func parseBytes(s string) (int64, error) {
	if s == "auto" {
		b, err := ingest.LimitBytes()
		if err != nil {
			return 0, fmt.Errorf("--memory-limit=auto: %w", err)
		}
		return b, nil
	}
	num, shift := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I"), 0
	if i := len(num) - 1; i >= 0 {
		if k := strings.IndexByte("KMGT", num[i]); k >= 0 {
			num, shift = strings.TrimSpace(num[:i]), 10*(k+1)
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("--memory-limit=%q: want a positive number of bytes (K, M, G, T suffixes allowed) or auto", s)
	}
	return n << shift, nil
}

// Plan fits cfg to the limit over a stream of updates updates named name:
// with no limit, it refuses what does not fit the machine
// (ingest.CheckMemory); with one, it plans the budget (ingest.PlanBudget),
// asks the Go runtime to keep its heap under the limit, and names the
// flag to give when the sketches need a directory. The errors are
// ingest's, *ingest.MemoryError among them.
func (m Memory) Plan(cfg ingest.Config, updates uint64, name string) (ingest.Config, error) {
	if m.bytes == 0 {
		return cfg, ingest.CheckMemory(cfg, updates, name)
	}
	cfg, plan, err := ingest.PlanBudget(cfg, updates, m.bytes, m.Dir, name)
	if errors.Is(err, ingest.ErrNeedsDisk) {
		return cfg, fmt.Errorf("--memory-limit=%s: %w: --sketch-dir DIR", m.Limit, err)
	}
	if err == nil {
		// The Go runtime counts its heap, not the sketch store's mapped
		// buffers: its share is the rest, or the garbage of the stream's
		// reads would grow the heap (GOGC) past the limit.
		goShare := m.bytes
		if b := plan.Budget; b.OutOfCore {
			goShare -= b.Resident + b.Buffers
		}
		debug.SetMemoryLimit(goShare)
	}
	return cfg, err
}

// MemoryRecord is the --json record of the memory plan and the disk I/O.
type MemoryRecord struct {
	LimitBytes       int64   `json:"limit_bytes"` // 0: none
	OutOfCore        bool    `json:"out_of_core"`
	BatchFactor      float64 `json:"batch_factor"`
	Ranges           int     `json:"ranges,omitempty"`
	ResidentBytes    int64   `json:"resident_bytes,omitempty"`
	BufferBytes      int64   `json:"buffer_bytes,omitempty"`
	DiskReadBytes    int64   `json:"disk_read_bytes"`
	DiskWrittenBytes int64   `json:"disk_written_bytes"`
	Swaps            int64   `json:"swaps,omitempty"`         // ranges brought in
	ColumnPasses     int64   `json:"column_passes,omitempty"` // query passes over the sketch file
	DirectIO         bool    `json:"disk_direct_io,omitempty"`
}

// Record returns the plan e runs with and its disk I/O so far.
func (m Memory) Record(e *ingest.Engine) MemoryRecord {
	r := MemoryRecord{LimitBytes: m.bytes, BatchFactor: e.Config().BatchFactor}
	if st, ok := e.Store().OutOfCore(); ok {
		r.OutOfCore, r.Ranges, r.ResidentBytes, r.BufferBytes = true, st.Layout.Ranges, st.Layout.ResidentBytes, st.Layout.BufferBytes
		r.DiskReadBytes, r.DiskWrittenBytes, r.Swaps, r.ColumnPasses, r.DirectIO = st.ReadBytes, st.WrittenBytes, st.Swaps, st.ColumnPasses, st.Direct
	}
	return r
}
