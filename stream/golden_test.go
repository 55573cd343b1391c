package stream

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the streams and descriptions in testdata/")

// maxUpdates is the largest count whose promised size fits an int64.
const maxUpdates = (math.MaxInt64 - HeaderBytes) / RecordBytes

// binCase is one tiny binary stream of testdata/NAME.bin. Its description,
// a dump of its bytes and what the readers make of it are in NAME.txt.
type binCase struct {
	name, desc string
	data       func(testing.TB) []byte
	want       []Update // the updates read before the end or the error
	err        error    // the sentinel the stream ends with; nil for a good stream
	index      int64    // update index of err, -1 for the header
	openErr    error    // the sentinel Open fails with; nil if it opens
}

func cat(parts ...[]byte) []byte    { return bytes.Join(parts, nil) }
func hdr(v uint32, m uint64) []byte { return AppendHeader(nil, Header{Vertices: v, Updates: m}) }

var smallUpdates = []Update{ins(0, 1), ins(1, 2), ins(3, 0), del(1, 0), ins(2, 3)}

var binCases = []binCase{
	{name: "good_small", desc: "4 vertices, 5 updates: inserts and a delete that names its edge the other way round.",
		data: func(t testing.TB) []byte { return encode(t, 4, smallUpdates...) }, want: smallUpdates},
	{name: "good_one", desc: "The smallest good stream: 2 vertices, one insert.",
		data: func(t testing.TB) []byte { return encode(t, 2, ins(1, 0)) }, want: []Update{ins(1, 0)}},
	{name: "good_max_ids", desc: "2^32-1 vertices, so the largest id 4294967294 is in range.",
		data: func(t testing.TB) []byte {
			return encode(t, math.MaxUint32, ins(0, math.MaxUint32-1), del(math.MaxUint32-1, 0), ins(1, math.MaxUint32-1))
		},
		want: []Update{ins(0, math.MaxUint32-1), del(math.MaxUint32-1, 0), ins(1, math.MaxUint32-1)}},
	{name: "design_example_truncated",
		desc: "The example of DESIGN.md §1.1: the header for 1,024 vertices and 8,528 updates, then the first record INSERT(20,180), then nothing: a truncated file.",
		data: func(testing.TB) []byte {
			return []byte{0x00, 0x04, 0x00, 0x00, 0x50, 0x21, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
				0x00, 0x14, 0x00, 0x00, 0x00, 0xb4, 0x00, 0x00, 0x00}
		},
		want: []Update{ins(20, 180)}, err: ErrTruncated, index: 1, openErr: ErrTruncated},
	{name: "truncated_mid_record", desc: "The header promises 3 updates; the file stops 4 bytes into the third.",
		data: func(testing.TB) []byte {
			return cat(hdr(4, 3), record(0, 0, 1), record(1, 0, 1), record(0, 2, 3)[:4])
		},
		want: []Update{ins(0, 1), del(0, 1)}, err: ErrTruncated, index: 2, openErr: ErrTruncated},
	{name: "trailing_bytes", desc: "The header promises 2 updates; 3 stray bytes follow them.",
		data: func(testing.TB) []byte {
			return cat(hdr(4, 2), record(0, 0, 1), record(0, 1, 2), []byte{7, 7, 7})
		},
		want: []Update{ins(0, 1), ins(1, 2)}, err: ErrTrailing, index: 2, openErr: ErrTrailing},
	{name: "trailing_record", desc: "The header promises 1 update; 2 whole records follow.",
		data: func(testing.TB) []byte { return cat(hdr(4, 1), record(0, 0, 1), record(0, 1, 2)) },
		want: []Update{ins(0, 1)}, err: ErrTrailing, index: 1, openErr: ErrTrailing},
	{name: "bad_type_2", desc: "Update 1 has type byte 2: neither insert (0) nor delete (1).",
		data: func(testing.TB) []byte {
			return cat(hdr(4, 3), record(0, 0, 1), record(2, 1, 2), record(0, 2, 3))
		},
		want: []Update{ins(0, 1)}, err: ErrBadUpdateType, index: 1},
	{name: "bad_type_255", desc: "The first update has type byte 255.",
		data: func(testing.TB) []byte { return cat(hdr(4, 1), record(255, 1, 2)) },
		err:  ErrBadUpdateType, index: 0},
	{name: "src_out_of_range", desc: "Update 2 has src 4 in a stream of 4 vertices (ids are 0..3).",
		data: func(testing.TB) []byte {
			return cat(hdr(4, 3), record(0, 0, 1), record(0, 1, 2), record(0, 4, 1))
		},
		want: []Update{ins(0, 1), ins(1, 2)}, err: ErrVertexRange, index: 2},
	{name: "dst_out_of_range", desc: "The first update has dst 2^32-1 in a stream of 4 vertices.",
		data: func(testing.TB) []byte { return cat(hdr(4, 2), record(1, 1, math.MaxUint32), record(0, 1, 2)) },
		err:  ErrVertexRange, index: 0},
	{name: "self_loop", desc: "Update 1 is the self-loop (3,3).",
		data: func(testing.TB) []byte { return cat(hdr(4, 2), record(0, 0, 3), record(0, 3, 3)) },
		want: []Update{ins(0, 3)}, err: ErrSelfLoop, index: 1},
	{name: "empty", desc: "A file of 0 bytes.",
		data: func(testing.TB) []byte { return nil },
		err:  ErrEmpty, index: -1, openErr: ErrEmpty},
	{name: "header_only", desc: "A header for 4 vertices and 0 updates, and nothing else: a good stream of 4 isolated vertices.",
		data: func(testing.TB) []byte { return hdr(4, 0) }},
	{name: "header_only_trailing", desc: "A header for 4 vertices and 0 updates, then one record.",
		data: func(testing.TB) []byte { return cat(hdr(4, 0), record(0, 0, 1)) },
		err:  ErrTrailing, index: 0, openErr: ErrTrailing},
	{name: "partial_header", desc: "The first 7 of the 12 header bytes.",
		data: func(testing.TB) []byte { return hdr(4, 1)[:7] },
		err:  io.ErrUnexpectedEOF, index: -1, openErr: io.ErrUnexpectedEOF},
	{name: "one_vertex", desc: "A header for 1 vertex: no edge can exist.",
		data: func(testing.TB) []byte { return cat(hdr(1, 1), record(0, 0, 0)) },
		err:  ErrNoVertices, index: -1, openErr: ErrNoVertices},
	{name: "count_max", desc: "The header promises (2^63-1-12)/9 updates, the most whose size fits an int64; one record follows.",
		data: func(testing.TB) []byte { return cat(hdr(4, maxUpdates), record(0, 0, 1)) },
		want: []Update{ins(0, 1)}, err: ErrTruncated, index: 1, openErr: ErrTruncated},
	{name: "count_overflow", desc: "The header promises (2^63-1-12)/9 + 1 updates, a size past 2^63 bytes.",
		data: func(testing.TB) []byte { return cat(hdr(4, maxUpdates+1), record(0, 0, 1)) },
		err:  ErrTruncated, index: -1, openErr: ErrTruncated},
	{name: "count_2_64", desc: "The header's count is 2^64-1, the live marker: a file is refused.",
		data: func(testing.TB) []byte { return cat(hdr(4, math.MaxUint64), record(0, 0, 1)) },
		err:  ErrUnknownCount, index: -1, openErr: ErrUnknownCount},
}

// textCase is one tiny text stream of testdata/NAME.text, described in
// NAME.txt.
type textCase struct {
	name, desc string
	mode       string // "auto", "typed" or "untyped"
	data       string
	want       []Update
	err        error
	index      int64
	line       int64
}

var textCases = []textCase{
	{name: "typed_small", desc: "The updates of good_small.bin as a typed text stream.", mode: "typed",
		data: "4 5\n0 0 1\n0 1 2\n0 3 0\n1 1 0\n0 2 3\n", want: smallUpdates},
	{name: "typed_small_auto", desc: "typed_small read with the format detected from the first update line.", mode: "auto",
		data: "4 5\n0 0 1\n0 1 2\n0 3 0\n1 1 0\n0 2 3\n", want: smallUpdates},
	{name: "untyped_small", desc: "An untyped (cumulative) stream: 3 edges, all inserts.", mode: "untyped",
		data: "4 3\n0 1\n1 2\n2 3\n", want: []Update{ins(0, 1), ins(1, 2), ins(2, 3)}},
	{name: "untyped_small_auto", desc: "untyped_small read with the format detected.", mode: "auto",
		data: "4 3\n0 1\n1 2\n2 3\n", want: []Update{ins(0, 1), ins(1, 2), ins(2, 3)}},
	{name: "typed_crlf", desc: "CRLF line ends, tabs, runs of spaces, blank lines, and a last line with no line end.", mode: "auto",
		data: "\r\n4\t3\r\n0  0 1\r\n\r\n1\t1 0 \r\n0 2\t\t3", want: []Update{ins(0, 1), del(1, 0), ins(2, 3)}},
	{name: "typed_bad_line", desc: "Line 3 (update 1) has a field that is not a number.", mode: "typed",
		data: "4 3\n0 0 1\n0 1 x\n0 2 3\n", want: []Update{ins(0, 1)}, err: ErrSyntax, index: 1, line: 3},
	{name: "typed_negative", desc: "Line 2 has a negative id.", mode: "typed",
		data: "4 1\n0 -1 2\n", err: ErrSyntax, index: 0, line: 2},
	{name: "typed_bad_type", desc: "Line 3 has type 2.", mode: "typed",
		data: "4 2\n0 0 1\n2 1 2\n", want: []Update{ins(0, 1)}, err: ErrBadUpdateType, index: 1, line: 3},
	{name: "typed_out_of_range", desc: "Line 3 names vertex 4 of 4.", mode: "typed",
		data: "4 2\n0 0 1\n0 1 4\n", want: []Update{ins(0, 1)}, err: ErrVertexRange, index: 1, line: 3},
	{name: "typed_self_loop", desc: "Line 2 is the self-loop (2,2).", mode: "typed",
		data: "4 1\n0 2 2\n", err: ErrSelfLoop, index: 0, line: 2},
	{name: "typed_too_many", desc: "The header promises 1 update; 2 lines follow.", mode: "typed",
		data: "4 1\n0 0 1\n0 1 2\n", want: []Update{ins(0, 1)}, err: ErrTrailing, index: 1, line: 3},
	{name: "typed_too_few", desc: "The header promises 3 updates; 2 lines follow.", mode: "typed",
		data: "4 3\n0 0 1\n0 1 2\n", want: []Update{ins(0, 1), ins(1, 2)}, err: ErrTruncated, index: 2, line: 4},
	{name: "typed_as_untyped", desc: "A typed stream read as untyped: 3 fields where 2 are wanted.", mode: "untyped",
		data: "4 1\n0 0 1\n", err: ErrSyntax, index: 0, line: 2},
	{name: "untyped_mixed", desc: "Detected untyped from line 2; line 3 has 3 fields.", mode: "auto",
		data: "4 2\n0 1\n0 1 2\n", want: []Update{ins(0, 1)}, err: ErrSyntax, index: 1, line: 3},
	{name: "untyped_out_of_range", desc: "Line 2 names vertex 4294967296, past uint32.", mode: "untyped",
		data: "4 1\n0 4294967296\n", err: ErrSyntax, index: 0, line: 2},
	{name: "text_empty", desc: "An empty text stream.", mode: "auto",
		data: "", err: ErrEmpty, index: -1},
	{name: "text_blank", desc: "Only blank lines.", mode: "auto",
		data: "\n \r\n\t\n", err: ErrEmpty, index: -1},
	{name: "text_header_only", desc: "A header for 4 vertices and 0 updates: a good stream of 4 isolated vertices.", mode: "auto",
		data: "4 0\n"},
	{name: "text_header_only_trailing", desc: "A header for 4 vertices and 0 updates, then an update line.", mode: "auto",
		data: "4 0\n0 1\n", err: ErrTrailing, index: 0, line: 2},
	{name: "typed_lone_cr", desc: "Old Mac OS line ends: a lone CR ends each line.", mode: "auto",
		data: "4 3\r0 0 1\r0 1 2\r1 1 0\r", want: []Update{ins(0, 1), ins(1, 2), del(1, 0)}},
	{name: "untyped_mixed_ends", desc: "LF, CRLF and lone CR line ends in one file; CR then CRLF is a blank line.", mode: "auto",
		data: "4 3\r\n0 1\r1 2\r\r\n2 3", want: []Update{ins(0, 1), ins(1, 2), ins(2, 3)}},
	{name: "untyped_lone_cr_bad", desc: "A bad third update after lone CRs: the line number counts them.", mode: "auto",
		data: "4 3\r0 1\r1 2\r2 x\r", want: []Update{ins(0, 1), ins(1, 2)}, err: ErrSyntax, index: 2, line: 4},
	{name: "text_bad_header", desc: "A header whose count is not a number.", mode: "auto",
		data: "4 x\n0 1\n", err: ErrSyntax, index: -1, line: 1},
	{name: "text_one_vertex", desc: "A header for 1 vertex.", mode: "auto",
		data: "1 1\n0 0\n", err: ErrNoVertices, index: -1, line: 1},
}

func newTextReaderMode(r io.Reader, name, mode string) (*TextReader, error) {
	switch mode {
	case "typed":
		return NewTextReader(r, name, true)
	case "untyped":
		return NewTextReader(r, name, false)
	}
	return NewTextReaderAuto(r, name)
}

// describeSource writes the header and every update of src, and how it ends.
func describeSource(b *strings.Builder, src Source) {
	h := src.Header()
	fmt.Fprintf(b, "header: %d vertices, %d updates\n", h.Vertices, h.Updates)
	us, err := readAll(src, 2)
	for i, u := range us {
		fmt.Fprintf(b, "update %d: %s %d %d\n", i, u.Type, u.Src, u.Dst)
	}
	if err != nil {
		fmt.Fprintf(b, "error: %v\n", err)
	} else {
		b.WriteString("end\n")
	}
}

// hexDump shows a binary stream split into its header and records.
func hexDump(b *strings.Builder, data []byte) {
	row := func(label string, p []byte) {
		fmt.Fprintf(b, "%-12s", label)
		for _, c := range p {
			fmt.Fprintf(b, " %02x", c)
		}
		b.WriteByte('\n')
	}
	if len(data) < HeaderBytes {
		row("part header", data)
		return
	}
	row("header", data[:HeaderBytes])
	rest := data[HeaderBytes:]
	for i := 0; len(rest) >= RecordBytes; i++ {
		row(fmt.Sprintf("record %d", i), rest[:RecordBytes])
		rest = rest[RecordBytes:]
	}
	if len(rest) > 0 {
		row("rest", rest)
	}
}

func binDescription(c binCase, data []byte, path string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s.bin: %s\n(Written by go test -run TestGolden -update; edit golden_test.go, not this file.)\n\n", c.name, c.desc)
	fmt.Fprintf(&b, "bytes: %d\n", len(data))
	hexDump(&b, data)
	b.WriteString("\nNewReader:\n")
	if r, err := NewReader(bytes.NewReader(data)); err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	} else {
		describeSource(&b, r)
	}
	b.WriteString("\nOpen:\n")
	if f, err := Open(path); err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	} else {
		describeSource(&b, f.Reader(0, f.Header().Updates))
		f.Close()
	}
	return b.String()
}

func textDescription(c textCase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s.text: %s\n(Written by go test -run TestGolden -update; edit golden_test.go, not this file.)\n\n", c.name, c.desc)
	fmt.Fprintf(&b, "lines: %q\n\nNewTextReader (%s):\n", strings.SplitAfter(c.data, "\n"), c.mode)
	path := filepath.Join("testdata", c.name+".text")
	if r, err := newTextReaderMode(strings.NewReader(c.data), path, c.mode); err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	} else {
		describeSource(&b, r)
	}
	return b.String()
}

// TestGolden checks that testdata/ holds exactly the streams of binCases
// and textCases and that their descriptions say what the readers do with
// them. Run it with -update to rewrite them, and review the diff.
func TestGolden(t *testing.T) {
	check := func(t *testing.T, path string, want []byte) {
		t.Helper()
		if *update {
			requireNoError(t, os.WriteFile(path, want, 0o644))
			return
		}
		got, err := os.ReadFile(path)
		requireNoError(t, err)
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what golden_test.go makes; run go test -run TestGolden -update and review the diff\ngot:\n%s\nwant:\n%s", path, got, want)
		}
	}
	seen := map[string]bool{}
	for _, c := range binCases {
		t.Run(c.name, func(t *testing.T) {
			if seen[c.name] {
				t.Fatalf("two cases named %s", c.name)
			}
			seen[c.name] = true
			bin := filepath.Join("testdata", c.name+".bin")
			data := c.data(t)
			check(t, bin, data)
			check(t, filepath.Join("testdata", c.name+".txt"), []byte(binDescription(c, data, bin)))
		})
	}
	for _, c := range textCases {
		t.Run(c.name, func(t *testing.T) {
			if seen[c.name] {
				t.Fatalf("two cases named %s", c.name)
			}
			seen[c.name] = true
			check(t, filepath.Join("testdata", c.name+".text"), []byte(c.data))
			check(t, filepath.Join("testdata", c.name+".txt"), []byte(textDescription(c)))
		})
	}
	// Every file in testdata/ belongs to a case, so none is stale.
	files, err := filepath.Glob(filepath.Join("testdata", "*.*"))
	requireNoError(t, err)
	for _, f := range files {
		base := filepath.Base(f)
		if name, _, _ := strings.Cut(base, "."); !seen[name] {
			t.Errorf("%s belongs to no case in golden_test.go; delete it", f)
		}
	}
}

// TestDesignExample checks the bytes of design_example_truncated.bin
// against the start of the real multiples stream, whose header and first
// record DESIGN.md quotes.
func TestDesignExample(t *testing.T) {
	const path = "../testdata/multiples_graph_1024_stream.data"
	real, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s: %v", path, err)
	}
	requireNoError(t, err)
	ex := binCases[3]
	if ex.name != "design_example_truncated" {
		t.Fatalf("binCases[3] is %s", ex.name)
	}
	want := ex.data(t)
	if !bytes.HasPrefix(real, want) {
		t.Errorf("%s starts % x, DESIGN.md's example is % x", path, real[:len(want)], want)
	}
	f, err := Open(path)
	requireNoError(t, err)
	defer f.Close()
	if h := f.Header(); h != (Header{Vertices: 1024, Updates: 8528}) {
		t.Errorf("header %+v, want 1024 vertices and 8528 updates", h)
	}
	us, err := readAll(f.Reader(0, f.Header().Updates), 1000)
	requireNoError(t, err)
	dels := 0
	for _, u := range us {
		if u.Type == Delete {
			dels++
		}
	}
	if len(us) != 8528 || dels != 1661 { // DESIGN.md §6
		t.Errorf("%d updates, %d deletes; want 8528 and 1661", len(us), dels)
	}
}
