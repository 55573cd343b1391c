package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sketchcc/checkpoint"
	"sketchcc/internal/testgraph"
	"sketchcc/offline/streamgen"
)

// labelsOf runs main-node on path with args and returns its --labels.
func labelsOf(t *testing.T, path string, args ...string) []uint32 {
	t.Helper()
	labels := filepath.Join(t.TempDir(), "labels.txt")
	r := runMain(t, append([]string{"--stream", path, "--labels", labels}, args...)...)
	if r.code != 0 {
		t.Fatalf("%s %v: %v", path, args, r)
	}
	var out []uint32
	for i, p := range readPairs(t, labels) {
		if p[0] != uint32(i) {
			t.Fatalf("%s: label line %d is for vertex %d", path, i+1, p[0])
		}
		out = append(out, p[1])
	}
	return out
}

// TestPackedStream: main-node reads the packed copy of kron12 and of
// ca-GrQc (from ../shared/data) natively, with 1, 2 and 4 readers, and
// labels every vertex as the union-find over the final graph and as the
// binary run do.
func TestPackedStream(t *testing.T) {
	dir := t.TempDir()
	kron := filepath.Join(dir, "kron12.bin")
	out, err := os.Create(kron)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := streamgen.Kron(context.Background(), streamgen.DefaultKronConfig(12, 1), out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{kron, "../../testdata/ca-GrQc.bin"} {
		packed := testgraph.PackCopy(t, bin, dir)
		_, _, truth := oracle(t, bin)
		want := truth.Labels()
		if got := labelsOf(t, bin); !slices.Equal(got, want) {
			t.Fatalf("%s: the binary run's labels differ from the union-find's", bin)
		}
		for _, readers := range []string{"1", "2", "4"} {
			if got := labelsOf(t, packed, "--readers", readers); !slices.Equal(got, want) {
				t.Errorf("%s --readers %s: labels differ from the union-find's and the binary run's (%d components)",
					packed, readers, truth.Sets())
			}
		}
	}
}

// TestPackedResumeAcrossFormats: a checkpoint taken on a binary stream
// resumes on its packed copy and one taken on the packed copy resumes on
// the binary stream, with one reader and two, to the union-find's answer;
// both checkpoints hold the binary records' digest.
func TestPackedResumeAcrossFormats(t *testing.T) {
	const vertices, n = 2000, 300_000
	dir := t.TempDir()
	bin := filepath.Join(dir, "pairs.bin")
	writePairsStream(t, bin, vertices, n, 5)
	packed := testgraph.PackCopy(t, bin, dir)
	_, _, truth := oracle(t, bin)
	for _, tc := range []struct{ from, to string }{{bin, packed}, {packed, bin}} {
		for _, readers := range []string{"1", "2"} {
			name := fmt.Sprintf("%s to %s, --readers %s", filepath.Base(tc.from), filepath.Base(tc.to), readers)
			ck := filepath.Join(t.TempDir(), "ck")
			r := runMain(t, "--stream", tc.from, "--readers", readers, "--checkpoint-dir", ck, "--checkpoint-every", "1ns", "--json")
			if r.code != 0 || components(r.stdout) != truth.Sets() {
				t.Fatalf("%s, checkpointing: want %d components: %v", name, truth.Sets(), r)
			}
			m, _, err := checkpoint.Read(ck)
			if err != nil {
				t.Fatal(err)
			}
			if m.Updates == 0 || m.Prefix.Records != m.Updates || m.Prefix.CRC != prefixCRC(t, bin, m.Updates) {
				t.Fatalf("%s: checkpoint at %d with prefix %+v; the binary file's first %d records hash to %#08x",
					name, m.Updates, m.Prefix, m.Updates, prefixCRC(t, bin, m.Updates))
			}
			r = runMain(t, "--stream", tc.to, "--readers", readers, "--resume", ck, "--json")
			if r.code != 0 || components(r.stdout) != truth.Sets() || !strings.Contains(r.stdout, fmt.Sprintf(`"resumed_from":%d`, m.Updates)) {
				t.Fatalf("%s: want %d components, resumed from %d: %v", name, truth.Sets(), m.Updates, r)
			}
		}
	}
}

// TestPackedBadInput: a packed file cut short, with a bit flipped in a
// block, or with a bad header checksum ends the run with exit 1, no
// answer, and a message naming the file, the block and its byte offset.
func TestPackedBadInput(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pairs.bin")
	writePairsStream(t, bin, 2000, 300_000, 6)
	data, err := os.ReadFile(testgraph.PackCopy(t, bin, dir))
	if err != nil {
		t.Fatal(err)
	}
	// Block 2 starts after the header and two blocks of 65,536 records
	// of 1 + 2·11 bits and their checksums.
	blk2 := 32 + 2*(4+65536*23/8)
	flipped := slices.Clone(data)
	flipped[blk2+4000] ^= 0x04
	badHeader := slices.Clone(data)
	badHeader[13] ^= 1
	for _, tc := range []struct {
		name   string
		data   []byte
		places []string
	}{
		{"truncated", data[:blk2+100], []string{fmt.Sprintf("update 131072 at byte offset %d", blk2), "truncated",
			fmt.Sprintf("file is %d bytes", blk2+100), "in 5 blocks"}},
		{"bit-flipped", flipped, []string{fmt.Sprintf("update 131072 at byte offset %d", blk2), "checksum mismatch",
			"block 2 of 5, records [131072, 196608)"}},
		{"bad-header", badHeader, []string{"header", "checksum mismatch"}},
	} {
		path := writeFile(t, tc.name+".packed", tc.data)
		for _, readers := range []string{"1", "2", "4"} {
			r := runBinary(t, "--stream", path, "--readers", readers, "--json")
			if r.code != 1 || r.stdout != "" || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("%s --readers %s: want exit 1 and no answer: %v", tc.name, readers, r)
			}
			for _, want := range append([]string{path}, tc.places...) {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("%s --readers %s: stderr does not say %q: %v", tc.name, readers, want, r)
				}
			}
		}
	}
}
