package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sketchcc/offline/edgelist"
	"sketchcc/offline/replay"
	"sketchcc/stream"
)

// convertJSON is the part of convert's summary these tests read.
type convertJSON struct {
	Vertices      uint32             `json:"vertices"`
	Edges         int                `json:"edges"`
	Components    int                `json:"components"`
	Lines         int64              `json:"lines"`
	HeaderSkipped int64              `json:"header_lines_skipped"`
	HeaderLines   []int64            `json:"header_lines_skipped_at"`
	BadSkipped    int64              `json:"bad_lines_skipped"`
	BadLines      []edgelist.BadLine `json:"bad_lines_skipped_first"`
	Notes         []string           `json:"notes"`
}

// unionFind is the exact answer for a converted stream: a plain
// union-find over the final graph of the binary file.
func unionFind(t *testing.T, path string) replay.Result {
	t.Helper()
	f, err := stream.Open(path)
	requireNoError(t, err)
	defer f.Close()
	res, _, err := replay.Run(f.Reader(0, f.Header().Updates), replay.Config{Name: path})
	requireNoError(t, err)
	return res
}

// TestConvert_Wild runs convert on the inputs of the wild (the files of
// offline/edgelist/wild_test.go as users would meet them) and compares
// each stream with the exact answer.
func TestConvert_Wild(t *testing.T) {
	tests := []struct {
		name, from, content string
		args                []string
		want                convertJSON // Vertices, Edges, Components, skips, notes
		mapWant             string      // the id map, if checked
	}{
		// Was: exit 0 with one edge.
		{name: "lone CR", from: "snap", content: "10 20\r30 40\r",
			want: convertJSON{Vertices: 4, Edges: 2, Components: 2, Lines: 2}, mapWant: "0 10\n1 20\n2 30\n3 40\n"},
		// Was: V 2, one edge, the first line taken for a header.
		{name: "huge id on line 1", from: "snap", content: "18446744073709551615 2\n3 4\n",
			want:    convertJSON{Vertices: 4, Edges: 2, Components: 2, Lines: 2},
			mapWant: "0 2\n1 3\n2 4\n3 18446744073709551615\n"},
		// Was: refused with "want integer ids".
		{name: "2^64-1", from: "snap", content: "0 1\n18446744073709551615 5\n",
			want:    convertJSON{Vertices: 4, Edges: 2, Components: 2, Lines: 2},
			mapWant: "0 0\n1 1\n2 5\n3 18446744073709551615\n"},
		// Was: refused at line 1.
		{name: "mtx without banner", from: "mtx", content: "3 3 2\n2 1\n3 2\n",
			want: convertJSON{Vertices: 3, Edges: 2, Components: 1, Lines: 3, Notes: []string{edgelist.NoBannerNote}}},
		// Was: refused at line 3.
		{name: "wrapped SNAP comment", from: "snap",
			content: "# Undirected graph\n# Legend:\n    2 = strong tie\n# Nodes: 3\n1 2 2\n2 3 1\n",
			want: convertJSON{Vertices: 3, Edges: 2, Components: 1, Lines: 6, HeaderSkipped: 1,
				HeaderLines: []int64{3}}},
		{name: "lenient", from: "snap", content: "1 2\nnot an edge\n3 4\n-5 6\n", args: []string{"--lenient"},
			want: convertJSON{Vertices: 4, Edges: 2, Components: 2, Lines: 4, BadSkipped: 2,
				BadLines: []edgelist.BadLine{
					{Line: 2, Text: "not an edge", Problem: `id "not" is not an unsigned integer`},
					{Line: 4, Text: "-5 6", Problem: "negative id -5: ids are unsigned 64-bit labels"}}}},
		// Was: refused ("no updates"); now 5 isolated vertices.
		{name: "empty graph", from: "mtx", content: "%%MatrixMarket matrix coordinate pattern symmetric\n5 5 0\n",
			want: convertJSON{Vertices: 5, Edges: 0, Components: 5, Lines: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeFile(t, dir, "in.dat", tc.content)
			out := filepath.Join(dir, "out.bin")
			var got convertJSON
			mustRun(t, &got, append([]string{"convert", "--from", tc.from, in, "-o", out}, tc.args...)...)
			if !equalConvert(got, tc.want) {
				t.Fatalf("summary %+v, want %+v", got, tc.want)
			}
			exact := unionFind(t, out)
			if exact.Vertices != tc.want.Vertices || exact.Edges != int64(tc.want.Edges) || exact.Components != tc.want.Components {
				t.Fatalf("union-find over the stream: %+v, want %d vertices, %d edges, %d components",
					exact, tc.want.Vertices, tc.want.Edges, tc.want.Components)
			}
			if tc.mapWant != "" {
				m, err := os.ReadFile(out + ".map")
				requireNoError(t, err)
				if string(m) != tc.mapWant {
					t.Fatalf("map %q, want %q", m, tc.mapWant)
				}
			}
		})
	}
}

func equalConvert(a, b convertJSON) bool {
	return a.Vertices == b.Vertices && a.Edges == b.Edges && a.Components == b.Components && a.Lines == b.Lines &&
		a.HeaderSkipped == b.HeaderSkipped && slices.Equal(a.HeaderLines, b.HeaderLines) &&
		a.BadSkipped == b.BadSkipped && slices.Equal(a.BadLines, b.BadLines) && slices.Equal(a.Notes, b.Notes)
}

// TestEmptyGraph checks that a stream of 0 updates, binary or text, is a
// graph of isolated vertices for validate and cc, and that a file with no
// header at all stays an error.
func TestEmptyGraph(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "e.bin", string(stream.AppendHeader(nil, stream.Header{Vertices: 5})))
	txt := writeFile(t, dir, "e.txt", "5 0\n")
	var v, c, ct ccJSON
	mustRun(t, &v, "validate", bin)
	mustRun(t, &c, "cc", bin)
	mustRun(t, &ct, "cc", "--format", "text", txt)
	for _, r := range []ccJSON{v, c, ct} {
		if r.Vertices != 5 || r.Updates != 0 || r.Edges != 0 || r.Components != 5 {
			t.Errorf("got %+v, want 5 vertices, 0 updates, 0 edges, 5 components", r)
		}
	}
	if !v.Valid {
		t.Errorf("validate: %+v", v)
	}
	for _, args := range [][]string{
		{"cc", writeFile(t, dir, "none.bin", "")},
		{"validate", filepath.Join(dir, "none.bin")},
		{"cc", "--format", "text", writeFile(t, dir, "none.txt", "")},
	} {
		code, _, errOut := streamtool(t, args...)
		if code != 1 || !strings.Contains(errOut, "no header") {
			t.Errorf("%q: exit %d, stderr %q; want 1 and \"no header\"", args, code, errOut)
		}
	}
}

// TestValidate_OnlyEstablished checks that an invalid stream's verdict
// holds no counts of the replay that stopped, only what was established.
func TestValidate_OnlyEstablished(t *testing.T) {
	dir := t.TempDir()
	ins := func(a, b uint32) stream.Update { return stream.Update{Edge: stream.Edge{Src: a, Dst: b}} }
	p := filepath.Join(dir, "dup.bin")
	requireNoError(t, os.WriteFile(p, encode(t, 4, ins(0, 1), ins(1, 0)), 0o644))
	code, out, _ := streamtool(t, "validate", p)
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); code != 1 || err != nil {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, k := range []string{"vertices", "updates", "edges", "components", "inserts", "deletes"} {
		if _, ok := v[k]; ok {
			t.Errorf("the verdict on an invalid stream holds %q: %s", k, out)
		}
	}
	h, _ := v["header"].(map[string]any)
	if v["valid"] != false || v["index"] != 1.0 || h["vertices"] != 4.0 || h["updates"] != 2.0 {
		t.Errorf("verdict %s", out)
	}
}

// TestWild_Binary runs the cases on the built binary: exit status,
// the message on stderr, and the answer on stdout.
func TestWild_Binary(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	file := func(name, content string) string { return writeFile(t, dir, name, content) }
	out := func(name string) string { return filepath.Join(dir, name) }
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string // substrings
	}{
		{[]string{"convert", "--from", "snap", file("cr.txt", "10 20\r30 40\r"), "-o", out("cr.bin")}, 0,
			`"edges": 2`, ""},
		{[]string{"cc", out("cr.bin")}, 0, `"components": 2`, ""},
		{[]string{"convert", "--from", "snap", file("huge.txt", "18446744073709551615 2\n3 4\n"), "-o", out("huge.bin")}, 0,
			`"vertices": 4`, ""},
		{[]string{"convert", "--from", "snap", file("neg.txt", "1 2\n-1 3\n"), "-o", out("neg.bin")}, 1,
			"", "neg.txt: line 2: id out of range (negative id -1: ids are unsigned 64-bit labels"},
		{[]string{"convert", "--from", "snap", file("max.txt", "0 1\n18446744073709551615 5\n"), "-o", out("max.bin")}, 0,
			`"edges": 2`, ""},
		{[]string{"convert", "--from", "mtx", file("nb.mtx", "3 3 2\n2 1\n3 2\n"), "-o", out("nb.bin")}, 0,
			"no %%MatrixMarket banner", "no %%MatrixMarket banner"},
		{[]string{"convert", "--from", "mtx", file("arr.mtx", "3 3\n1\n"), "-o", out("arr.bin")}, 1,
			"", "arr.mtx: line 1: syntax error (want a %%MatrixMarket banner or a size line"},
		{[]string{"convert", "--from", "snap",
			file("h.txt", "# Undirected graph\n# Legend:\n    2 = strong tie\n# Nodes: 3\n1 2 2\n2 3 1\n"), "-o", out("h.bin")}, 0,
			`"header_lines_skipped_at": [` + "\n    3\n  ]", "skipped header lines"},
		{[]string{"convert", "--from", "snap", file("late.txt", "1 2\nfoo bar\n"), "-o", out("late.bin")}, 1,
			"", "late.txt: line 2: syntax error"},
		{[]string{"convert", "--from", "snap", "--lenient", out("late.txt"), "-o", out("late.bin")}, 0,
			`"bad_lines_skipped": 1`, "--lenient: skipped lines"},
		{[]string{"convert", "--from", "mtx", "--lenient", out("nb.mtx"), "-o", out("x.bin")}, 2,
			"", "--lenient applies to --from snap only"},
		{[]string{"convert", "--from", "mtx", file("e.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n5 5 0\n"),
			"-o", out("e.bin")}, 0, `"components": 5`, ""},
		{[]string{"validate", out("e.bin")}, 0, `"components": 5`, ""},
		{[]string{"cc", out("e.bin")}, 0, `"components": 5`, ""},
		{[]string{"cc", "--format", "text", file("e.txt", "5 0\n")}, 0, `"components": 5`, ""},
		{[]string{"cc", file("none.bin", "")}, 1, "", "no header"},
		// Was: only the last --checkpoints flag counted.
		{[]string{"temporal", "--window", "inf", file("ev.csv", "1,2,5,100\n2,3,1,150\n3,4,1,200\n1,2,-3,400\n"),
			"-o", out("t.bin"), "--checkpoints", "0.25", "--checkpoints", "0.5,0.55"}, 0,
			`"events": 1`, "two fractions fall after the same event"},
	} {
		cmd := exec.Command(bin, tc.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		if got := cmd.ProcessState.ExitCode(); got != tc.code ||
			!strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q",
				tc.args, got, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
		if tc.code != 0 && stdout.Len() > 0 {
			t.Errorf("%q: failure printed to stdout: %q", tc.args, stdout.String())
		}
	}
}

// TestTemporal_RepeatedCheckpoints checks that repeated --checkpoints
// flags add up, and that fractions falling after the same event are
// reported once with a warning, not merged silently.
func TestTemporal_RepeatedCheckpoints(t *testing.T) {
	dir := t.TempDir()
	ev := writeFile(t, dir, "ev.csv", "1,2,5,100\n2,3,1,150\n3,4,1,200\n1,2,-3,400\n")
	type checkpoint struct {
		Events int `json:"events"`
		Edges  int `json:"edges"`
	}
	var tr struct {
		Checkpoints []checkpoint `json:"checkpoints"`
	}
	// 4 events: 0.25 -> 1, 0.5 -> 2, 0.55 -> 2 (the same), 1 -> 4.
	args := []string{"temporal", "--window", "inf", ev, "-o", filepath.Join(dir, "t.bin"),
		"--checkpoints", "0.25", "--checkpoints", "0.5,0.55", "--checkpoints", "1"}
	code, out, errOut := streamtool(t, args...)
	if code != 0 || json.Unmarshal([]byte(out), &tr) != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	want := []checkpoint{{1, 1}, {2, 2}, {4, 3}}
	if !slices.Equal(tr.Checkpoints, want) {
		t.Errorf("checkpoints %+v, want %+v", tr.Checkpoints, want)
	}
	if !strings.Contains(errOut, `msg="--checkpoints: two fractions fall after the same event; reporting once" fractions=0.5,0.55 events=2`) {
		t.Errorf("no warning for the merged fractions: %q", errOut)
	}
	code, _, errOut = streamtool(t, "temporal", "--window", "1", ev, "-o", filepath.Join(dir, "u.bin"),
		"--checkpoints", "0.5", "--checkpoints", "2")
	if code != 2 || !strings.Contains(errOut, `--checkpoints: "2" is not a fraction in [0, 1]`) {
		t.Errorf("a bad fraction in a repeated flag: exit %d, %q", code, errOut)
	}
}

// TestConvert_HostileHeaders checks that convert trusts no header: one
// edge under a header of billions of vertices becomes a 21-byte stream
// that keeps the declared count (its isolated vertices are components)
// and a map of the edge's two vertices, in bounded memory; a count a
// stream cannot hold is refused naming the file, line and count, with
// nothing left behind. Was: LG 4294967295 grew to 23.8 GB and was killed.
func TestConvert_HostileHeaders(t *testing.T) {
	for _, tc := range []struct {
		from, content string
		vertices      uint32
		mapWant       string
	}{
		{"lg", "4294967295,1,u,g\n1,2\n", 1<<32 - 1, "0 1\n1 2\n"},
		{"lg", "2000000000,1,u,g\n2000000000,1\n", 2_000_000_000, "0 1\n1999999999 2000000000\n"},
		{"mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n2147483648 2147483648 1\n2 1\n", 1 << 31, "0 1\n1 2\n"},
		{"mtx", "% no banner\n3000000000 3000000000 1\n3 4\n", 3_000_000_000, "2 3\n3 4\n"},
		{"text", "4294967295 1\n0 4294967294\n", 1<<32 - 1, "0 0\n4294967294 4294967294\n"},
	} {
		dir := t.TempDir()
		in := writeFile(t, dir, "in.dat", tc.content)
		out := filepath.Join(dir, "out.bin")
		var got convertJSON
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		mustRun(t, &got, "convert", "--from", tc.from, in, "-o", out)
		runtime.ReadMemStats(&after)
		if got.Vertices != tc.vertices || got.Edges != 1 || got.Components != int(tc.vertices)-1 {
			t.Errorf("%s %q: %+v, want %d vertices, 1 edge, %d components", tc.from, tc.content, got,
				tc.vertices, tc.vertices-1)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
			t.Errorf("%s %q: allocated %d bytes, want at most 16 MiB", tc.from, tc.content, n)
		}
		if fi, err := os.Stat(out); err != nil || fi.Size() != 12+9 {
			t.Errorf("%s %q: stream %v, %v; want 21 bytes", tc.from, tc.content, fi, err)
		}
		m, err := os.ReadFile(out + ".map")
		requireNoError(t, err)
		if string(m) != tc.mapWant {
			t.Errorf("%s %q: map %.64q, want %q", tc.from, tc.content, m, tc.mapWant)
		}
	}
	for _, tc := range []struct{ from, content, want string }{
		{"lg", "4294967296,1,u,g\n1,2\n", "line 1: id out of range (header declares 4294967296 vertices; a stream holds at most 4294967295"},
		{"mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n9999999999 9999999999 1\n1 2\n", "line 2: id out of range (size line declares 9999999999 vertices"},
		{"text", "18446744073709551615 1\n0 1\n", "line 1: id out of range (header declares 18446744073709551615 vertices"},
	} {
		dir := t.TempDir()
		in := writeFile(t, dir, "in.dat", tc.content)
		code, _, errOut := streamtool(t, "convert", "--from", tc.from, in, "-o", filepath.Join(dir, "out.bin"))
		if code != 1 || !strings.Contains(errOut, "in.dat: "+tc.want) {
			t.Errorf("%s %q: exit %d, stderr %q; want 1 and %q", tc.from, tc.content, code, errOut, tc.want)
		}
		if got := listDir(t, dir); !slices.Equal(got, []string{"in.dat"}) {
			t.Errorf("%s %q: left %v", tc.from, tc.content, got)
		}
	}
}
