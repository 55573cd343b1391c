package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sketchcc/internal/testgraph"
	"sketchcc/stream"
)

func requireNoError(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// streamtool runs the command in-process and returns its exit status,
// stdout and stderr.
func streamtool(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{}, args...), &stdout, &stderr)
	code := exitCode(err, &stderr)
	return code, stdout.String(), stderr.String()
}

// mustRun runs the command, requires exit status 0 and decodes its JSON.
func mustRun(t *testing.T, v any, args ...string) {
	t.Helper()
	code, out, errOut := streamtool(t, args...)
	if code != 0 {
		t.Fatalf("streamtool %q: exit %d\n%s", args, code, errOut)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("streamtool %q: stdout is not JSON: %v\n%s", args, err, out)
		}
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	requireNoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// listDir returns the names in dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	requireNoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"gen", "--help"}, {"gen", "kron", "--help"}, {"gen", "erdos", "--help"},
		{"convert", "--help"}, {"snapshots", "--help"}, {"temporal", "--help"},
		{"validate", "--help"}, {"cc", "--help"},
	} {
		code, out, _ := streamtool(t, args...)
		if code != 0 || !strings.Contains(out, "Usage") {
			t.Errorf("%q: exit %d, stdout %q", args, code, out)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.txt", "1 2\n")
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"gen"},
		{"gen", "grid"},
		{"gen", "kron", "-o", filepath.Join(dir, "k")},
		{"gen", "kron", "--scale", "1", "-o", filepath.Join(dir, "k")},
		{"gen", "kron", "--scale", "8"},
		{"gen", "erdos", "--vertices", "10", "-o", filepath.Join(dir, "e")},
		{"gen", "kron", "--scale", "8", "--rounds", "17", "-o", filepath.Join(dir, "k")},
		{"gen", "erdos", "--vertices", "10", "--density", "0.1", "--isolated", "10", "-o", filepath.Join(dir, "e")},
		{"convert", "--from", "snap", in},
		{"convert", "--from", "csv", in, "-o", filepath.Join(dir, "x")},
		{"convert", "--from", "snap", "-o", filepath.Join(dir, "x")},
		{"convert", "--bogus"},
		{"temporal", in, "-o", filepath.Join(dir, "x")},
		{"validate"},
		{"cc", "--format", "json", in},
	} {
		code, _, errOut := streamtool(t, args...)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, errOut)
		}
		// The pointer to --help names the command, when there is one.
		want := "Run 'streamtool --help' for usage."
		if len(args) > 1 && args[0] == "gen" && (args[1] == "kron" || args[1] == "erdos") {
			want = "Run 'streamtool gen " + args[1] + " --help' for usage."
		} else if len(args) > 0 && args[0] != "gen" && args[0] != "frobnicate" {
			want = "Run 'streamtool " + args[0] + " --help' for usage."
		}
		if !strings.Contains(errOut, want) {
			t.Errorf("%q: stderr %q, want %q", args, errOut, want)
		}
	}
	if _, _, errOut := streamtool(t, "gen", "kron", "-o", filepath.Join(dir, "k")); !strings.Contains(errOut, "--scale is required") {
		t.Errorf("gen kron without --scale: %q, want it named as required", errOut)
	}
	if _, _, errOut := streamtool(t, "gen", "erdos", "--vertices", "10", "-o", filepath.Join(dir, "e")); !strings.Contains(errOut, "--density is required") {
		t.Errorf("gen erdos without --density: %q, want it named as required", errOut)
	}
	// The generators' range checks are the library's, named by flag.
	_, _, errOut := streamtool(t, "gen", "kron", "--scale", "1", "--rounds", "17", "--churn", "2", "-o", filepath.Join(dir, "k"))
	for _, want := range []string{"--scale=1, want [2, 20]", "--rounds=17, want [1, 16]", "--churn=2, want [0, 1]"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("gen kron out of range: %q, want %q", errOut, want)
		}
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"g.txt"}) {
		t.Errorf("usage errors left files: %v", got)
	}
}

type genJSON struct {
	Vertices   uint32 `json:"vertices"`
	Updates    uint64 `json:"updates"`
	Inserts    uint64 `json:"inserts"`
	Deletes    uint64 `json:"deletes"`
	Edges      int64  `json:"edges"`
	Components int    `json:"components"`
	Output     string `json:"output"`
	Cumulative string `json:"cumulative"`
}

type ccJSON struct {
	Valid      bool   `json:"valid"`
	Vertices   uint32 `json:"vertices"`
	Updates    uint64 `json:"updates"`
	Edges      int64  `json:"edges"`
	Components int    `json:"components"`
	Index      *int64 `json:"index"`
	Offset     *int64 `json:"offset"`
	Error      string `json:"error"`
	Header     *struct {
		Vertices uint32 `json:"vertices"`
	} `json:"header"`
}

// TestGen runs both generators and checks their outputs with validate and
// cc, on the stream and on the cumulative file.
func TestGen(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"gen", "kron", "--scale", "9", "--seed", "5", "-o", filepath.Join(dir, "kron9.bin")},
		{"gen", "erdos", "--vertices", "400", "--density", "0.02", "--seed", "5", "-o", filepath.Join(dir, "er.bin")},
	} {
		var g genJSON
		mustRun(t, &g, append(args, "--log-level", "warn")...)
		if g.Inserts+g.Deletes != g.Updates || int64(g.Inserts-g.Deletes) != g.Edges || g.Components < 1 {
			t.Fatalf("%q: %+v", args, g)
		}
		var v, c, cum ccJSON
		mustRun(t, &v, "validate", g.Output, "--log-level", "warn")
		mustRun(t, &c, "cc", g.Output, "--log-level", "warn")
		mustRun(t, &cum, "cc", "--format", "text", g.Cumulative, "--log-level", "warn")
		if !v.Valid || v.Components != g.Components || c.Components != g.Components ||
			cum.Components != g.Components || cum.Edges != g.Edges || c.Edges != g.Edges {
			t.Fatalf("%q: gen %+v, validate %+v, cc %+v, cc of the cumulative file %+v", args, g, v, c, cum)
		}
	}
}

func TestConvert(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.txt", "# SNAP style\n30\t10\r\n10\t30\r\n20\t20\r\n40\t50\r\n")
	out := filepath.Join(dir, "g.bin")
	var r struct {
		Vertices   uint32 `json:"vertices"`
		Edges      int    `json:"edges"`
		Components int    `json:"components"`
		SelfLoops  int64  `json:"self_loops_dropped"`
		Duplicates int64  `json:"duplicates_dropped"`
		Lines      int64  `json:"lines"`
	}
	mustRun(t, &r, "convert", "--from", "snap", in, "-o", out)
	if r.Vertices != 5 || r.Edges != 2 || r.Components != 3 || r.SelfLoops != 1 || r.Duplicates != 1 || r.Lines != 5 {
		t.Fatalf("got %+v", r)
	}
	m, err := os.ReadFile(out + ".map")
	requireNoError(t, err)
	if string(m) != "0 10\n1 20\n2 30\n3 40\n4 50\n" {
		t.Fatalf("map %q", m)
	}
	f, err := stream.Open(out)
	requireNoError(t, err)
	defer f.Close()
	rd := f.Reader(0, f.Header().Updates)
	var got []stream.Update
	for rd.Next() {
		got = append(got, rd.Update())
	}
	want := []stream.Update{{Type: stream.Insert, Edge: stream.Edge{Src: 0, Dst: 2}},
		{Type: stream.Insert, Edge: stream.Edge{Src: 3, Dst: 4}}}
	if !slices.Equal(got, want) || f.Header().Vertices != 5 {
		t.Fatalf("stream %v over %d vertices", got, f.Header().Vertices)
	}
}

// TestConvert_BadInput checks that bad input fails with exit status 1, an
// error naming the file and line, and no output file left behind.
func TestConvert_BadInput(t *testing.T) {
	tests := []struct {
		format, content, want string
	}{
		{"snap", "1 2\n3 4\nfive 6\n", "line 3"},
		{"mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n9 1\n", "line 4"},
		{"mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 5\n2 1\n", "entries"},
		{"lg", "3,1,u,g\n1,x\n", "line 2"},
		{"gml", "graph [\n node [ id 1 ]\n edge [ source 1 target 2 ]\n]\n", "line 3"},
		{"text", "3 1\n0 5\n", "line 2"},
		{"snap", "# nothing\n", "no vertices"},
		{"snap", "7 7\n", "a stream needs at least 2 vertices"}, // one vertex: no stream
		{"snap", "1 2\n-1 3\n", "line 2: id out of range (negative id -1: ids are unsigned 64-bit labels"},
		{"mtx", "", "want a %%MatrixMarket banner or a size line"}, // no header at all
		{"text", "", "no header"},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		in := writeFile(t, dir, "in.dat", tc.content)
		code, _, errOut := streamtool(t, "convert", "--from", tc.format, in, "-o", filepath.Join(dir, "out.bin"))
		if code != 1 || !strings.Contains(errOut, "in.dat") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s %q: exit %d, stderr %q; want 1 and %q", tc.format, tc.content, code, errOut, tc.want)
		}
		if got := listDir(t, dir); !slices.Equal(got, []string{"in.dat"}) {
			t.Errorf("%s %q: left files %v", tc.format, tc.content, got)
		}
	}
	code, _, _ := streamtool(t, "convert", "--from", "snap", filepath.Join(t.TempDir(), "missing"), "-o", "x")
	if code != 1 {
		t.Errorf("missing input: exit %d", code)
	}
}

// encode returns the binary stream of us over vertices.
func encode(t *testing.T, vertices uint32, us ...stream.Update) []byte {
	return testgraph.Encode(t, vertices, us)
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	ins := func(a, b uint32) stream.Update {
		return stream.Update{Type: stream.Insert, Edge: stream.Edge{Src: a, Dst: b}}
	}
	del := func(a, b uint32) stream.Update {
		return stream.Update{Type: stream.Delete, Edge: stream.Edge{Src: a, Dst: b}}
	}
	good := encode(t, 4, ins(0, 1), ins(1, 2), del(0, 1), ins(3, 2))
	p := filepath.Join(dir, "good.bin")
	requireNoError(t, os.WriteFile(p, good, 0o644))
	var v ccJSON
	mustRun(t, &v, "validate", p)
	if !v.Valid || v.Edges != 2 || v.Components != 2 || v.Updates != 4 {
		t.Fatalf("good stream: %+v", v)
	}

	tests := []struct {
		name  string
		data  []byte
		index int64 // -1: no index (a header problem)
		want  string
	}{
		{"duplicate insert", encode(t, 4, ins(0, 1), ins(2, 3), ins(1, 0)), 2, "present"},
		{"absent delete", encode(t, 4, ins(0, 1), del(2, 3)), 1, "absent"},
		{"truncated", good[:len(good)-3], 3, "truncated"},           // the update cut short
		{"trailing", append(slices.Clone(good), 0), 4, "more data"}, // the first past the count
		{"bad type", func() []byte { b := slices.Clone(good); b[12+9] = 7; return b }(), 1, "type"},
		{"out of range", func() []byte { b := slices.Clone(good); b[12+9+5] = 9; return b }(), 1, "out of range"},
		{"partial header", good[:7], -1, "header"},
		{"self-loop", func() []byte { b := slices.Clone(good); b[12+9+5] = 1; return b }(), 1, "self-loop"},
	}
	for _, tc := range tests {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".bin")
		requireNoError(t, os.WriteFile(p, tc.data, 0o644))
		code, out, errOut := streamtool(t, "validate", p)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", tc.name, code, errOut, tc.want)
			continue
		}
		var v ccJSON
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%s: stdout is not JSON: %q", tc.name, out)
			continue
		}
		if v.Valid || (tc.index >= 0) != (v.Index != nil) {
			t.Errorf("%s: %+v", tc.name, v)
			continue
		}
		// The header is reported whenever the file holds one, a file of
		// the wrong size included.
		if hasHeader := len(tc.data) >= stream.HeaderBytes; hasHeader != (v.Header != nil) ||
			hasHeader && v.Header.Vertices != 4 {
			t.Errorf("%s: header %+v in the verdict, file of %d bytes with 4 vertices", tc.name, v.Header, len(tc.data))
		}
		if v.Index != nil && (*v.Index != tc.index || *v.Offset != stream.RecordOffset(uint64(tc.index))) {
			t.Errorf("%s: index %d offset %d, want %d %d", tc.name, *v.Index, *v.Offset,
				tc.index, stream.RecordOffset(uint64(tc.index)))
		}
	}
}

func TestCC(t *testing.T) {
	dir := t.TempDir()
	// Typed text stream: the duplicate insert of (0,1) toggles it off.
	p := writeFile(t, dir, "s.txt", "5 4\n0 0 1\n0 1 2\n0 0 1\n0 3 4\n")
	labels := filepath.Join(dir, "labels.txt")
	var c ccJSON
	mustRun(t, &c, "cc", "--format", "text", p, "--labels", labels)
	if c.Vertices != 5 || c.Updates != 4 || c.Edges != 2 || c.Components != 3 {
		t.Fatalf("got %+v", c)
	}
	l, err := os.ReadFile(labels)
	requireNoError(t, err)
	if string(l) != "0 0\n1 1\n2 1\n3 2\n4 2\n" {
		t.Fatalf("labels %q", l)
	}
	code, _, errOut := streamtool(t, "cc", writeFile(t, dir, "short.bin", "\x04\x00\x00\x00\x02"))
	if code != 1 || !strings.Contains(errOut, "header") {
		t.Fatalf("short file: exit %d, %q", code, errOut)
	}
}

func TestSnapshotsAndTemporal(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.txt", "10 20\n20 30\n")
	b := writeFile(t, dir, "b.txt", "fromNode,toNode\n20,30\n30,40\n40,40\n")
	var s struct {
		Vertices  uint32 `json:"vertices"`
		Updates   uint64 `json:"updates"`
		Snapshots []struct {
			AfterUpdates uint64 `json:"after_updates"`
			Edges        int    `json:"edges"`
			Components   int    `json:"components"`
		} `json:"snapshots"`
	}
	out := filepath.Join(dir, "s.bin")
	mustRun(t, &s, "snapshots", "--from", "snap", a, b, "-o", out)
	if s.Vertices != 4 || s.Updates != 4 || len(s.Snapshots) != 2 ||
		s.Snapshots[0].AfterUpdates != 2 || s.Snapshots[0].Components != 2 ||
		s.Snapshots[1].Edges != 2 || s.Snapshots[1].Components != 2 {
		t.Fatalf("got %+v", s)
	}
	var v ccJSON
	mustRun(t, &v, "validate", out)

	ev := writeFile(t, dir, "ev.csv", "1,2,5,100\n2,3,1,150\n1,2,-3,400\n")
	var tr struct {
		Updates     uint64 `json:"updates"`
		Edges       int    `json:"edges"`
		Components  int    `json:"components"`
		Checkpoints []struct {
			Events int `json:"events"`
			Edges  int `json:"edges"`
		} `json:"checkpoints"`
	}
	mustRun(t, &tr, "temporal", "--window", "100", ev, "-o", filepath.Join(dir, "t.bin"), "--checkpoints", "0.5,1")
	// (1,2) at 100, (2,3) at 150, (1,2) expires before 400 and comes back;
	// (2,3) expires too: final graph {(1,2)}.
	if tr.Updates != 5 || tr.Edges != 1 || tr.Components != 2 || len(tr.Checkpoints) != 2 ||
		tr.Checkpoints[0].Events != 2 || tr.Checkpoints[0].Edges != 2 {
		t.Fatalf("got %+v", tr)
	}
	mustRun(t, nil, "temporal", "--window", "inf", ev, "-o", filepath.Join(dir, "t2.bin"))
}

// TestExitStatus runs the built binary to check real exit statuses and
// the stdout/stderr split.
func TestExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.txt", "1 2\nx y\n")
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--help"}, 0},
		{[]string{"nope"}, 2},
		{[]string{"convert", "--from", "snap", bad, "-o", filepath.Join(dir, "o.bin")}, 1},
	} {
		cmd := exec.Command(bin, tc.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		if got := cmd.ProcessState.ExitCode(); got != tc.code {
			t.Errorf("%q: exit %d, want %d; stderr %q", tc.args, got, tc.code, stderr.String())
		}
		if tc.code != 0 && stdout.Len() > 0 {
			t.Errorf("%q: failure printed to stdout: %q", tc.args, stdout.String())
		}
	}
}

// buildBinary builds the command into a temporary directory and returns
// its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "streamtool")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
