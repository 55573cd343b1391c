package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// packJSON is the part of pack's and unpack's summary these tests read.
type packJSON struct {
	Output         string  `json:"output"`
	Format         string  `json:"format"`
	Updates        uint64  `json:"updates"`
	Bytes          int64   `json:"bytes"`
	BytesPerUpdate float64 `json:"bytes_per_update"`
	CRC32C         string  `json:"crc32c"`
}

// roundTrip packs the binary stream at in, unpacks the packed copy, and
// checks that the result is byte-identical, that validate and cc see the
// packed copy as the original, and that the packed copy is the smaller
// (from 16 updates: a stream of 3 updates packs into one byte more than
// its 39), and returns pack's summary.
func roundTrip(t *testing.T, in string) packJSON {
	t.Helper()
	dir := t.TempDir()
	var p, u packJSON
	mustRun(t, &p, "pack", in, "-o", filepath.Join(dir, "s.packed"), "--log-level", "warn")
	mustRun(t, &u, "unpack", p.Output, "-o", filepath.Join(dir, "s.bin"), "--log-level", "warn")
	a, err := os.ReadFile(in)
	requireNoError(t, err)
	b, err := os.ReadFile(u.Output)
	requireNoError(t, err)
	if !bytes.Equal(a, b) {
		t.Fatalf("%s: pack then unpack gives %d bytes, differing from the %d of the input", in, len(b), len(a))
	}
	if p.Format != "packed" || u.Format != "binary" || p.CRC32C != u.CRC32C || p.Updates != u.Updates ||
		u.Bytes != int64(len(a)) || (p.Bytes >= u.Bytes && p.Updates >= 16) {
		t.Fatalf("%s: pack %+v, unpack %+v", in, p, u)
	}
	var c1, c2, v ccJSON
	mustRun(t, &c1, "cc", in, "--log-level", "warn")
	mustRun(t, &c2, "cc", p.Output, "--log-level", "warn")
	mustRun(t, &v, "validate", p.Output, "--log-level", "warn")
	if c1 != c2 || !v.Valid || v.Components != c1.Components {
		t.Fatalf("%s: cc of the binary %+v, of the packed %+v, validate %+v", in, c1, c2, v)
	}
	return p
}

// TestPack_RealStreams round-trips the real streams of testdata (the
// GraphZeppelin multiples stream and graphs converted by streamtool).
func TestPack_RealStreams(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*.bin"))
	requireNoError(t, err)
	files = append(files, filepath.Join("..", "..", "testdata", "multiples_graph_1024_stream.data"))
	if len(files) < 5 {
		t.Fatalf("only %d streams in testdata", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { roundTrip(t, f) })
	}
}

// TestPack_Generated round-trips generated streams, and checks that gen
// --format packed writes what pack makes of gen's binary stream.
func TestPack_Generated(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"gen", "kron", "--scale", "9", "--seed", "5", "--no-cum"},
		{"gen", "erdos", "--vertices", "3000", "--density", "0.01", "--seed", "2", "--no-cum"},
	} {
		var bin, packed genJSON
		mustRun(t, &bin, append(args, "-o", filepath.Join(dir, "g.bin"), "--log-level", "warn")...)
		mustRun(t, &packed, append(args, "-o", filepath.Join(dir, "g.packed"), "--format", "packed", "--log-level", "warn")...)
		p := roundTrip(t, bin.Output)
		a, err := os.ReadFile(p.Output)
		requireNoError(t, err)
		b, err := os.ReadFile(packed.Output)
		requireNoError(t, err)
		if !bytes.Equal(a, b) {
			t.Fatalf("%q --format packed: %d bytes, differing from the %d of pack of the binary stream", args, len(b), len(a))
		}
		if packed.Components != bin.Components || packed.Updates != bin.Updates {
			t.Fatalf("%q: binary %+v, packed %+v", args, bin, packed)
		}
	}
}

// genPacked generates a packed Erdős–Rényi stream of 300 vertices and
// two blocks in dir and returns gen's summary and the
// file's bytes.
func genPacked(t *testing.T, dir string) (genJSON, []byte) {
	t.Helper()
	var g genJSON
	mustRun(t, &g, "gen", "erdos", "--vertices", "300", "--density", "0.9", "--no-cum", "--format", "packed",
		"-o", filepath.Join(dir, "g.packed"), "--log-level", "warn")
	data, err := os.ReadFile(g.Output)
	requireNoError(t, err)
	return g, data
}

// TestPack_BadInput: a corrupt packed file is an error naming the block,
// and pack leaves no output.
func TestPack_BadInput(t *testing.T) {
	dir := t.TempDir()
	g, data := genPacked(t, dir)
	data[len(data)-3] ^= 0x10
	requireNoError(t, os.WriteFile(g.Output, data, 0o644))
	code, _, stderr := streamtool(t, "unpack", g.Output, "-o", filepath.Join(dir, "out.bin"))
	if code != 1 || !strings.Contains(stderr, "checksum mismatch (block 1 of 2, records [65536, ") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.bin")); !os.IsNotExist(err) {
		t.Fatalf("unpack of a bad input left out.bin: %v", err)
	}
}

// TestValidate_Packed: validate's verdict on a packed file that is cut
// short or has a bad block gives the packed header (300 vertices, not the
// 0 of the binary format's first word), the first record of the bad block
// and its byte offset.
func TestValidate_Packed(t *testing.T) {
	dir := t.TempDir()
	_, data := genPacked(t, dir)
	// Block 1 starts after the 32-byte header and block 0: its checksum
	// and 65,536 records of 1 + 2·9 bits.
	blk1 := int64(32 + 4 + 65536*19/8)
	flipped := slices.Clone(data)
	flipped[blk1+100] ^= 0x10
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{{"truncated", data[:blk1+50], "truncated"}, {"bad block", flipped, "checksum mismatch (block 1 of 2"}} {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".packed")
		requireNoError(t, os.WriteFile(p, tc.data, 0o644))
		code, out, errOut := streamtool(t, "validate", p)
		var v ccJSON
		if code != 1 || !strings.Contains(errOut, tc.want) || json.Unmarshal([]byte(out), &v) != nil {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q; want 1, a JSON verdict and %q", tc.name, code, out, errOut, tc.want)
		}
		if v.Valid || v.Header == nil || v.Header.Vertices != 300 ||
			v.Index == nil || *v.Index != 65536 || *v.Offset != blk1 {
			t.Errorf("%s: %+v (header %+v); want the header of 300 vertices, index 65536 at offset %d",
				tc.name, v, v.Header, blk1)
		}
	}
}
