package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sketchcc/dsu"
	"sketchcc/hugepage"
	"sketchcc/sketch"
	"sketchcc/stream"
)

const multiples = "../../testdata/multiples_graph_1024_stream.data"

// binary is the main-node executable built by TestMain, for the tests
// that need real exit codes and signals.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "main-node-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "main-node")
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goTool, "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one run of the command.
type result struct {
	code           int
	stdout, stderr string
}

// runMain calls run in-process, as main does, with a small worker pool.
func runMain(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"--workers=2"}, args...), &out, &errb)
	code := exitCode(err, &errb)
	return result{code, out.String(), errb.String()}
}

// runBinary runs the built executable.
func runBinary(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return result{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// writeFile writes data to a new file in a temp dir and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func record(typ byte, src, dst uint32) []byte {
	b := []byte{typ}
	b = append(b, byte(src), byte(src>>8), byte(src>>16), byte(src>>24))
	return append(b, byte(dst), byte(dst>>8), byte(dst>>16), byte(dst>>24))
}

func header(v uint32, m uint64) []byte {
	return stream.AppendHeader(nil, stream.Header{Vertices: v, Updates: m})
}

func TestHelp(t *testing.T) {
	for _, r := range []result{runMain(t, "--help"), runBinary(t, "--help"), runBinary(t, "-h")} {
		if r.code != 0 {
			t.Errorf("--help: %v", r)
		}
		if !strings.Contains(r.stdout, "Usage: main-node --stream FILE") || !strings.Contains(r.stdout, "--json") || r.stderr != "" {
			t.Errorf("--help did not print the usage on stdout alone: %v", r)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		for _, r := range []result{runMain(t, args...), runBinary(t, args...)} {
			if r.code != 2 || !strings.Contains(r.stderr, want) || r.stdout != "" {
				t.Errorf("main-node %q: want exit 2 and %q on stderr, got %v", args, want, r)
			}
		}
	}
	f("--stream is required")
	f("--stream is required", "--json")
	f("unknown flag: --bogus", "--stream", multiples, "--bogus")
	f(`--format="xml"`, "--stream", multiples, "--format", "xml")
	f("unexpected arguments", "--stream", multiples, "extra")
	f("--workers=0", "--stream", multiples, "--workers", "0")
	// Was exit 1, while every other bad flag value exits 2.
	f("--sketch-factor=1e+09: sketch: bad parameters: sketch factor 1e+09 needs", "--stream", multiples, "--sketch-factor", "1e9")
	// Every problem at once.
	f("--progress", "--format", "xml", "--progress", "sometimes")
	// The flag that is wrong, not every duration flag; slog's words not.
	f("--answer-timeout=0s, want > 0", "--stream", multiples, "--listen", "127.0.0.1:0", "--answer-timeout", "0")
	// The library's range, spelled with the flag (fieldFlags).
	f("--readers=-1, want [0, 1024]", "--stream", multiples, "--readers", "-1")
	f("--batch-factor=-0.5, want [0, 64], 0 for the default", "--stream", multiples, "--batch-factor", "-0.5")
	f("--queue-batches=-1, want >= 0", "--stream", multiples, "--queue-batches", "-1")
	f("--frame-delay=0s, want > 0", "--stream", multiples, "--frame-delay", "0")
	f("--redial-backoff=-1s, want > 0", "--stream", multiples, "--redial-backoff", "-1s")
	f(`--listen="127.0.0.1:99999": port "99999", want a number in [0, 65535]`, "--stream", multiples, "--listen", "127.0.0.1:99999")
	f("--queries and --query-at both given", "--stream", multiples, "--queries", "3", "--query-at", "100")
	f(`"verbose" for "--log-level" flag: want debug, info, warn or error`, "--stream", multiples, "--log-level", "verbose")
	f(`--memory-limit="lots": want a positive number of bytes`, "--stream", multiples, "--memory-limit", "lots")
}

// TestBadInput runs every kind of bad stream: exit 1, a message that names
// the file and the place, and no answer on stdout.
func TestBadInput(t *testing.T) {
	good := [][]byte{record(0, 0, 1), record(0, 1, 2)}
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		data   []byte   // nil: path is used as is
		path   string   // when data is nil
		args   []string // extra flags
		places []string // what the message must say
	}{
		{name: "truncated", data: slices.Concat(header(4, 3), good[0], good[1]),
			places: []string{"truncated", "file is 30 bytes", "3 updates = 39 bytes"}},
		{name: "trailing", data: slices.Concat(header(4, 2), good[0], good[1], []byte{0}),
			places: []string{"more data than the header promises", "file is 31 bytes"}},
		{name: "bad-type", data: slices.Concat(header(4, 3), good[0], record(2, 1, 2), good[1]),
			places: []string{"update 1 at byte offset 21", "bad update type", "type byte 2"}},
		{name: "id-out-of-range", data: slices.Concat(header(4, 3), good[0], good[1], record(0, 3, 4)),
			places: []string{"update 2 at byte offset 30", "out of range"}},
		{name: "self-loop", data: slices.Concat(header(4, 2), record(1, 2, 2), good[0]),
			places: []string{"update 0 at byte offset 12", "self-loop"}},
		{name: "empty", data: []byte{}, places: []string{"empty"}},
		{name: "partial-header", data: header(4, 1)[:5], places: []string{"header", "unexpected EOF"}},
		{name: "one-vertex", data: slices.Concat(header(1, 1), record(0, 0, 0)), places: []string{"fewer than 2 vertices"}},
		{name: "nonexistent", path: filepath.Join(dir, "no-such-file"), places: []string{"no such file"}},
		{name: "directory", path: dir, places: []string{"is a directory"}},
		{name: "text-bad-line", data: []byte("4 3\n0 0 1\n0 1 x\n0 2 3\n"), args: []string{"--format", "text"},
			places: []string{"update 1 at line 3", "syntax error"}},
		{name: "text-too-few", data: []byte("4 3\n0 1\n1 2\n"), args: []string{"--format", "text"},
			places: []string{"update 2 at line 4", "truncated"}},
		{name: "text-nonexistent", path: filepath.Join(dir, "no-such.txt"), args: []string{"--format", "text"},
			places: []string{"no such file"}},
		{name: "text-directory", path: dir, args: []string{"--format", "text"}, places: []string{"is a directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if tc.data != nil {
				path = writeFile(t, tc.name+".bin", tc.data)
			}
			args := append([]string{"--stream", path}, tc.args...)
			for _, r := range []result{runMain(t, args...), runBinary(t, args...)} {
				if r.code != 1 {
					t.Errorf("want exit 1, got %v", r)
				}
				if strings.Contains(r.stdout, "components") || r.stdout != "" {
					t.Errorf("stdout has an answer: %v", r)
				}
				for _, want := range append([]string{path}, tc.places...) {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("stderr does not say %q: %v", want, r)
					}
				}
				if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
					t.Errorf("stderr has a panic: %v", r)
				}
			}
		})
	}
	t.Run("permission", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads files of mode 0")
		}
		path := writeFile(t, "secret.bin", slices.Concat(header(4, 1), good[0]))
		if err := os.Chmod(path, 0); err != nil {
			t.Fatal(err)
		}
		r := runBinary(t, "--stream", path)
		if r.code != 1 || !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, "permission denied") || r.stdout != "" {
			t.Errorf("want exit 1 and permission denied, got %v", r)
		}
	})
	t.Run("vertices-beyond-ids", func(t *testing.T) {
		// 2^32-1 vertices: more than the gutters can address. The message
		// names the file and its vertex count.
		path := writeFile(t, "huge.bin", slices.Concat(header(1<<32-1, 1), good[0]))
		r := runBinary(t, "--stream", path)
		if r.code != 1 || !strings.Contains(r.stderr, path+" declares 4294967295 vertices") || r.stdout != "" {
			t.Errorf("want exit 1 and a message naming %s and its vertices, got %v", path, r)
		}
	})
	t.Run("too-many-vertices-for-memory", func(t *testing.T) {
		// A 21-byte file whose header declares 2^30 vertices: the sketches
		// alone would take terabytes. The run must refuse, not crash.
		path := writeFile(t, "big.bin", slices.Concat(header(1<<30, 1), good[0]))
		r := runBinary(t, "--stream", path)
		if r.code != 1 || !strings.Contains(r.stderr, "memory") || r.stdout != "" ||
			strings.Contains(r.stderr, "goroutine ") {
			t.Errorf("want exit 1 and a message about memory, got %v", r)
		}
	})
}

// canonical returns e with Src < Dst.
func canonical(e stream.Edge) stream.Edge {
	if e.Src > e.Dst {
		return stream.Edge{Src: e.Dst, Dst: e.Src}
	}
	return e
}

// oracle replays a binary stream with toggle semantics and returns the
// final edge set and its components.
func oracle(t *testing.T, path string) (stream.Header, map[stream.Edge]bool, *dsu.DSU) {
	t.Helper()
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := f.Reader(0, f.Header().Updates)
	edges := map[stream.Edge]bool{}
	for r.Next() {
		e := canonical(r.Update().Edge)
		if edges[e] {
			delete(edges, e)
		} else {
			edges[e] = true
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	d := dsu.New(f.Header().Vertices)
	for e := range edges {
		d.Union(e.Src, e.Dst)
	}
	return f.Header(), edges, d
}

// readPairs reads "a b" lines.
func readPairs(t *testing.T, path string) [][2]uint32 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]uint32
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var a, b uint32
		if _, err := fmt.Sscanf(sc.Text(), "%d %d", &a, &b); err != nil {
			t.Fatalf("%s:%d: %q: %v", path, line, sc.Text(), err)
		}
		out = append(out, [2]uint32{a, b})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var componentsLine = regexp.MustCompile(`(?m)^components\s+(\d+)$`)

// TestSummaryReaders: the summary counts its readers in good English
// (issue 27 item 11: it said "1 readers"), and the answer is the oracle's.
func TestSummaryReaders(t *testing.T) {
	_, _, truth := oracle(t, multiples)
	for _, c := range []struct{ readers, want string }{{"1", " 1 reader on "}, {"2", " 2 readers on "}} {
		r := runMain(t, "--stream", multiples, "--readers", c.readers)
		m := componentsLine.FindStringSubmatch(r.stdout)
		if r.code != 0 || !strings.Contains(r.stdout, c.want) || m == nil || m[1] != strconv.Itoa(truth.Sets()) {
			t.Errorf("--readers %s: want %q and %d components in the summary: %v", c.readers, c.want, truth.Sets(), r)
		}
	}
}

func TestMultiples(t *testing.T) {
	h, edges, truth := oracle(t, multiples)
	if truth.Sets() != 78 {
		t.Fatalf("the oracle gives %d components, DESIGN.md says 78", truth.Sets())
	}
	dir := t.TempDir()
	labels, forest := filepath.Join(dir, "labels.txt"), filepath.Join(dir, "forest.txt")

	r := runMain(t, "--stream", multiples, "--labels", labels, "--forest", forest)
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	if m := componentsLine.FindStringSubmatch(r.stdout); m == nil || m[1] != "78" {
		t.Errorf("summary does not say 'components 78': %v", r)
	}

	// --labels: one "vertex label" line per vertex, the oracle's labels
	// (both are numbered by each component's smallest vertex).
	want := truth.Labels()
	got := readPairs(t, labels)
	if len(got) != int(h.Vertices) {
		t.Fatalf("%d label lines, want %d", len(got), h.Vertices)
	}
	for i, p := range got {
		if p[0] != uint32(i) || p[1] != want[i] {
			t.Fatalf("label line %d is %v, want %d %d", i+1, p, i, want[i])
		}
	}

	// --forest: V - components edges of the final graph that alone
	// connect the same components.
	fe := readPairs(t, forest)
	if len(fe) != int(h.Vertices)-78 {
		t.Errorf("forest has %d edges, want %d", len(fe), int(h.Vertices)-78)
	}
	fd := dsu.New(h.Vertices)
	for _, p := range fe {
		e := stream.Edge{Src: p[0], Dst: p[1]}
		if !edges[canonical(e)] {
			t.Errorf("forest edge %v is not an edge of the final graph", p)
		}
		if _, merged := fd.Union(p[0], p[1]); !merged {
			t.Errorf("forest edge %v closes a cycle", p)
		}
	}
	if !slices.Equal(fd.Labels(), want) {
		t.Errorf("the forest's components differ from the graph's")
	}

	// --json: one object with every documented key.
	r = runMain(t, "--stream", multiples, "--json")
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	var js map[string]any
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&js); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Errorf("stdout holds more than one JSON value: %s", r.stdout)
	}
	for _, k := range []string{"vertices", "updates", "components", "ingest_seconds", "updates_per_second",
		"query_seconds", "sketch_bytes", "peak_rss_bytes"} {
		v, ok := js[k].(float64)
		if !ok {
			t.Errorf("JSON key %q missing or not a number: %s", k, r.stdout)
			continue
		}
		if v < 0 || (k != "peak_rss_bytes" && k != "query_seconds" && k != "ingest_seconds" && v == 0) {
			t.Errorf("JSON %q = %v", k, v)
		}
	}
	if js["sketch_kernel"] != sketch.Kernel() || js["transparent_huge_pages"] != hugepage.Setting() {
		t.Errorf("JSON says kernel %v, huge pages %v; want %s, %s",
			js["sketch_kernel"], js["transparent_huge_pages"], sketch.Kernel(), hugepage.Setting())
	}
	if js["components"] != 78.0 || js["vertices"] != 1024.0 || js["updates"] != 8528.0 {
		t.Errorf("JSON says %v components, %v vertices, %v updates; want 78, 1024, 8528",
			js["components"], js["vertices"], js["updates"])
	}

	// The built binary says the same.
	r = runBinary(t, "--stream", multiples)
	if m := componentsLine.FindStringSubmatch(r.stdout); r.code != 0 || m == nil || m[1] != "78" {
		t.Errorf("binary: %v", r)
	}
}

// TestTextFormat runs --format text on a typed and an untyped stream of
// the same final graph: 7 vertices, components {0,1,2}, {3,4}, {5}, {6}.
// No gutter fills, so the one query (Boruvka: --no-greedy) flushes each
// vertex's that has updates, as a batch or in place, and --json counts
// them.
func TestTextFormat(t *testing.T) {
	typed := "7 7\n0 0 1\n0 1 2\n0 3 4\n0 5 6\n1 6 5\n0 2 0\n1 0 2\n"
	untyped := "7 3\n0 1\n2 1\n4 3\n"
	for name, tc := range map[string]struct {
		data    string
		gutters uint64 // vertices with updates
	}{"typed": {typed, 7}, "untyped": {untyped, 5}} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, name+".txt", []byte(tc.data))
			labels := filepath.Join(t.TempDir(), "labels")
			r := runMain(t, "--stream", path, "--format", "text", "--json", "--labels", labels, "--no-greedy")
			if r.code != 0 {
				t.Fatalf("%v", r)
			}
			var js struct {
				Components        int
				Batches           uint64 `json:"batches"`
				FlushedBatches    uint64 `json:"flushed_batches"`
				FlushLocalGutters uint64 `json:"flush_local_gutters"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &js); err != nil || js.Components != 4 {
				t.Errorf("components %d (%v), want 4: %v", js.Components, err, r)
			}
			if js.Batches != js.FlushedBatches || js.FlushedBatches+js.FlushLocalGutters != tc.gutters {
				t.Errorf("batches %d, flushed %d, sketched in place %d: want %d gutters flushed, all batches from the flush",
					js.Batches, js.FlushedBatches, js.FlushLocalGutters, tc.gutters)
			}
			want := [][2]uint32{{0, 0}, {1, 0}, {2, 0}, {3, 1}, {4, 1}, {5, 2}, {6, 3}}
			if got := readPairs(t, labels); !slices.Equal(got, want) {
				t.Errorf("labels %v, want %v", got, want)
			}
		})
	}
}

// writeLargeStream writes n random updates over vertices ids to a temp
// file with stream.Writer.
func writeLargeStream(t *testing.T, vertices uint32, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "large.bin")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := stream.NewWriter(f, stream.Header{Vertices: vertices, Updates: uint64(n)})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range n {
		s, d := rng.Uint32N(vertices), rng.Uint32N(vertices-1)
		if d >= s {
			d++
		}
		if err := w.Write(stream.Update{Type: stream.Insert, Edge: stream.Edge{Src: s, Dst: d}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// startIngesting starts cmd (main-node at --log-level info) and reads its
// stderr up to the "ingesting" log line, which comes after the signal
// handler is installed and just before the first update is read. finish
// reads the rest of stderr, waits for cmd and returns the whole log and
// Wait's error.
func startIngesting(t *testing.T, cmd *exec.Cmd) (finish func() (string, error)) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "msg=ingesting") {
			break
		}
	}
	return func() (string, error) {
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
		err := cmd.Wait()
		return log.String(), err
	}
}

// TestInterrupt sends SIGINT while the binary ingests a stream of 3M
// updates: it must stop with exit 1, say "interrupted" and print no answer.
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 27 MB stream")
	}
	path := writeLargeStream(t, 10_000, 3_000_000)
	cmd := exec.Command(binary, "--stream", path, "--log-level", "info", "--workers", "1")
	var out bytes.Buffer
	cmd.Stdout = &out
	finish := startIngesting(t, cmd)
	t0 := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	log, err := finish()
	code := cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("killed by %v, not an orderly exit: %s", ws.Signal(), log)
	}
	if code != 1 || !strings.Contains(log, "interrupted") {
		t.Errorf("exit %d (%v), want 1 and 'interrupted' on stderr:\n%s", code, err, log)
	}
	if out.Len() != 0 {
		t.Errorf("stdout has an answer after SIGINT: %s", out.String())
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("took %v to stop after SIGINT", d)
	}
	t.Logf("stopped %v after SIGINT:\n%s", time.Since(t0), log)
	m := regexp.MustCompile(`interrupted after (\d+) of 3000000 updates`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("stderr does not say how far it got:\n%s", log)
	}
	if n, _ := strconv.Atoi(m[1]); n >= 3_000_000 {
		t.Errorf("interrupted after all %d updates", n)
	}
}

// TestHugePagesAuto: --huge-pages auto leaves a sparse stream (fewer
// updates than vertices) on small pages, where huge pages would make every
// touched 2 MiB resident; on asks for them regardless.
func TestHugePagesAuto(t *testing.T) {
	sparse := writeLargeStream(t, 8192, 100) // a 61 MB sketch table, 100 updates
	for _, tc := range []struct {
		flag string
		want bool
	}{{"auto", false}, {"on", runtime.GOOS == "linux"}, {"off", false}} {
		r := runMain(t, "--stream", sparse, "--json", "--huge-pages", tc.flag)
		var js map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &js); r.code != 0 || err != nil {
			t.Fatalf("--huge-pages %s: %v %v", tc.flag, err, r)
		}
		if js["huge_pages"] != tc.want {
			t.Errorf("--huge-pages %s: huge_pages = %v, want %v", tc.flag, js["huge_pages"], tc.want)
		}
	}
}

// TestRoutineEventsAtInfo (issue 27, item 12): a run that goes as asked
// (metrics served, then a linger) logs nothing at the default level;
// at --log-level info its routine events are there, at info.
func TestRoutineEventsAtInfo(t *testing.T) {
	args := []string{"--stream", multiples, "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "1ms"}
	r := runPlain(t, args...)
	if r.code != 0 || r.stderr != "" {
		t.Errorf("a routine run logged at the default level: %v", r)
	}
	r = runPlain(t, append(args, "--log-level", "info")...)
	for _, want := range []string{`level=INFO msg="metrics listening" addr=127.0.0.1:`,
		`level=INFO msg="result printed; serving the final metrics"`} {
		if r.code != 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("--log-level info: want %q: %v", want, r)
		}
	}
}
