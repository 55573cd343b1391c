package stream

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// TestTextCases reads every testdata text stream through each iotest
// wrapper and several chunk sizes: the updates and the error must be the
// same every way, and the error must be the case's sentinel at the case's
// line, in a message that names the file.
func TestTextCases(t *testing.T) {
	for _, c := range textCases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("testdata", c.name+".text")
			data, err := os.ReadFile(path)
			requireNoError(t, err)
			at := where{index: c.index, offset: -1, line: c.line}
			for _, w := range wrappers {
				for _, chunk := range []int{1, 2, 4096} {
					r, err := newTextReaderMode(w.wrap(strings.NewReader(string(data))), path, c.mode)
					if c.index < 0 {
						if r != nil {
							t.Fatalf("%s: NewTextReader returned a reader and %v", w.name, err)
						}
						if w.name == "timeout" && errors.Is(err, iotest.ErrTimeout) {
							continue // no reader to retry with; see TestBinaryCases
						}
						checkFormatError(t, err, c.err, at, path)
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
						checkFormatError(t, err, c.err, at, path)
					}
				}
			}
		})
	}
}

// TestText_MatchesBinary reads random streams written in both formats,
// with each line end (LF, CRLF, lone CR): more than one buffer of text, so
// line ends fall across refills.
func TestText_MatchesBinary(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	us := randomUpdates(rng, 1<<20, 20_000) // > 64 KiB of text
	for _, end := range []string{"\n", "\r\n", "\r"} {
		var typed, untyped strings.Builder
		fmt.Fprintf(&typed, "%d %d%s", 1<<20, len(us), end)
		fmt.Fprintf(&untyped, "%d %d%s", 1<<20, len(us), end)
		for _, u := range us {
			fmt.Fprintf(&typed, "%d %d %d%s", u.Type, u.Src, u.Dst, end)
			fmt.Fprintf(&untyped, "%d %d%s", u.Src, u.Dst, end)
		}
		for _, w := range wrappers {
			r, err := NewTextReaderAuto(w.wrap(strings.NewReader(typed.String())), "")
			requireNoError(t, err)
			got, err := readAll(r, 100)
			if err != nil || !slices.Equal(got, us) {
				t.Errorf("%s, end %q: typed text read back %d updates, %v", w.name, end, len(got), err)
			}
			r, err = NewTextReaderAuto(w.wrap(strings.NewReader(untyped.String())), "")
			requireNoError(t, err)
			got, err = readAll(r, 100)
			if err != nil || len(got) != len(us) {
				t.Fatalf("%s, end %q: untyped text read back %d updates, %v", w.name, end, len(got), err)
			}
			for i := range got {
				if got[i].Edge != us[i].Edge || got[i].Type != Insert {
					t.Fatalf("%s, end %q: untyped line %d read back as %+v", w.name, end, i+2, got[i])
				}
			}
		}
	}
}

func TestText_LongLine(t *testing.T) {
	in := "4 2\n0 1\n" + strings.Repeat("1", maxTextLineBytes+10) + " 2\n"
	r, err := NewTextReaderAuto(strings.NewReader(in), "long.txt")
	requireNoError(t, err)
	got, err := readAll(r, 10)
	if !slices.Equal(got, []Update{ins(0, 1)}) {
		t.Errorf("updates %v", got)
	}
	checkFormatError(t, err, ErrSyntax, where{index: 1, offset: -1, line: 3}, "long.txt")
	if len(err.Error()) > 300 {
		t.Errorf("message of %d bytes quotes the whole line", len(err.Error()))
	}
}

// TestText_ReadError checks that a read error is reported with its cause
// and line, not as bad input.
func TestText_ReadError(t *testing.T) {
	boom := errors.New("boom")
	in := io.MultiReader(strings.NewReader("4 3\n0 1\n1 2\n"), iotest.ErrReader(boom))
	r, err := NewTextReaderAuto(in, "x.txt")
	requireNoError(t, err)
	got, err := readAll(r, 10)
	if !slices.Equal(got, []Update{ins(0, 1), ins(1, 2)}) {
		t.Errorf("updates %v", got)
	}
	var fe *FormatError
	if !errors.Is(err, boom) || errors.As(err, &fe) {
		t.Errorf("error %v (%T), want one wrapping boom that is no *FormatError", err, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "x.txt") || !strings.Contains(msg, "line 4") {
		t.Errorf("message %q does not name the file and line 4", msg)
	}
}

// TestText_Directory checks that reading a directory as text is a read
// error (EISDIR), not a syntax error.
func TestText_Directory(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(dir)
	requireNoError(t, err)
	defer f.Close()
	_, err = NewTextReaderAuto(f, dir)
	if err == nil || errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), dir) {
		t.Errorf("reading a directory: %v", err)
	}
}
