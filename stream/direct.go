package stream

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Direct reads: a File whose ReadDirect was turned on reads its regular
// records with O_DIRECT, bypassing the page cache, in aligned chunks that
// a goroutine per Reader reads ahead of the decoder. A stream larger than
// the page cache is read once and never again: through the cache, each
// page is allocated, copied to the reader and reclaimed, which costs the
// main node system time per update (and kswapd a core) for nothing.
//
// directAlign is the alignment O_DIRECT asks of offsets, lengths and
// buffers (the logical block size is 512 or 4096 bytes on every device we
// run on). directChunk is one read: 4 MiB, large enough that a read costs
// the disk nothing extra, and directDepth chunks are read ahead, 16 MiB.
const (
	directAlign = 4096
	directChunk = 4 << 20
	directDepth = 4
	// directSpare chunk buffers are kept for the next sections: enough
	// for four readers' read-ahead.
	directSpare = 4 * directDepth
)

// chunk is a read of a directSection: data, the part of buf the section
// asked for, and the read's error (io.EOF when the file ended early).
type chunk struct {
	buf, data []byte
	err       error
}

// directSection is an io.Reader of bytes [off, off+n) of a File, read
// ahead by its own goroutine with O_DIRECT. The goroutine ends when it
// has read the section, or when the File is closed; a section dropped
// before its end keeps its goroutine (blocked, holding its buffers) until
// then. Read is for one goroutine.
type directSection struct {
	full chan chunk  // read chunks, in order; closed after the last
	free chan []byte // buffers the reader is done with
	cur  chunk       // the chunk Read copies from
	left int64       // the section's bytes not yet returned by Read
	// file is the File's direct descriptor: its spare list takes the
	// buffers back, and once it is closed a Read fails even when the
	// goroutine had read the rest ahead.
	file *directFile
}

// ReadDirect turns direct reads on or off for the Readers made after it.
// Turning them on opens the file again with O_DIRECT, and returns its
// error where the file system refuses (tmpfs, some network file systems):
// the File then keeps reading through the page cache. It has no effect on
// a file that is not a regular file. Call it before any Reader, from one
// goroutine.
func (f *File) ReadDirect(on bool) error {
	if !on || !f.regular {
		f.direct = nil
		return nil
	}
	if f.direct != nil {
		return nil
	}
	d, err := openDirect(f.name)
	if err != nil {
		return err
	}
	f.direct = &directFile{f: d, closed: make(chan struct{}), spare: make(chan []byte, directSpare)}
	return nil
}

// Direct reports whether the File reads with O_DIRECT (ReadDirect).
func (f *File) Direct() bool { return f.direct != nil }

// directFile is a File's second descriptor, opened with O_DIRECT.
type directFile struct {
	f      *os.File
	closed chan struct{} // closed by close: every section's goroutine ends
	// spare holds the chunk buffers no section uses, up to directSpare.
	// A free list rather than a sync.Pool, which the GC empties: with one
	// section per reader block, buffers allocated anew after every GC
	// grew the heap to twice the main node's live bytes (7 GB on kron17).
	spare chan []byte
	once  sync.Once
}

func (d *directFile) close() error {
	var err error
	d.once.Do(func() {
		close(d.closed)
		err = d.f.Close()
	})
	return err
}

// getChunk returns a spare chunk buffer, or a new one.
func (d *directFile) getChunk() []byte {
	select {
	case b := <-d.spare:
		return b
	default:
		return newAlignedChunk()
	}
}

// putChunk keeps b as a spare, or drops it when directSpare are kept.
func (d *directFile) putChunk(b []byte) {
	select {
	case d.spare <- b:
	default:
	}
}

// newAlignedChunk allocates a chunk buffer whose address is a multiple of
// directAlign.
func newAlignedChunk() []byte {
	b := make([]byte, directChunk+directAlign)
	skip := int(-uintptr(unsafe.Pointer(&b[0])) & (directAlign - 1))
	return b[skip : skip+directChunk : skip+directChunk]
}

// section returns a reader of bytes [off, off+n) of the file, fallback
// being the file's ordinary descriptor for a read O_DIRECT refuses.
func (d *directFile) section(fallback *os.File, off, n int64) io.Reader {
	s := &directSection{full: make(chan chunk, directDepth), free: make(chan []byte, directDepth),
		file: d, left: n}
	// A section shorter than the read-ahead takes only the buffers it
	// can fill (it may straddle one more chunk boundary than its length).
	for range min(directDepth, n/directChunk+2) {
		s.free <- d.getChunk()
	}
	go s.readAhead(fallback, off, off+n)
	return s
}

// readAhead reads the section's chunks into s.full, in order.
func (s *directSection) readAhead(fallback *os.File, off, end int64) {
	defer close(s.full)
	d := s.file
	pos := off &^ (directAlign - 1) // aligned offset of the next read
	for skip := off - pos; pos < end; skip = 0 {
		var buf []byte
		select {
		case buf = <-s.free:
		case <-d.closed:
			return
		}
		want := min(int64(directChunk), (end-pos+directAlign-1)&^(directAlign-1))
		k, err := readAt(d.f, buf[:want], pos)
		if errors.Is(err, syscall.EINVAL) {
			// The file system took the O_DIRECT open but not this read.
			k, err = readAt(fallback, buf[:want], pos)
		}
		c := chunk{buf: buf, err: err}
		if k > int(skip) {
			c.data = buf[skip:min(int64(k), end-pos)]
		}
		select {
		case s.full <- c:
		case <-d.closed:
			return
		}
		if err != nil {
			return
		}
		pos += want
	}
}

// readAt fills b from offset off as far as the file goes: short only at
// the end of the file (io.EOF) or on an error.
func readAt(f *os.File, b []byte, off int64) (int, error) {
	n, err := f.ReadAt(b, off)
	if err == io.EOF && n == len(b) {
		err = nil
	}
	return n, err
}

// Read copies the next bytes of the section into p. At the end of the
// section it returns io.EOF, a read's error once its bytes are read, and
// os.ErrClosed after the File's Close.
func (s *directSection) Read(p []byte) (int, error) {
	for len(s.cur.data) == 0 {
		if err := s.cur.err; err != nil {
			s.release()
			return 0, err
		}
		if s.cur.buf != nil {
			s.free <- s.cur.buf
			s.cur.buf = nil
		}
		select {
		case <-s.file.closed:
			return 0, os.ErrClosed
		default:
		}
		c, ok := <-s.full
		if !ok {
			s.release()
			return 0, io.EOF
		}
		s.cur = c
	}
	n := copy(p, s.cur.data)
	s.cur.data = s.cur.data[n:]
	if s.left -= int64(n); s.left == 0 {
		// Its last byte read, the goroutine has sent its last chunk: the
		// buffers go back now. A reader that knows its length (a decoder
		// of n records) never asks for the io.EOF that would return them,
		// and buffers left to the GC grew the heap by the main node's
		// live bytes.
		s.free <- s.cur.buf
		s.cur.buf = nil
		s.release()
	}
	return n, nil
}

// release gives the section's buffers back to the pool once its goroutine
// has ended (s.full is closed).
func (s *directSection) release() {
	for {
		select {
		case b := <-s.free:
			s.file.putChunk(b)
		default:
			return
		}
	}
}
