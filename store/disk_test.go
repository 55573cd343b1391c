package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"sketchcc/internal/testgraph"
	"sketchcc/sketch"
)

// diskPair returns an in-memory store and a disk-backed one over the same
// parameters (300 vertices, 50 per range: 6 ranges, 3 columns per pass
// over the table, 4 KiB spill buffers
// and a 64 KiB spill budget, so that batches straddle buffers and ranges
// are swapped in many times).
func diskPair(t *testing.T) (mem, dsk *Store) {
	t.Helper()
	p, err := sketch.NewParams(300, 1, 11)
	if err != nil {
		t.Fatal(err)
	}
	res := sketch.ColumnSetBuckets(p, 3)*sketch.BucketBytes + 4096 // rounded down to 4 KiB
	dsk, err = OpenDisk(p, DiskConfig{Dir: t.TempDir(), ResidentBytes: res, SpillBytes: 64 << 10, BufferBytes: 4096, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dsk.Close(); err != nil {
			t.Error(err)
		}
	})
	return From(sketch.NewTable(p)), dsk
}

// feed applies n random batches to both stores, from 4 goroutines on the
// disk store, through Apply, ApplyNow and MergeWith.
func feed(t *testing.T, mem, dsk *Store, n int, seed uint64) {
	t.Helper()
	p := mem.Params()
	type job struct {
		v   uint32
		ids []uint32
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	jobs := make([]job, n)
	for i := range jobs {
		v := uint32(rng.IntN(int(p.Vertices())))
		ids := make([]uint32, rng.IntN(600))
		for k := range ids {
			for ids[k] = v; ids[k] == v; {
				ids[k] = uint32(rng.IntN(int(p.Vertices())))
			}
		}
		jobs[i] = job{v, ids}
		mem.ApplyNow(v, ids)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			delta := make([]sketch.Bucket, p.BucketsPerVertex())
			for i := g; i < n; i += 4 {
				j := jobs[i]
				switch i % 3 {
				case 0:
					if err := dsk.Apply(dsk.Queue(j.v), j.v, j.ids); err != nil {
						t.Error(err)
					}
				case 1:
					dsk.ApplyNow(j.v, j.ids)
				case 2:
					p.Delta(delta, j.v, j.ids)
					if err := merge(dsk, dsk.Queue(j.v), j.v, delta); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := dsk.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// sameColumns compares every column of every vertex of the two stores.
func sameColumns(t *testing.T, mem, dsk *Store) {
	t.Helper()
	stores := [2]*Store{mem, dsk}
	testgraph.SameSketches(t, "memory against disk", mem.Params(), func(side, c int) (*sketch.Columns, error) {
		return stores[side].Columns(c)
	})
}

// TestDiskMatchesMemory: a disk-backed store that swaps ranges and spills
// batches holds, byte for byte, the sketches of an in-memory store given
// the same batches, also after a query and more batches.
func TestDiskMatchesMemory(t *testing.T) {
	mem, dsk := diskPair(t)
	feed(t, mem, dsk, 1500, 1)
	sameColumns(t, mem, dsk)
	feed(t, mem, dsk, 700, 2)
	sameColumns(t, mem, dsk)
	st, ok := dsk.OutOfCore()
	if !ok || st.Layout.Ranges != 6 || st.Swaps == 0 || st.WrittenBytes == 0 || st.ReadBytes == 0 {
		t.Fatalf("stats %+v: want 6 ranges, swaps and I/O both ways", st)
	}
	if want := int64(2 * mem.Params().Columns() / 3); st.ColumnPasses != want {
		t.Errorf("%d passes over the table for 2×%d columns, want %d (3 columns a pass)", st.ColumnPasses, mem.Params().Columns(), want)
	}
}

// TestDiskIOErrorNamesFile: a spill that cannot be written fails the
// Apply, naming the file, and every later Wait and query.
func TestDiskIOErrorNamesFile(t *testing.T) {
	_, dsk := diskPair(t)
	sp := dsk.disk.spills[5]
	if err := sp.f.Close(); err != nil {
		t.Fatal(err)
	}
	v := 5 * dsk.disk.lay.Span
	ids := make([]uint32, 2000) // more than a 4 KiB buffer
	var err error
	for i := range ids {
		ids[i] = uint32(i % 300)
		if ids[i] == v {
			ids[i] = v + 1
		}
	}
	err = dsk.Apply(dsk.Queue(v), v, ids)
	if err == nil || !strings.Contains(err.Error(), sp.path) {
		t.Fatalf("Apply: %v, want an error naming %s", err, sp.path)
	}
	if werr := dsk.Wait(context.Background()); !errors.Is(werr, err) && werr.Error() != err.Error() {
		t.Fatalf("Wait: %v, want %v", werr, err)
	}
	if _, qerr := dsk.Columns(0); qerr == nil {
		t.Fatal("Columns after an I/O error succeeded")
	}
	sp.f = nil // closed above
}

// TestDiskResidentTooSmall: a resident budget below one column of every
// vertex is refused with ErrResident.
func TestDiskResidentTooSmall(t *testing.T) {
	p, err := sketch.NewParams(300, 1, 11)
	if err != nil {
		t.Fatal(err)
	}
	_, err = OpenDisk(p, DiskConfig{Dir: t.TempDir(), ResidentBytes: 1000})
	if !errors.Is(err, ErrResident) {
		t.Fatalf("OpenDisk: %v, want ErrResident", err)
	}
}

// TestDiskMergeSpillsDeltas: a delta for a vertex whose range is not
// resident is spilled, not merged by bringing the range in (a swap per
// delta would read and write a range each time), and a merge twice of
// one ticket is refused; the query then holds every delta exactly once.
func TestDiskMergeSpillsDeltas(t *testing.T) {
	mem, dsk := diskPair(t)
	p := mem.Params()
	rng := rand.New(rand.NewPCG(7, 1))
	delta := make([]sketch.Bucket, p.BucketsPerVertex())
	for i := range 24 {
		v := uint32(i*13) % p.Vertices() // every range
		ids := make([]uint32, 1+rng.IntN(20))
		for k := range ids {
			ids[k] = (v + 1 + uint32(rng.IntN(int(p.Vertices())-1))) % p.Vertices()
		}
		mem.ApplyNow(v, ids)
		p.Delta(delta, v, ids)
		tk := dsk.Queue(v)
		if err := merge(dsk, tk, v, delta); err != nil {
			t.Fatal(err)
		}
		if err := merge(dsk, tk, v, delta); !errors.Is(err, ErrTicket) {
			t.Fatalf("second merge of batch %d: %v, want ErrTicket", tk, err)
		}
	}
	if st, _ := dsk.OutOfCore(); st.Swaps != 0 || dsk.disk.n.spilled.Load() == 0 {
		t.Fatalf("after 24 deltas under the spill budget: %d swaps, %d bytes spilled; want none and some",
			st.Swaps, dsk.disk.n.spilled.Load())
	}
	dsk.mu.broken = nil // the refused second merges, on purpose
	if err := dsk.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	sameColumns(t, mem, dsk)
}

// TestDiskBadSpilledDelta: a spilled delta whose bucket index is past the
// sketch fails the swap that applies it, naming the spill file.
func TestDiskBadSpilledDelta(t *testing.T) {
	_, dsk := diskPair(t)
	d := dsk.disk
	v := 2 * d.lay.Span
	w := []uint32{uint32(dsk.Params().BucketsPerVertex()), 1, 0, 1, 0}
	d.mu.RLock()
	_, err := d.spillLocked(2, v, deltaFlag|uint32(len(w)), w)
	d.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	err = d.swapIn(2)
	d.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), d.spills[2].path) || !strings.Contains(err.Error(), "delta") {
		t.Fatalf("swapIn: %v, want an error naming %s and the delta", err, d.spills[2].path)
	}
}
