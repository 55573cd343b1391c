package stream

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/iotest"
)

// FuzzPackedReader feeds arbitrary bytes to NewReader, seeded with
// the packed forms of the binary testdata streams and with their blocks
// cut small. It must never panic; whatever it returns must be valid
// updates, a prefix of the input's; an error must be a *FormatError or a
// short input; and an input that reads cleanly must be exactly what the
// PackedWriter (or, for an input a mutation left without the packed
// magic word, the binary Writer) writes for those updates, so that no
// other bytes pass.
func FuzzPackedReader(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "good_*.bin"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		requireNoError(f, err)
		r, err := NewReader(bytes.NewReader(b))
		requireNoError(f, err)
		us, err := readAll(r, 100)
		requireNoError(f, err)
		f.Add(pack(f, r.Header().Vertices, 8, us...))
		f.Add(pack(f, r.Header().Vertices, packedBlockRecords, us...))
	}
	f.Add(pack(f, 1000, 8, randomUpdatesSeed(1000, 30)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			checkStreamError(t, err)
			return
		}
		h := r.Header()
		us, err := readAll(r, 5)
		if uint64(len(us)) > h.Updates {
			t.Fatalf("%d updates, the header promises %d", len(us), h.Updates)
		}
		for i, u := range us {
			if bad := checkUpdate(u, h.Vertices); bad != "" {
				t.Fatalf("update %d %+v: %s", i, u, bad)
			}
		}
		if err == nil {
			// A mutation can leave a binary stream (no packed magic word):
			// it must then be what the binary writer writes.
			again, format := encode(t, h.Vertices, us...), "binary"
			if IsPacked(data) {
				l, _ := decodePackedHeader(data[:PackedHeaderBytes], "")
				again, format = pack(t, h.Vertices, l.blockRecords, us...), "packed"
			}
			if !bytes.Equal(again, data) {
				t.Fatalf("read cleanly %d updates from %d bytes that the %s writer writes as %d other bytes", len(us), len(data), format, len(again))
			}
		} else {
			checkStreamError(t, err)
			var fe *FormatError
			if errors.As(err, &fe) && fe.Index != int64(len(us)) {
				t.Fatalf("error at update %d after %d updates: %v", fe.Index, len(us), err)
			}
		}
		r2, err2 := NewReader(iotest.OneByteReader(bytes.NewReader(data)))
		requireNoError(t, err2)
		us2, err2 := readAll(r2, 1000)
		if !slices.Equal(us, us2) || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("one byte at a time: %d updates, %v; whole: %d updates, %v", len(us2), err2, len(us), err)
		}
	})
}
