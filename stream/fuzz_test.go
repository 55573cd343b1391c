package stream

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/iotest"
)

// addTestdata seeds f with every testdata file matching pattern, as
// image/png's fuzz test does.
func addTestdata(f *testing.F, pattern string) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds in testdata/%s: %v", pattern, err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// checkStreamError checks that err, which ended a stream, is bad input
// (a *FormatError) or a short input (io.ErrUnexpectedEOF).
func checkStreamError(t *testing.T, err error) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("error %v (%T) is neither a *FormatError nor io.ErrUnexpectedEOF", err, err)
	}
}

func FuzzReader(f *testing.F) {
	addTestdata(f, "*.bin")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			checkStreamError(t, err)
			return
		}
		h := r.Header()
		us, err := readAll(r, 3)
		if uint64(len(us)) > h.Updates {
			t.Fatalf("%d updates, the header promises %d", len(us), h.Updates)
		}
		for i, u := range us {
			if bad := checkUpdate(u, h.Vertices); bad != "" {
				t.Fatalf("update %d %+v: %s", i, u, bad)
			}
		}
		if err == nil {
			if want := RecordOffset(h.Updates); int64(len(data)) != want {
				t.Fatalf("clean end after %d updates of a %d-byte input; the header promises %d bytes", len(us), len(data), want)
			}
		} else {
			checkStreamError(t, err)
			var fe *FormatError
			if errors.As(err, &fe) && fe.Index != int64(len(us)) {
				t.Fatalf("error at update %d after %d updates: %v", fe.Index, len(us), err)
			}
		}
		// One byte at a time, the same.
		r, err2 := NewReader(iotest.OneByteReader(bytes.NewReader(data)))
		if err2 != nil {
			t.Fatalf("NewReader: %v one byte at a time, nil whole", err2)
		}
		us2, err2 := readAll(r, 1000)
		if !slices.Equal(us, us2) || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("one byte at a time: %d updates, %v; whole: %d updates, %v", len(us2), err2, len(us), err)
		}
		// Raw records checked by BadRecord, the same.
		r, _ = NewReader(bytes.NewReader(data))
		us3, err3 := readAllRaw(r)
		if !slices.Equal(us, us3) || (err == nil) != (err3 == nil) || (err != nil && err.Error() != err3.Error()) {
			t.Fatalf("ReadRaw: %d updates, %v; Read: %d updates, %v", len(us3), err3, len(us), err)
		}
	})
}

func FuzzTextReader(f *testing.F) {
	addTestdata(f, "*.text")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mode := range []string{"auto", "typed", "untyped"} {
			r, err := newTextReaderMode(bytes.NewReader(data), "fuzz.txt", mode)
			if err != nil {
				checkStreamError(t, err)
				continue
			}
			h := r.Header()
			us, err := readAll(r, 3)
			if uint64(len(us)) > h.Updates {
				t.Fatalf("%s: %d updates, the header promises %d", mode, len(us), h.Updates)
			}
			for i, u := range us {
				if bad := checkUpdate(u, h.Vertices); bad != "" {
					t.Fatalf("%s: update %d %+v: %s", mode, i, u, bad)
				}
				if mode == "untyped" && u.Type != Insert {
					t.Fatalf("untyped: update %d is %s", i, u.Type)
				}
			}
			if err == nil {
				if uint64(len(us)) != h.Updates {
					t.Fatalf("%s: clean end after %d of %d updates", mode, len(us), h.Updates)
				}
				continue
			}
			checkStreamError(t, err)
			var fe *FormatError
			if errors.As(err, &fe) && (fe.Index != int64(len(us)) || fe.Line < 2) {
				t.Fatalf("%s: error at update %d line %d after %d updates: %v", mode, fe.Index, fe.Line, len(us), err)
			}
		}
	})
}
