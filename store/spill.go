package store

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"sketchcc/sketch"
)

// ioAlign is the alignment of every offset, length and buffer of the
// store's file I/O: O_DIRECT wants the logical block size, at most 4 KiB
// on the devices we know.
const ioAlign = 4096

// spill is the batches and deltas of one vertex range that is not
// resident, appended to its own file with sequential, aligned writes, as
// records of 32-bit little-endian words: vertex, count, then count words.
// A batch's count (below deltaFlag) is that of its neighbour ids, which
// follow; a delta's is deltaFlag plus the words of its non-zero buckets
// (deltaWords). The file holds the first off bytes; the last partial block
// stays in buf.
type spill struct {
	mu   sync.Mutex
	path string
	f    *os.File
	buf  []uint32 // aligned; its bytes are a multiple of ioAlign
	n    int      // words in buf
	off  int64    // bytes in the file
}

// bytes returns the spill's size in bytes, in the file and in buf. The
// caller holds sp.mu or the disk's write lock.
func (sp *spill) bytes() int64 { return sp.off + int64(sp.n)*4 }

// put appends words w, writing buf to the file each time it fills. It
// returns the bytes written to the file, or the write's error naming the
// file; the spill is then broken and the store refuses further work.
func (sp *spill) put(w []uint32) (written int64, err error) {
	for len(w) > 0 {
		k := copy(sp.buf[sp.n:], w)
		sp.n += k
		w = w[k:]
		if sp.n == len(sp.buf) {
			b := wordBytes(sp.buf)
			if _, err := sp.f.WriteAt(b, sp.off); err != nil {
				return written, fmt.Errorf("store: cannot spill %d bytes to %s at offset %d: %w", len(b), sp.path, sp.off, err)
			}
			sp.off += int64(len(b))
			written += int64(len(b))
			sp.n = 0
		}
	}
	return written, nil
}

// deltaFlag marks the count word of a spilled delta. A batch never has
// 2^31 neighbour ids: a gutter holds at most the vertex count's.
const deltaFlag = 1 << 31

// deltaWords is the words a spilled delta takes per non-zero bucket: its
// index in the sketch, then Alpha and Gamma, low word first.
const deltaWords = 5

// recordWords returns the words that follow a spill record's header whose
// count word is count.
func recordWords(count uint32) int { return int(count &^ deltaFlag) }

// deltaScratch is a merge's room to lay a delta out before spilling it:
// a sketch (BucketsPerVertex buckets) and the words of its non-zero ones.
type deltaScratch struct {
	sketch []sketch.Bucket
	words  []uint32
}

// appendDeltaWords appends the non-zero buckets of delta, a vertex's
// sketch, to w as deltaWords words each and returns the extended slice.
func appendDeltaWords(w []uint32, delta []sketch.Bucket) []uint32 {
	for i, b := range delta {
		if b.Alpha|b.Gamma != 0 {
			w = append(w, uint32(i), uint32(b.Alpha), uint32(b.Alpha>>32), uint32(b.Gamma), uint32(b.Gamma>>32))
		}
	}
	return w
}

// xorDeltaWords XORs a spilled delta, w (appendDeltaWords' words, checked
// by checkDeltaWords), into dst, a vertex's sketch.
func xorDeltaWords(dst []sketch.Bucket, w []uint32) {
	for ; len(w) >= deltaWords; w = w[deltaWords:] {
		b := &dst[w[0]]
		b.Alpha ^= uint64(w[1]) | uint64(w[2])<<32
		b.Gamma ^= uint64(w[3]) | uint64(w[4])<<32
	}
}

// checkDeltaWords reports whether w is whole buckets of a sketch of n
// buckets.
func checkDeltaWords(w []uint32, n int) bool {
	if len(w)%deltaWords != 0 {
		return false
	}
	for ; len(w) > 0; w = w[deltaWords:] {
		if int(w[0]) >= n {
			return false
		}
	}
	return true
}

// reset empties the spill once its batches are applied.
func (sp *spill) reset() { sp.n, sp.off = 0, 0 }

// wordBytes views words as their little-endian bytes (the platform is
// little-endian, as package sketch checks).
func wordBytes(w []uint32) []byte {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(w)*4)
}

// mapAligned returns n bytes (a multiple of the page size) of zeroed,
// page-aligned anonymous memory, outside the Go heap, for O_DIRECT
// buffers; unmapAligned gives them back.
func mapAligned(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("store: cannot map %d bytes of buffers: %w", n, err)
	}
	return b, nil
}

func unmapAligned(b []byte) {
	if b != nil {
		_ = unix.Munmap(b)
	}
}

// alignUp rounds n up to a multiple of ioAlign.
func alignUp(n int64) int64 { return (n + ioAlign - 1) &^ (ioAlign - 1) }

// openDirect creates (truncating) the file at path for reading and writing
// with O_DIRECT, so that its pages never enter the page cache (which a
// memory cgroup counts); a file system that refuses O_DIRECT (tmpfs) gets
// the file without it, and direct reports which.
func openDirect(path string) (f *os.File, direct bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC|unix.O_DIRECT, 0o600)
	if err == nil {
		return f, true, nil
	}
	f, err2 := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err2 != nil {
		return nil, false, fmt.Errorf("store: cannot create %s: %w", path, err2)
	}
	return f, false, nil
}

// reserve allocates size bytes of f (path) on disk, so that a disk too
// small for the sketches fails at once, naming the file, rather than in
// the middle of the stream; a file system without fallocate gets a sparse
// file of that size.
func reserve(f *os.File, path string, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS {
		err = f.Truncate(size)
	}
	if err != nil {
		return fmt.Errorf("store: cannot reserve %d bytes for the sketches in %s: %w", size, path, err)
	}
	return nil
}
