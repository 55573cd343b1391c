// Package checkpoint writes and reads the main node's checkpoint: the
// sketch table, how far into the stream it reaches, the greedy shortcut's
// forest and what identifies the stream, so that a main node that crashed
// or was stopped resumes where the checkpoint was taken and gives exactly
// the answer of an uninterrupted run.
//
// # File layout
//
// One file, DIR/checkpoint.skcc, little-endian:
//
//	"SKCCCKPT"      magic, 8 bytes
//	version         u32 (Version)
//	flags           u32 (bit 0: the greedy forest is valid)
//	updates         u64 stream updates in the sketches (the resume offset)
//	batch factor    f64
//	stream          vertices u32 | 0 u32 | updates u64 | size u64 |
//	                CRC-32C of the first MiB u32 | of the last MiB u32
//	prefix          CRC-32C of the records [0, updates) u32 | 0 u32
//	forest          edge count u64 | count × (src u32, dst u32)
//	table           sketch.Table.WriteTo: its own magic, V, rows,
//	                columns, sets, sketch factor, seed, then every bucket
//	checksum        u32 CRC-32C (Castagnoli) of every byte before it
//
// Write takes it atomically: a temporary file in DIR, fsync, rename over
// the old checkpoint, fsync of DIR; a crash at any point leaves either the
// old or the new checkpoint whole, and possibly a temporary, which
// RemoveTemps removes at the next start. Read refuses a file whose
// checksum, length, version or geometry is wrong, naming the file and the
// fault, before it allocates anything the file's size does not hold;
// Meta.Check refuses one taken on another stream or with other parameters,
// and the caller compares Meta.Prefix with the digest of the stream's
// first Meta.Updates records (stream.File.Digest) before resuming.
//
// One main node at a time writes into a directory: LockDir takes an
// exclusive flock on DIR/checkpoint.lock for the run.
//
// # Goroutines
//
// The functions are safe for concurrent use on different directories; the
// table must not change while Write runs (take it at a barrier).
package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"sketchcc/sketch"
	"sketchcc/stream"
)

// Version is the file version that Write writes and Read accepts.
// Version 1 had no prefix digest: it is refused with ErrVersion.
const Version = 2

// FileName is the checkpoint's name inside its directory.
const FileName = "checkpoint.skcc"

const (
	magic       = "SKCCCKPT"
	headerBytes = 8 + 4 + 4 + 8 + 8 + (4 + 4 + 8 + 8 + 4 + 4) + (4 + 4) + 8
	flagGreedy  = 1
	// tableHeaderBytes is sketch.Table.WriteTo's header.
	tableHeaderBytes = sketch.TableHeaderBytes
	// idBytes is how much of each end of the stream file Identify hashes.
	idBytes = 1 << 20
)

// ErrCorrupt is wrapped by Read for a file that is not a whole, intact
// checkpoint; ErrVersion for one an older build wrote, which this one
// cannot resume safely; ErrMismatch by Meta.Check for a checkpoint of
// another stream or with other parameters; ErrLocked by LockDir for a
// directory another process holds.
var (
	ErrCorrupt  = errors.New("checkpoint: corrupt")
	ErrVersion  = errors.New("checkpoint: written by an older build")
	ErrMismatch = errors.New("checkpoint: does not match")
	ErrLocked   = errors.New("checkpoint: directory in use")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// StreamID identifies a binary stream file cheaply: its header, its size
// in bytes and the CRC-32C of its first and last MiB. A packed stream
// file has the StreamID of its binary copy.
type StreamID struct {
	Vertices   uint32
	Updates    uint64
	Size       int64
	Head, Tail uint32
}

// fileKind names the kind of a file that is not regular.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "of mode " + m.String()
}

// Identify returns the StreamID of the stream file at path, reading at
// most 2 MiB of it. A path that is not a regular file (a pipe, a device)
// is an error.
func Identify(path string) (StreamID, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		// A pipe has no size to check and cannot be read at the
		// checkpoint's offset; opening one could block.
		return StreamID{}, fmt.Errorf("checkpoint: %s is %s, not a regular file: checkpoints need a stream file", path, fileKind(fi.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return StreamID{}, fmt.Errorf("checkpoint: cannot identify the stream: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return StreamID{}, fmt.Errorf("checkpoint: cannot identify the stream: %w", err)
	}
	id := StreamID{Size: fi.Size()}
	buf := make([]byte, min(idBytes, id.Size))
	if _, err := f.ReadAt(buf, 0); err != nil {
		return StreamID{}, fmt.Errorf("checkpoint: cannot read %s: %w", path, err)
	}
	if len(buf) < stream.HeaderBytes {
		return StreamID{}, fmt.Errorf("checkpoint: %s: %d bytes, shorter than a stream header", path, len(buf))
	}
	if stream.IsPacked(buf) {
		return identifyPacked(path)
	}
	id.Vertices = binary.LittleEndian.Uint32(buf)
	id.Updates = binary.LittleEndian.Uint64(buf[4:])
	id.Head = crc32.Checksum(buf, castagnoli)
	if _, err := f.ReadAt(buf, id.Size-int64(len(buf))); err != nil {
		return StreamID{}, fmt.Errorf("checkpoint: cannot read %s: %w", path, err)
	}
	id.Tail = crc32.Checksum(buf, castagnoli)
	return id, nil
}

// identifyPacked returns the StreamID of the packed stream file at path:
// that of its binary copy, whose size and first and last MiB it decodes,
// so that a checkpoint taken on one format resumes on the other. It
// returns the errors of stream.Open and of the reads.
func identifyPacked(path string) (StreamID, error) {
	f, err := stream.Open(path)
	if err != nil {
		return StreamID{}, fmt.Errorf("checkpoint: cannot identify the stream: %w", err)
	}
	defer f.Close()
	h := f.Header()
	id := StreamID{Vertices: h.Vertices, Updates: h.Updates, Size: stream.RecordOffset(h.Updates)}
	buf := make([]byte, min(idBytes, id.Size))
	crcAt := func(off int64) (uint32, error) {
		if _, err := f.ReadBinaryAt(buf, off); err != nil {
			return 0, fmt.Errorf("checkpoint: cannot read %s: %w", path, err)
		}
		return crc32.Checksum(buf, castagnoli), nil
	}
	if id.Head, err = crcAt(0); err != nil {
		return StreamID{}, err
	}
	if id.Tail, err = crcAt(id.Size - int64(len(buf))); err != nil {
		return StreamID{}, err
	}
	return id, nil
}

// Meta is the checkpoint apart from its table.
type Meta struct {
	// Stream identifies the stream the checkpoint was taken on.
	Stream StreamID
	// Updates is the number of stream updates in the sketches, in
	// [0, Stream.Updates]: ingestion resumes at this record.
	Updates uint64
	// Prefix is the digest of the stream's records [0, Updates):
	// Prefix.Records must equal Updates. A resume hashes the records it
	// is given and compares, so that a stream edited anywhere in them is
	// refused.
	Prefix stream.Digest
	// BatchFactor is the gutter size the run used (it does not change the
	// answer; a resumed run keeps it).
	BatchFactor float64
	// GreedyValid says that Forest spans the graph of the first Updates
	// updates; when false the next query runs Boruvka on the sketches.
	GreedyValid bool
	// Forest is the greedy shortcut's spanning forest, when GreedyValid.
	Forest []stream.Edge
}

// Sketches is the table a checkpoint holds, as Write takes it: a
// *sketch.Table, or a sketch store that writes its sketches in the same
// form (store.Store.WriteTo, out of core one range at a time, so that a
// table larger than memory is written in bounded memory). WriteTo must
// write sketch.TableHeaderBytes + Params().TableBytes() bytes.
type Sketches interface {
	Params() sketch.Params
	WriteTo(w io.Writer) (int64, error)
}

// Path returns the checkpoint file of directory dir.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// Write writes m and t as the checkpoint of dir, atomically (see the
// package doc), and returns the bytes written. t must not change while
// Write runs. It refuses a Meta whose Prefix does not cover exactly
// Updates records, and fails when t writes other than a table's bytes.
func Write(dir string, m Meta, t Sketches) (int64, error) { return writeFile(dir, m, t, false) }

// writeUncached is Write keeping the file out of the page cache (Taker.Uncached).
func writeUncached(dir string, m Meta, t Sketches) (int64, error) { return writeFile(dir, m, t, true) }

// syncEvery is how many bytes a Write that keeps out of the page cache
// writes between two write-backs.
const syncEvery = 64 << 20

// writeFile is Write; with uncached it writes the file back and drops its
// pages from the page cache every syncEvery bytes and at the end, so that
// a table larger than memory does not fill the cache (which a memory
// cgroup counts) with dirty pages.
func writeFile(dir string, m Meta, t Sketches, uncached bool) (int64, error) {
	final := Path(dir)
	if m.Prefix.Records != m.Updates {
		return 0, fmt.Errorf("checkpoint: cannot write %s: its prefix digest covers %d records, the sketches %d",
			final, m.Prefix.Records, m.Updates)
	}
	f, err := os.CreateTemp(dir, FileName+".tmp*")
	if err != nil {
		return 0, fmt.Errorf("checkpoint: cannot create a file in %s: %w", dir, err)
	}
	tmp := f.Name()
	var w io.Writer = f
	if uncached {
		w = &flusher{f: f}
	}
	n, err := write(w, m, t)
	if err == nil {
		err = f.Sync()
	}
	if uncached {
		dropCache(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
		return n, fmt.Errorf("checkpoint: cannot write %s: %w", final, err)
	}
	d, err := os.Open(dir)
	if err == nil {
		err = d.Sync()
		d.Close()
	}
	if err != nil {
		return n, fmt.Errorf("checkpoint: cannot sync directory %s after writing %s: %w", dir, final, err)
	}
	return n, nil
}

// write writes the checkpoint body and its checksum to w.
func write(w io.Writer, m Meta, t Sketches) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	crc := crc32.New(castagnoli)
	mw := io.MultiWriter(bw, crc)
	h := make([]byte, 0, headerBytes)
	h = append(h, magic...)
	h = binary.LittleEndian.AppendUint32(h, Version)
	var flags uint32
	if m.GreedyValid {
		flags |= flagGreedy
	}
	h = binary.LittleEndian.AppendUint32(h, flags)
	h = binary.LittleEndian.AppendUint64(h, m.Updates)
	h = binary.LittleEndian.AppendUint64(h, math.Float64bits(m.BatchFactor))
	h = appendStreamID(h, m.Stream)
	h = binary.LittleEndian.AppendUint32(h, m.Prefix.CRC)
	h = binary.LittleEndian.AppendUint32(h, 0)
	h = binary.LittleEndian.AppendUint64(h, uint64(len(m.Forest)))
	for _, e := range m.Forest {
		h = binary.LittleEndian.AppendUint32(h, e.Src)
		h = binary.LittleEndian.AppendUint32(h, e.Dst)
	}
	if _, err := mw.Write(h); err != nil {
		return 0, err
	}
	n, err := t.WriteTo(mw)
	total := int64(len(h)) + n
	if err != nil {
		return total, err
	}
	if want := sketch.TableHeaderBytes + t.Params().TableBytes(); n != want {
		return total, fmt.Errorf("the sketches took %d bytes, a table of their parameters %d", n, want)
	}
	if _, err := bw.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32())); err != nil {
		return total, err
	}
	return total + 4, bw.Flush()
}

// flusher writes to f and, every syncEvery bytes, waits for the kernel to
// write them to the device and drops their pages from the page cache. Both
// are hints: an I/O error shows at the final fsync.
type flusher struct {
	f           *os.File
	off, synced int64
}

func (w *flusher) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	w.off += int64(n)
	if err == nil && w.off-w.synced >= syncEvery {
		fd, n := int(w.f.Fd()), w.off-w.synced
		_ = unix.SyncFileRange(fd, w.synced, n, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
		_ = unix.Fadvise(fd, w.synced, n, unix.FADV_DONTNEED)
		w.synced = w.off
	}
	return n, err
}

func appendStreamID(b []byte, id StreamID) []byte {
	b = binary.LittleEndian.AppendUint32(b, id.Vertices)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint64(b, id.Updates)
	b = binary.LittleEndian.AppendUint64(b, uint64(id.Size))
	b = binary.LittleEndian.AppendUint32(b, id.Head)
	return binary.LittleEndian.AppendUint32(b, id.Tail)
}

// Read reads the checkpoint of dir. Every error names the file. A path
// that is not a regular file (a pipe, which would block) is refused
// without reading it. A file that is truncated, too long, with a bad
// checksum, counts its size cannot hold or an impossible geometry is an
// error wrapping ErrCorrupt, one of version 1 wraps ErrVersion, and
// nothing of such a file is returned. Nothing is allocated before the
// counts are checked against the file's size; the table is allocated
// once, p.TableBytes() bytes.
func Read(dir string) (Meta, *sketch.Table, error) {
	path := Path(dir)
	f, err := read(path, true)
	if err != nil {
		return Meta{}, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return f.meta, f.table, nil
}

// file is a checkpoint file read and checked by read.
type file struct {
	meta   Meta
	params sketch.Params // the table's
	table  *sketch.Table // nil unless read kept it
	// body is the offset of the table's first bucket, size the file's
	// bytes and crc its checksum.
	body, size int64
	crc        uint32
}

// openRegular opens path for reading when it is a regular file, and
// refuses anything else without blocking: it looks before opening, and
// opens with O_NONBLOCK and looks again, for a pipe put in its place
// meanwhile.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s, not a regular file", fileKind(fi.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s, not a regular file", fileKind(fi.Mode()))
		}
		return nil, nil, err
	}
	return f, fi, nil
}

// read reads and checks the checkpoint file at path (see Read), keeping
// its table when keep is set, and otherwise only hashing it (1 MiB of
// buffer) and dropping its pages from the page cache afterwards.
func read(path string, keep bool) (file, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return file{}, err
	}
	defer f.Close()
	size := fi.Size()
	crc := crc32.New(castagnoli)
	r := io.TeeReader(bufio.NewReaderSize(f, 1<<20), crc)
	h := make([]byte, headerBytes)
	if _, err := io.ReadFull(r, h); err != nil {
		return file{}, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrCorrupt, size, headerBytes)
	}
	m, edges, err := decodeHeader(h, size)
	if err != nil {
		return file{}, err
	}
	// The length is known before the table is allocated: a truncated or
	// padded file is refused without reading it.
	var th [tableHeaderBytes]byte
	fb := make([]byte, 8*edges)
	if _, err := io.ReadFull(r, fb); err != nil {
		return file{}, fmt.Errorf("%w: %d bytes, truncated in the forest", ErrCorrupt, size)
	}
	if _, err := io.ReadFull(r, th[:]); err != nil {
		return file{}, fmt.Errorf("%w: %d bytes, truncated before the table", ErrCorrupt, size)
	}
	v, factor, seed := binary.LittleEndian.Uint32(th[8:]),
		math.Float64frombits(binary.LittleEndian.Uint64(th[24:])), binary.LittleEndian.Uint64(th[32:])
	if v != m.Stream.Vertices {
		return file{}, fmt.Errorf("%w: table of %d vertices for a stream of %d", ErrCorrupt, v, m.Stream.Vertices)
	}
	p, err := sketch.ParamsOfHeader(v, factor, seed, binary.LittleEndian.Uint32(th[20:]))
	if err != nil {
		return file{}, fmt.Errorf("%w: table parameters: %w", ErrCorrupt, err)
	}
	want := int64(headerBytes) + int64(len(fb)) + tableHeaderBytes + p.TableBytes() + 4
	if size != want {
		return file{}, fmt.Errorf("%w: %d bytes, the header promises %d (truncated or padded)", ErrCorrupt, size, want)
	}
	var t *sketch.Table
	if keep {
		if t, err = sketch.ReadTable(io.MultiReader(bytes.NewReader(th[:]), r)); err != nil {
			return file{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
	} else {
		if rows, cols := binary.LittleEndian.Uint32(th[12:]), binary.LittleEndian.Uint32(th[16:]); p.Rows() != int(rows) || p.Columns() != int(cols) {
			return file{}, fmt.Errorf("%w: table geometry %d×%d, parameters give %d×%d", ErrCorrupt, rows, cols, p.Rows(), p.Columns())
		}
		if _, err := io.CopyN(io.Discard, r, p.TableBytes()); err != nil {
			return file{}, fmt.Errorf("%w: table body: %w", ErrCorrupt, err)
		}
		defer dropCache(f)
	}
	sum := crc.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil {
		return file{}, fmt.Errorf("%w: no checksum: %w", ErrCorrupt, err)
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != sum {
		return file{}, fmt.Errorf("%w: checksum %#08x, content gives %#08x", ErrCorrupt, got, sum)
	}
	m.Forest = make([]stream.Edge, edges)
	for i := range m.Forest {
		m.Forest[i] = stream.Edge{Src: binary.LittleEndian.Uint32(fb[8*i:]), Dst: binary.LittleEndian.Uint32(fb[8*i+4:])}
		if e := m.Forest[i]; e.Src >= v || e.Dst >= v || e.Src == e.Dst {
			return file{}, fmt.Errorf("%w: forest edge %d is (%d,%d) on %d vertices", ErrCorrupt, i, e.Src, e.Dst, v)
		}
	}
	return file{meta: m, params: p, table: t, body: want - p.TableBytes() - 4, size: size, crc: sum}, nil
}

// dropCache asks the kernel to drop the page cache's pages of f (clean,
// read or written and synced), which a memory cgroup counts: a hint, whose
// failure changes nothing.
func dropCache(f *os.File) { _ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) }

// decodeHeader decodes and checks h, a checkpoint's header, for a file of
// size bytes. It returns the header's fields and the forest's edge count,
// or an error wrapping ErrCorrupt or ErrVersion.
func decodeHeader(h []byte, size int64) (Meta, uint64, error) {
	var m Meta
	if string(h[:8]) != magic {
		return m, 0, fmt.Errorf("%w: not a checkpoint (magic %q, want %q)", ErrCorrupt, h[:8], magic)
	}
	switch v := binary.LittleEndian.Uint32(h[8:]); {
	case v == 1:
		return m, 0, fmt.Errorf("%w (version 1): it names its stream by size and ends only, not by a hash of the records it holds, so it cannot be resumed safely; start the run again from the stream's first update",
			ErrVersion)
	case v != Version:
		return m, 0, fmt.Errorf("%w: version %d, this build reads version %d", ErrCorrupt, v, Version)
	}
	flags := binary.LittleEndian.Uint32(h[12:])
	m.GreedyValid = flags&flagGreedy != 0
	m.Updates = binary.LittleEndian.Uint64(h[16:])
	m.BatchFactor = math.Float64frombits(binary.LittleEndian.Uint64(h[24:]))
	s := h[32:]
	m.Stream = StreamID{Vertices: binary.LittleEndian.Uint32(s), Updates: binary.LittleEndian.Uint64(s[8:]),
		Size: int64(binary.LittleEndian.Uint64(s[16:])), Head: binary.LittleEndian.Uint32(s[24:]),
		Tail: binary.LittleEndian.Uint32(s[28:])}
	m.Prefix = stream.Digest{Records: m.Updates, CRC: binary.LittleEndian.Uint32(s[32:])}
	edges := binary.LittleEndian.Uint64(h[headerBytes-8:])
	var errs []error
	if flags&^flagGreedy != 0 {
		errs = append(errs, fmt.Errorf("unknown flags %#x", flags))
	}
	if binary.LittleEndian.Uint32(s[4:]) != 0 || binary.LittleEndian.Uint32(s[36:]) != 0 {
		errs = append(errs, errors.New("reserved stream field not zero"))
	}
	if m.Updates > m.Stream.Updates {
		errs = append(errs, fmt.Errorf("offset %d past the stream's %d updates", m.Updates, m.Stream.Updates))
	}
	if !(m.BatchFactor > 0) || m.BatchFactor > 64 {
		errs = append(errs, fmt.Errorf("batch factor %v", m.BatchFactor))
	}
	if edges >= uint64(max(m.Stream.Vertices, 1)) || !m.GreedyValid && edges != 0 {
		errs = append(errs, fmt.Errorf("forest of %d edges on %d vertices (greedy valid %v)",
			edges, m.Stream.Vertices, m.GreedyValid))
	}
	// The forest, the table's header and the checksum must fit in the
	// file before the forest is allocated: a crafted count of 2^32 edges
	// would otherwise ask for 32 GiB.
	if room := uint64(size) - min(uint64(size), headerBytes+tableHeaderBytes+4); edges > room/8 {
		errs = append(errs, fmt.Errorf("forest of %d edges in a file of %d bytes", edges, size))
	}
	if err := errors.Join(errs...); err != nil {
		return m, 0, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return m, edges, nil
}

// Params is what a resumed run must share with the checkpoint's run.
type Params struct {
	Stream       StreamID
	Seed         uint64
	SketchFactor float64
	// Sets is the number of sketch sets (sketch.Params.WithSets).
	Sets int
}

// Check returns an error wrapping ErrMismatch, naming every difference,
// when the checkpoint m with table parameters p was not taken on want's
// stream with want's seed, sketch factor and sets. A zero Seed,
// SketchFactor or Sets in want is not compared (the caller takes the
// checkpoint's).
func (m Meta) Check(p sketch.Params, want Params) error {
	var errs []error
	got := m.Stream
	w := want.Stream
	if got.Vertices != w.Vertices || got.Updates != w.Updates {
		errs = append(errs, fmt.Errorf("taken on a stream of %d vertices and %d updates, this one has %d and %d",
			got.Vertices, got.Updates, w.Vertices, w.Updates))
	}
	if got.Size != w.Size {
		errs = append(errs, fmt.Errorf("taken on a stream of %d bytes, this one has %d", got.Size, w.Size))
	}
	if got.Head != w.Head || got.Tail != w.Tail {
		errs = append(errs, errors.New("taken on a stream whose first or last MiB differs from this one's"))
	}
	if want.Seed != 0 && p.Seed() != want.Seed {
		errs = append(errs, fmt.Errorf("seed %d, asked for %d", p.Seed(), want.Seed))
	}
	if want.SketchFactor != 0 && p.Factor() != want.SketchFactor {
		errs = append(errs, fmt.Errorf("sketch factor %v, asked for %v", p.Factor(), want.SketchFactor))
	}
	if want.Sets != 0 && p.Sets() != want.Sets {
		errs = append(errs, fmt.Errorf("%d sketch set(s), asked for %d", p.Sets(), want.Sets))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrMismatch, err)
	}
	return nil
}
