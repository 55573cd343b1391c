package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"
)

// TestBinaryCases reads every testdata stream with NewReader through each
// iotest wrapper and several chunk sizes, and with Open: the updates and
// the error must be the same every way, and the error must be the case's
// sentinel at the case's place.
func TestBinaryCases(t *testing.T) {
	for _, c := range binCases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("testdata", c.name+".bin")
			data, err := os.ReadFile(path)
			requireNoError(t, err)
			at := where{index: c.index, offset: 0}
			if c.index >= 0 {
				at.offset = RecordOffset(uint64(c.index))
			}

			for _, w := range wrappers {
				for _, chunk := range []int{1, 2, 4096} {
					r, err := NewReader(w.wrap(bytes.NewReader(data)))
					if c.index < 0 {
						if r != nil {
							t.Fatalf("%s: NewReader returned a Reader and %v", w.name, err)
						}
						if w.name == "timeout" && errors.Is(err, iotest.ErrTimeout) && len(data) > 0 {
							// NewReader returns no Reader to retry with: a
							// header cut short by a timeout is an error. The
							// wrapper times out on its second read, so only a
							// header not read in one call meets it.
							continue
						}
						checkFormatError(t, err, c.err, at, "")
						continue
					}
					requireNoError(t, err)
					got, err := readAll(r, chunk)
					if !slices.Equal(got, c.want) {
						t.Errorf("%s/chunk=%d: updates %v, want %v", w.name, chunk, got, c.want)
					}
					if c.err == nil {
						requireNoError(t, err)
					} else {
						checkFormatError(t, err, c.err, at, "")
					}
				}
			}

			f, err := Open(path)
			if c.openErr != nil {
				if f != nil {
					t.Fatalf("Open returned a File and %v", err)
				}
				// A whole header and the wrong size: Open names the first
				// update cut short, or the first past the promised count,
				// as a read would.
				openAt := where{index: -1, offset: 0}
				if c.index >= 0 {
					openAt = at
				}
				checkFormatError(t, err, c.openErr, openAt, path)
				if errors.Is(c.openErr, ErrTruncated) || errors.Is(c.openErr, ErrTrailing) {
					// Both sizes, so the operator sees by how much.
					if size := fmt.Sprintf("file is %d bytes", len(data)); !strings.Contains(err.Error(), size) {
						t.Errorf("message %q does not say %q", err, size)
					}
					promised := "more than 2^63 bytes"
					if h := DecodeHeader(data); h.Updates <= maxUpdates {
						promised = fmt.Sprintf("%s = %d bytes", UpdateCount(h.Updates), RecordOffset(h.Updates))
					}
					if !strings.Contains(err.Error(), promised) {
						t.Errorf("message %q does not say %q", err, promised)
					}
				}
				return
			}
			requireNoError(t, err)
			defer f.Close()
			r := f.Reader(0, f.Header().Updates)
			var got []Update
			for r.Next() {
				got = append(got, r.Update())
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("Open: updates %v, want %v", got, c.want)
			}
			if c.err == nil {
				requireNoError(t, r.Err())
			} else {
				checkFormatError(t, r.Err(), c.err, at, path)
			}
			// ReadRaw with BadRecord: the same updates, the same error.
			got, err = readAllRaw(f.Reader(0, f.Header().Updates))
			if !slices.Equal(got, c.want) {
				t.Errorf("ReadRaw: updates %v, want %v", got, c.want)
			}
			if c.err == nil {
				requireNoError(t, err)
			} else {
				checkFormatError(t, err, c.err, at, path)
			}
		})
	}
}

// TestOpen_Failure covers the paths that cannot be opened as streams.
func TestOpen_Failure(t *testing.T) {
	f := func(t *testing.T, path string, want error) {
		t.Helper()
		s, err := Open(path)
		if s != nil || !errors.Is(err, want) {
			t.Fatalf("Open(%q) = %v, %v; want an error wrapping %v", path, s, err, want)
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("message %q does not name %s", err, path)
		}
	}
	dir := t.TempDir()
	t.Run("nonexistent", func(t *testing.T) { f(t, filepath.Join(dir, "no-such.bin"), fs.ErrNotExist) })
	t.Run("directory", func(t *testing.T) { f(t, dir, syscall.EISDIR) })
	t.Run("permission", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads files of mode 0")
		}
		p := filepath.Join(dir, "secret.bin")
		requireNoError(t, os.WriteFile(p, encode(t, 4, smallUpdates...), 0))
		f(t, p, fs.ErrPermission)
	})
}

// randomUpdates returns n well-formed-looking updates over vertices ids.
func randomUpdates(rng *rand.Rand, vertices uint32, n int) []Update {
	us := make([]Update, n)
	for i := range us {
		s := rng.Uint32N(vertices)
		d := rng.Uint32N(vertices - 1)
		if d >= s {
			d++
		}
		us[i] = Update{Type: UpdateType(rng.IntN(2)), Edge: Edge{Src: s, Dst: d}}
	}
	return us
}

// TestRoundTrip writes random streams with Writer and reads them back
// through each iotest wrapper.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		vertices uint32
		n        int
	}{{2, 1}, {3, 10}, {1000, 1000}, {1 << 31, 5000}, {1 << 20, 300_000}} {
		us := randomUpdates(rng, tc.vertices, tc.n)
		data := encode(t, tc.vertices, us...)
		if len(data) != HeaderBytes+RecordBytes*tc.n {
			t.Fatalf("%d updates encode to %d bytes", tc.n, len(data))
		}
		for _, w := range wrappers {
			t.Run(fmt.Sprintf("vertices=%d/updates=%d/%s", tc.vertices, tc.n, w.name), func(t *testing.T) {
				r, err := NewReader(w.wrap(bytes.NewReader(data)))
				requireNoError(t, err)
				if h := r.Header(); h != (Header{tc.vertices, uint64(tc.n)}) {
					t.Fatalf("header %+v", h)
				}
				got, err := readAll(r, 1000)
				requireNoError(t, err)
				if !slices.Equal(got, us) {
					t.Fatalf("read back %d updates, differing from the %d written", len(got), len(us))
				}
			})
		}
	}
}

func writeFile(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "stream.bin")
	requireNoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// TestFileRanges reads one file through Readers of disjoint ranges that
// cover it, concurrently, and checks that they give the whole stream.
func TestFileRanges(t *testing.T) {
	const n = 200_000 // more than one Reader buffer of 2^17 records
	rng := rand.New(rand.NewPCG(3, 4))
	us := randomUpdates(rng, 5000, n)
	f, err := Open(writeFile(t, encode(t, 5000, us...)))
	requireNoError(t, err)
	defer f.Close()

	for _, parts := range []int{1, 2, 7, 64} {
		t.Run(fmt.Sprintf("parts=%d", parts), func(t *testing.T) {
			// Random cut points, including empty ranges at the ends.
			cuts := []uint64{0, n}
			for range parts - 1 {
				cuts = append(cuts, rng.Uint64N(n+1))
			}
			slices.Sort(cuts)
			if all := readRanges(t, f, cuts, 1000); !slices.Equal(all, us) {
				t.Errorf("the ranges together differ from the stream")
			}
		})
	}
	t.Run("past-end", func(t *testing.T) {
		got, err := readAll(f.Reader(n-1, n+100), 10)
		requireNoError(t, err)
		if !slices.Equal(got, us[n-1:]) {
			t.Errorf("Reader(n-1, n+100) = %v, want the last update", got)
		}
		got, err = readAll(f.Reader(n+5, n+100), 10)
		if err != nil || len(got) != 0 {
			t.Errorf("Reader(n+5, n+100) = %v, %v; want nothing", got, err)
		}
	})
}

// TestFileRanges_BadRecord checks that a range Reader reports a bad
// record with its absolute index and offset, and that ranges before it
// are unaffected.
func TestFileRanges_BadRecord(t *testing.T) {
	const n, bad = 1000, 617
	us := randomUpdates(rand.New(rand.NewPCG(5, 6)), 100, n)
	data := encode(t, 100, us...)
	data[RecordOffset(bad)] = 9 // type byte
	path := writeFile(t, data)
	f, err := Open(path)
	requireNoError(t, err)
	defer f.Close()

	got, err := readAll(f.Reader(0, bad), 7)
	if err != nil || !slices.Equal(got, us[:bad]) {
		t.Errorf("range before the bad record: %d updates, %v", len(got), err)
	}
	got, err = readAll(f.Reader(600, 700), 7)
	if !slices.Equal(got, us[600:bad]) {
		t.Errorf("range with the bad record: %d updates, want %d", len(got), bad-600)
	}
	checkFormatError(t, err, ErrBadUpdateType, where{index: bad, offset: RecordOffset(bad)}, path)
}

// TestOpen_Pipe reads a stream through a named pipe, which has no size to
// check and cannot be read at an offset.
func TestOpen_Pipe(t *testing.T) {
	us := randomUpdates(rand.New(rand.NewPCG(7, 8)), 50, 1000)
	for _, tc := range []struct {
		name  string
		data  []byte
		count int
		err   error
		index int64
	}{
		{"whole", encode(t, 50, us...), 1000, nil, 0},
		{"truncated", encode(t, 50, us...)[:500], (500 - HeaderBytes) / RecordBytes, ErrTruncated, (500 - HeaderBytes) / RecordBytes},
		{"trailing", append(encode(t, 50, us...), 0), 1000, ErrTrailing, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fifo")
			requireNoError(t, syscall.Mkfifo(path, 0o600))
			var wg sync.WaitGroup
			defer wg.Wait()
			wg.Go(func() {
				w, err := os.OpenFile(path, os.O_WRONLY, 0)
				if err != nil {
					t.Error(err)
					return
				}
				w.Write(tc.data) // the reader may stop early
				w.Close()
			})
			f, err := Open(path)
			requireNoError(t, err)
			defer f.Close()
			if _, err := f.Reader(10, 20).Read(make([]Update, 1)); !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("Reader(10, 20) on a pipe: %v, want errors.ErrUnsupported", err)
			}
			got, err := readAll(f.Reader(0, f.Header().Updates), 64)
			if !slices.Equal(got, us[:tc.count]) {
				t.Errorf("%d updates, want %d", len(got), tc.count)
			}
			if tc.err == nil {
				requireNoError(t, err)
			} else {
				checkFormatError(t, err, tc.err, where{index: tc.index, offset: RecordOffset(uint64(tc.index))}, path)
			}
			if _, err := f.Reader(0, 5).Read(make([]Update, 1)); !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("a second Reader on a pipe: %v, want errors.ErrUnsupported", err)
			}
			io.Copy(io.Discard, f.f) // let the writer finish
		})
	}
}

// TestNext checks the Next/Update/Err loop on a good and a bad stream.
func TestNext(t *testing.T) {
	r, err := NewReader(bytes.NewReader(encode(t, 4, smallUpdates...)))
	requireNoError(t, err)
	var got []Update
	for r.Next() {
		got = append(got, r.Update())
	}
	if r.Err() != nil || !slices.Equal(got, smallUpdates) {
		t.Errorf("Next gave %v, %v", got, r.Err())
	}
	if r.Next() {
		t.Error("Next after the end returned true")
	}

	data := cat(hdr(4, 2), record(0, 1, 2), record(0, 2, 2))
	r, err = NewReader(bytes.NewReader(data))
	requireNoError(t, err)
	got = got[:0]
	for r.Next() {
		got = append(got, r.Update())
	}
	if !slices.Equal(got, []Update{ins(1, 2)}) {
		t.Errorf("Next gave %v", got)
	}
	checkFormatError(t, r.Err(), ErrSelfLoop, where{index: 1, offset: 21}, "")
}

// TestRead_EmptyDst checks that a Read of no updates neither consumes nor
// fails.
func TestRead_EmptyDst(t *testing.T) {
	r, err := NewReader(bytes.NewReader(encode(t, 4, smallUpdates...)))
	requireNoError(t, err)
	if n, err := r.Read(nil); n != 0 || err != nil {
		t.Errorf("Read(nil) = %d, %v", n, err)
	}
	got, err := readAll(r, 3)
	if err != nil || !slices.Equal(got, smallUpdates) {
		t.Errorf("after Read(nil): %v, %v", got, err)
	}
}

// TestUnknownCountRefused: a header with the live marker is a live
// stream's, which only a live input reads: NewReader refuses it with
// ErrUnknownCount.
func TestUnknownCountRefused(t *testing.T) {
	b := AppendHeader(nil, Header{Vertices: 4, Updates: UnknownUpdates})
	if _, err := NewReader(bytes.NewReader(b)); !errors.Is(err, ErrUnknownCount) {
		t.Fatalf("NewReader: %v, want ErrUnknownCount", err)
	}
}

// readRanges reads f's ranges [cuts[i], cuts[i+1]) concurrently, in reads
// of chunk updates, checks each range's length, and returns the updates
// of all of them in order.
func readRanges(t *testing.T, f *File, cuts []uint64, chunk int) []Update {
	t.Helper()
	got := make([][]Update, len(cuts)-1)
	errs := make([]error, len(cuts)-1)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i], errs[i] = readAll(f.Reader(cuts[i], cuts[i+1]), chunk) })
	}
	wg.Wait()
	var all []Update
	for i := range got {
		requireNoError(t, errs[i])
		if len(got[i]) != int(cuts[i+1]-cuts[i]) {
			t.Errorf("range [%d,%d) gave %d updates", cuts[i], cuts[i+1], len(got[i]))
		}
		all = append(all, got[i]...)
	}
	return all
}
