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
//	forest          edge count u64 | count × (src u32, dst u32)
//	table           sketch.Table.WriteTo: its own magic, V, rows,
//	                columns, sketch factor, seed, then every bucket
//	checksum        u32 CRC-32C (Castagnoli) of every byte before it
//
// Write takes it atomically: a temporary file in DIR, fsync, rename over
// the old checkpoint, fsync of DIR; a crash at any point leaves either the
// old or the new checkpoint whole. Read refuses a file whose checksum,
// length, version or geometry is wrong, naming the file and the fault;
// Meta.Check refuses one taken on another stream or with other parameters.
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

	"sketchcc/sketch"
	"sketchcc/stream"
)

// Version is the file version that Write writes and Read accepts.
const Version = 1

// FileName is the checkpoint's name inside its directory.
const FileName = "checkpoint.skcc"

const (
	magic       = "SKCCCKPT"
	headerBytes = 8 + 4 + 4 + 8 + 8 + (4 + 4 + 8 + 8 + 4 + 4) + 8
	flagGreedy  = 1
	// tableHeaderBytes is sketch.Table.WriteTo's header.
	tableHeaderBytes = 8 + 4*4 + 8 + 8
	// idBytes is how much of each end of the stream file Identify hashes.
	idBytes = 1 << 20
)

// ErrCorrupt is wrapped by Read for a file that is not a whole, intact
// checkpoint of this version; ErrMismatch by Meta.Check for a checkpoint
// of another stream or with other parameters.
var (
	ErrCorrupt  = errors.New("checkpoint: corrupt")
	ErrMismatch = errors.New("checkpoint: does not match")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// StreamID identifies a binary stream file cheaply: its header, its size
// in bytes and the CRC-32C of its first and last MiB.
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
	id.Vertices = binary.LittleEndian.Uint32(buf)
	id.Updates = binary.LittleEndian.Uint64(buf[4:])
	id.Head = crc32.Checksum(buf, castagnoli)
	if _, err := f.ReadAt(buf, id.Size-int64(len(buf))); err != nil {
		return StreamID{}, fmt.Errorf("checkpoint: cannot read %s: %w", path, err)
	}
	id.Tail = crc32.Checksum(buf, castagnoli)
	return id, nil
}

// Meta is the checkpoint apart from its table.
type Meta struct {
	// Stream identifies the stream the checkpoint was taken on.
	Stream StreamID
	// Updates is the number of stream updates in the sketches, in
	// [0, Stream.Updates]: ingestion resumes at this record.
	Updates uint64
	// BatchFactor is the gutter size the run used (it does not change the
	// answer; a resumed run keeps it).
	BatchFactor float64
	// GreedyValid says that Forest spans the graph of the first Updates
	// updates; when false the next query runs Boruvka on the sketches.
	GreedyValid bool
	// Forest is the greedy shortcut's spanning forest, when GreedyValid.
	Forest []stream.Edge
}

// Path returns the checkpoint file of directory dir.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// Write writes m and t as the checkpoint of dir, atomically (see the
// package doc), and returns the bytes written. t must not change while
// Write runs.
func Write(dir string, m Meta, t *sketch.Table) (int64, error) {
	final := Path(dir)
	f, err := os.CreateTemp(dir, FileName+".tmp*")
	if err != nil {
		return 0, fmt.Errorf("checkpoint: cannot create a file in %s: %w", dir, err)
	}
	tmp := f.Name()
	n, err := write(f, m, t)
	if err == nil {
		err = f.Sync()
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
func write(w io.Writer, m Meta, t *sketch.Table) (int64, error) {
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
	if _, err := bw.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32())); err != nil {
		return total, err
	}
	return total + 4, bw.Flush()
}

func appendStreamID(b []byte, id StreamID) []byte {
	b = binary.LittleEndian.AppendUint32(b, id.Vertices)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint64(b, id.Updates)
	b = binary.LittleEndian.AppendUint64(b, uint64(id.Size))
	b = binary.LittleEndian.AppendUint32(b, id.Head)
	return binary.LittleEndian.AppendUint32(b, id.Tail)
}

// Read reads the checkpoint of dir. Every error names the file; one for a
// file that is truncated, too long, of another version, with a bad
// checksum or an impossible geometry wraps ErrCorrupt, and nothing of such
// a file is returned. The table is allocated once, p.TableBytes() bytes.
func Read(dir string) (Meta, *sketch.Table, error) {
	path := Path(dir)
	m, t, err := read(path)
	if err != nil {
		return Meta{}, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return m, t, nil
}

func read(path string) (Meta, *sketch.Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return Meta{}, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Meta{}, nil, err
	}
	size := fi.Size()
	crc := crc32.New(castagnoli)
	r := io.TeeReader(bufio.NewReaderSize(f, 1<<20), crc)
	var m Meta
	h := make([]byte, headerBytes)
	if _, err := io.ReadFull(r, h); err != nil {
		return m, nil, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrCorrupt, size, headerBytes)
	}
	if string(h[:8]) != magic {
		return m, nil, fmt.Errorf("%w: not a checkpoint (magic %q, want %q)", ErrCorrupt, h[:8], magic)
	}
	if v := binary.LittleEndian.Uint32(h[8:]); v != Version {
		return m, nil, fmt.Errorf("%w: version %d, this build reads version %d", ErrCorrupt, v, Version)
	}
	flags := binary.LittleEndian.Uint32(h[12:])
	m.GreedyValid = flags&flagGreedy != 0
	m.Updates = binary.LittleEndian.Uint64(h[16:])
	m.BatchFactor = math.Float64frombits(binary.LittleEndian.Uint64(h[24:]))
	s := h[32:]
	m.Stream = StreamID{Vertices: binary.LittleEndian.Uint32(s), Updates: binary.LittleEndian.Uint64(s[8:]),
		Size: int64(binary.LittleEndian.Uint64(s[16:])), Head: binary.LittleEndian.Uint32(s[24:]),
		Tail: binary.LittleEndian.Uint32(s[28:])}
	edges := binary.LittleEndian.Uint64(h[headerBytes-8:])
	var errs []error
	if flags&^flagGreedy != 0 {
		errs = append(errs, fmt.Errorf("unknown flags %#x", flags))
	}
	if binary.LittleEndian.Uint32(s[4:]) != 0 {
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
	if err := errors.Join(errs...); err != nil {
		return m, nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	// The length is known before the table is allocated: a truncated or
	// padded file is refused without reading it.
	var th [tableHeaderBytes]byte
	fb := make([]byte, 8*edges)
	if _, err := io.ReadFull(r, fb); err != nil {
		return m, nil, fmt.Errorf("%w: %d bytes, truncated in the forest", ErrCorrupt, size)
	}
	if _, err := io.ReadFull(r, th[:]); err != nil {
		return m, nil, fmt.Errorf("%w: %d bytes, truncated before the table", ErrCorrupt, size)
	}
	v, factor, seed := binary.LittleEndian.Uint32(th[8:]),
		math.Float64frombits(binary.LittleEndian.Uint64(th[24:])), binary.LittleEndian.Uint64(th[32:])
	if v != m.Stream.Vertices {
		return m, nil, fmt.Errorf("%w: table of %d vertices for a stream of %d", ErrCorrupt, v, m.Stream.Vertices)
	}
	p, err := sketch.NewParams(v, factor, seed)
	if err != nil {
		return m, nil, fmt.Errorf("%w: table parameters: %w", ErrCorrupt, err)
	}
	want := int64(headerBytes) + int64(len(fb)) + tableHeaderBytes + p.TableBytes() + 4
	if size != want {
		return m, nil, fmt.Errorf("%w: %d bytes, the header promises %d (truncated or padded)", ErrCorrupt, size, want)
	}
	t, err := sketch.ReadTable(io.MultiReader(bytes.NewReader(th[:]), r))
	if err != nil {
		return m, nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	sum := crc.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil {
		return m, nil, fmt.Errorf("%w: no checksum: %w", ErrCorrupt, err)
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != sum {
		return m, nil, fmt.Errorf("%w: checksum %#08x, content gives %#08x", ErrCorrupt, got, sum)
	}
	m.Forest = make([]stream.Edge, edges)
	for i := range m.Forest {
		m.Forest[i] = stream.Edge{Src: binary.LittleEndian.Uint32(fb[8*i:]), Dst: binary.LittleEndian.Uint32(fb[8*i+4:])}
		if e := m.Forest[i]; e.Src >= v || e.Dst >= v || e.Src == e.Dst {
			return m, nil, fmt.Errorf("%w: forest edge %d is (%d,%d) on %d vertices", ErrCorrupt, i, e.Src, e.Dst, v)
		}
	}
	return m, t, nil
}

// Params is what a resumed run must share with the checkpoint's run.
type Params struct {
	Stream       StreamID
	Seed         uint64
	SketchFactor float64
}

// Check returns an error wrapping ErrMismatch, naming every difference,
// when the checkpoint m with table parameters p was not taken on want's
// stream with want's seed and sketch factor. A zero Seed or SketchFactor
// in want is not compared (the caller takes the checkpoint's).
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
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrMismatch, err)
	}
	return nil
}
