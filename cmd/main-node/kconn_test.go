package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sketchcc/checkpoint"
	"sketchcc/internal/testgraph"
	"sketchcc/internal/testwait"
	"sketchcc/kconn"
	"sketchcc/stream"
)

// readEdges reads 'u v' lines.
func readEdges(t *testing.T, path string) []stream.Edge {
	t.Helper()
	var out []stream.Edge
	for _, l := range readLines(t, path) {
		var e stream.Edge
		if _, err := fmt.Sscan(l, &e.Src, &e.Dst); err != nil {
			t.Fatalf("%s: %q: %v", path, l, err)
		}
		out = append(out, e)
	}
	return out
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestKConnectivity runs main-node --k-connectivity K on a random stream
// with deletions, on the multiples stream and on ca-GrQc with mid-stream
// queries, and checks the --json answers and the --bridges, --k-out,
// --min-cut and --forests files against the exact answers (kconn over
// the final edge set).
func TestKConnectivity(t *testing.T) {
	dir := t.TempDir()
	random := filepath.Join(dir, "random.bin")
	testgraph.WriteRandomStream(t, random, 300, 1500, 7, false)
	for _, path := range []string{random, multiples, "../../testdata/ca-GrQc.bin"} {
		for k := 2; k <= 4; k++ {
			out := func(name string) string { return filepath.Join(dir, name) }
			r := runMain(t, "--stream", path, "--k-connectivity", strconv.Itoa(k), "--json", "--queries", "3",
				"--bridges", out("b"), "--k-out", out("k"), "--min-cut", out("c"), "--forests", out("f"))
			if r.code != 0 {
				t.Fatalf("%s k=%d: %v", path, k, r)
			}
			var s summary
			if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
				t.Fatal(err)
			}
			f, err := stream.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			h := f.Header()
			f.Close()
			want, err := kconn.Analyze(h.Vertices, slices.Collect(prefixSet(t, path, h.Updates).All()), k)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.KConnectivity) != 3 {
				t.Fatalf("%s: %d k-connectivity records, want 3", path, len(s.KConnectivity))
			}
			last := s.KConnectivity[2]
			if last.EdgeConnectivity != want.Lambda || last.Bridges != len(want.Bridges) || (last.MinCut == nil) != (want.MinCut == nil) ||
				last.MinCut != nil && *last.MinCut != want.MinCut.Size {
				t.Fatalf("%s k=%d: %+v; exact λ %d, %d bridges", path, k, last, want.Lambda, len(want.Bridges))
			}
			if got := readEdges(t, out("b")); !slices.Equal(got, want.Bridges) {
				t.Fatalf("%s k=%d: --bridges differ from the exact bridges", path, k)
			}
			lines := readLines(t, out("k"))
			if len(lines) != len(want.ComponentLambda) {
				t.Fatalf("--k-out: %d lines, want %d", len(lines), len(want.ComponentLambda))
			}
			for c, l := range lines {
				if l != fmt.Sprint(c, " ", want.ComponentLambda[c]) {
					t.Fatalf("--k-out line %d: %q, want component %d λ %d", c, l, c, want.ComponentLambda[c])
				}
			}
			if got := len(readLines(t, out("c"))); want.MinCut != nil && got == 0 {
				t.Fatalf("%s k=%d: --min-cut is empty", path, k)
			}
			if got := len(readLines(t, out("f"))); got != last.CertificateEdges {
				t.Fatalf("--forests: %d lines, %d certificate edges", got, last.CertificateEdges)
			}
		}
	}
}

// TestKConnectivityFlags: bad combinations are usage errors that say why.
func TestKConnectivityFlags(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		r := runMain(t, append([]string{"--stream", multiples}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Fatalf("%v: %v; want exit 2 and %q", args, r, want)
		}
	}
	f("need --k-connectivity", "--bridges", filepath.Join(t.TempDir(), "b"))
	f("--k-connectivity=0", "--k-connectivity", "0")
	f("--k-connectivity=100, --sketch-factor=1: sketch: bad parameters: 100 sketch sets", "--k-connectivity", "100")
	f("--min-cut=/nonexistent/x", "--k-connectivity", "2", "--min-cut", "/nonexistent/x")
}

// TestKConnectivityResume: a run with --k-connectivity 3 stopped by
// SIGTERM takes a checkpoint of its three sketch sets; --resume from it
// gives the exact answers and the bridges of an uninterrupted run, and a
// resume with another K is refused, naming the sets.
func TestKConnectivityResume(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "random.bin")
	testgraph.WriteRandomStream(t, path, 400, 400_000, 9, false)
	ck := filepath.Join(dir, "ck")
	cmd := exec.Command(binary, "--stream", path, "--k-connectivity", "3", "--checkpoint-dir", ck,
		"--rate-limit", "200000", "--checkpoint-every", "100ms", "--log-level", "info", "--progress", "never")
	finish := startIngesting(t, cmd)
	// Stopped once a periodic checkpoint shows progress.
	testwait.Until(t, 10*time.Second, 10*time.Millisecond, func() error { _, _, err := checkpoint.Read(ck); return err })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if log, _ := finish(); cmd.ProcessState.ExitCode() != 1 || !strings.Contains(log, "checkpoint taken") {
		t.Fatalf("SIGTERM: exit %d, no stop checkpoint:\n%s", cmd.ProcessState.ExitCode(), log)
	}
	m, _, err := checkpoint.Read(ck)
	if err != nil || m.Updates == 0 || m.Updates >= 400_000 {
		t.Fatalf("stop checkpoint after %d of 400000 updates: %v", m.Updates, err)
	}
	if r := runMain(t, "--stream", path, "--resume", ck, "--k-connectivity", "2"); r.code != 1 || !strings.Contains(r.stderr, "3 sketch set(s), asked for 2") {
		t.Fatalf("resume with another K: %v", r)
	}
	r := runMain(t, "--stream", path, "--resume", ck, "--k-connectivity", "3", "--json", "--bridges", filepath.Join(dir, "b1"))
	whole := runMain(t, "--stream", path, "--k-connectivity", "3", "--json", "--bridges", filepath.Join(dir, "b2"))
	if r.code != 0 || whole.code != 0 {
		t.Fatalf("resumed: %v\nwhole: %v", r, whole)
	}
	var s, w summary
	if json.Unmarshal([]byte(r.stdout), &s) != nil || json.Unmarshal([]byte(whole.stdout), &w) != nil {
		t.Fatalf("--json: %s %s", r.stdout, whole.stdout)
	}
	want, err := kconn.Analyze(400, slices.Collect(prefixSet(t, path, 400_000).All()), 3)
	if err != nil {
		t.Fatal(err)
	}
	got := s.KConnectivity[len(s.KConnectivity)-1]
	if got.EdgeConnectivity != want.Lambda || got.Bridges != len(want.Bridges) || s.ResumedFrom == nil || *s.ResumedFrom != m.Updates {
		t.Fatalf("resumed from %v: %+v; exact λ %d, %d bridges", s.ResumedFrom, got, want.Lambda, len(want.Bridges))
	}
	if !slices.Equal(readEdges(t, filepath.Join(dir, "b1")), readEdges(t, filepath.Join(dir, "b2"))) {
		t.Fatal("the resumed run's bridges differ from an uninterrupted run's")
	}
}

// TestKConnectivityText: the text summary's per-query table shows each
// query's min(K, λ), bridge count and min-cut size, equal to the exact
// answer over the stream's prefix (testgraph.KExact), and the final line
// says the last one.
func TestKConnectivityText(t *testing.T) {
	const path, k = "../../testdata/ca-GrQc.bin", 3
	r := runMain(t, "--stream", path, "--k-connectivity", strconv.Itoa(k), "--queries", "3")
	if r.code != 0 {
		t.Fatal(r)
	}
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	vertices, total := f.Header().Vertices, f.Header().Updates
	f.Close()
	var rows int
	var last *testgraph.KTruth
	for _, l := range strings.Split(r.stdout, "\n") {
		var after uint64
		var comps, lambda, bridges int
		var cut string
		if n, _ := fmt.Sscan(l, &after, &comps, &lambda, &bridges, &cut); n < 5 {
			continue
		}
		rows++
		last = testgraph.KExact(vertices, slices.Collect(prefixSet(t, path, after).All()), k)
		want := "-"
		if last.Lambda < k {
			want = strconv.Itoa(last.Lambda)
		}
		if comps != last.Components || lambda != last.Lambda || bridges != len(last.Bridges) || cut != want {
			t.Fatalf("row %q: exact %d components, min(K,λ) %d, %d bridges, min cut %s", l, last.Components, last.Lambda, len(last.Bridges), want)
		}
		if rows == 3 && after != total {
			t.Fatalf("last row after %d updates, the stream has %d", after, total)
		}
	}
	if rows != 3 || !strings.Contains(r.stdout, fmt.Sprintf("min(K, λ) = %d with K = %d: %d bridge(s)", last.Lambda, k, len(last.Bridges))) {
		t.Fatalf("%d query rows, want 3; or no k-connect. line for the last:\n%s", rows, r.stdout)
	}
}
