package main

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const smallCluster = `# main node + workers on loopback, 2026-01-02

| stream | setup | components | updates/s | network B/update | batches local / remote |
|---|---|---:|---:|---:|---:|
| kron13 | local only | 26 | **15.43 M** | 0 | all local |
| kron13 | 1 main + 1 workers | 26 | 8.58 M | 17.7 | 227 / 22,525 |
| kron13 | 1 main + 2 workers | 26 | 10.28 M | 17.7 | 227 / 22,525 |
| kron13 | 1 main + 2 workers | 26 | 9.28 M | 17.7 | 227 / 22,525 |
`

// TestIngestionPlot renders the ingestion plot from a small table and
// checks that the file is a PNG of the size asked for.
func TestIngestionPlot(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cluster-2026-01-02.md"), []byte(smallCluster), 0o644); err != nil {
		t.Fatal(err)
	}
	p, src, err := drawNewest(dir, "cluster-*.md", ingestionPlot)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(src) != "cluster-2026-01-02.md" {
		t.Errorf("drawn from %s", src)
	}
	out := filepath.Join(dir, "ingestion-vs-workers.png")
	if err := save(p, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", out, err)
	}
	if r := img.Bounds(); r.Dx() < 500 || r.Dy() < 300 {
		t.Errorf("plot of %v pixels", r)
	}

	// The command names the missing tables and still writes what it can.
	var stdout, stderr bytes.Buffer
	err = run([]string{"--dir", dir}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no table queries-*.md") || !strings.Contains(stderr.String(), `msg="wrote a plot" file=`+out) {
		t.Errorf("run on a directory with only a cluster table: %v; stderr %q", err, stderr.String())
	}
}

func TestNumber(t *testing.T) {
	f := func(cell string, want float64) {
		t.Helper()
		if got, err := number(cell); err != nil || math.Abs(got-want) > 1e-9*want {
			t.Errorf("number(%q) = %v, %v; want %v", cell, got, err, want)
		}
	}
	f("33.44 M", 33.44e6)
	f("17,550,438", 17550438)
	f("130 MiB", 130<<20)
	f("0.1810 / 0.2512", 0.1810)
	f("2.22×", 2.22)
	if _, err := number("all local"); err == nil || !strings.Contains(err.Error(), `"all local" is not a number`) {
		t.Errorf("number(all local): %v", err)
	}
}

func TestBadTable(t *testing.T) {
	dir := t.TempDir()
	bad := strings.Replace(smallCluster, "| kron13 | 1 main + 1 workers | 26 | 8.58 M |", "| kron13 | one main | 26 | 8.58 M |", 1)
	os.WriteFile(filepath.Join(dir, "cluster-2026-01-03.md"), []byte(bad), 0o644)
	if _, _, err := drawNewest(dir, "cluster-*.md", ingestionPlot); err == nil || !strings.Contains(err.Error(), `setup "one main"`) {
		t.Errorf("a bad setup cell: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "cluster-2026-01-04.md"), []byte("| a | b |\n|---|---|\n| 1 | 2 | 3 |\n"), 0o644)
	if _, _, err := drawNewest(dir, "cluster-*.md", ingestionPlot); err == nil || !strings.Contains(err.Error(), "a row of 3 cells under a header of 2") {
		t.Errorf("a ragged table: %v", err)
	}
}

// TestLatencyPlotZeroMedian: a median flush of zero (no query waited at
// all) cannot go on the log axis; the plot leaves that point out rather
// than failing to draw.
func TestLatencyPlotZeroMedian(t *testing.T) {
	const table = `# Queries during the stream, 2026-01-02

| stream | queries during stream | greedy | updates/s | kept | flush s median / max | CC s median / max |
|---|---:|---|---:|---:|---:|---:|
| kron13 | 100 | on | 14.00 M | 107% | 0.000181 / 0.0084 | 0.001152 / 0.1085 |
| kron13 | 1000 | on | 7.10 M | 46% | 0.000000 / 0.0080 | 0.000775 / 0.1409 |
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "queries-2026-01-02.md"), []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _, err := drawNewest(dir, "queries-*.md", latencyPlot)
	if err != nil {
		t.Fatal(err)
	}
	if err := save(p, filepath.Join(dir, "query-latency.png")); err != nil {
		t.Fatal(err)
	}
}

// TestRoundedLogTicks: a log axis's labels read as the powers of ten they
// mark, however inexactly the ticker computed them.
func TestRoundedLogTicks(t *testing.T) {
	for _, tk := range (roundedLogTicks{}).Ticks(1e-6, 0.5) {
		if tk.Label != "" && len(tk.Label) > 6 {
			t.Errorf("tick %v labelled %q", tk.Value, tk.Label)
		}
	}
}

// TestNewest: the newest table is the latest date; on one day a rerun's
// commit-suffixed table beats the plain one, which beats a hand-named
// variant, and of two reruns the later commit wins whatever the names.
func TestNewest(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	// Both dates fixed, so that the hashes, and the days the loop below
	// takes, are the same on every run.
	date := func(day int) string {
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, day).Format(time.RFC3339)
	}
	t.Setenv("GIT_COMMITTER_DATE", date(0))
	t.Setenv("GIT_AUTHOR_DATE", date(0))
	git("commit", "-q", "--allow-empty", "-m", "first")
	first := git("rev-parse", "--short=9", "HEAD")
	// The later commit gets the name that sorts first, so that name
	// order alone would pick the wrong one.
	second := first
	for day := 1; second >= first; day++ {
		if day > 1000 {
			t.Fatalf("no commit's hash sorted before %s in 1000 tries", first)
		}
		t.Setenv("GIT_COMMITTER_DATE", date(day))
		t.Setenv("GIT_AUTHOR_DATE", date(day))
		git("commit", "-q", "--allow-empty", "-m", fmt.Sprint("day ", day))
		second = git("rev-parse", "--short=9", "HEAD")
	}
	touch := func(names ...string) {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(want string) {
		t.Helper()
		got, err := newest(dir, "q-*.md")
		if err != nil || filepath.Base(got) != want {
			t.Errorf("newest = %s, %v; want %s", filepath.Base(got), err, want)
		}
	}
	touch("q-2026-11-30.md", "q-2026-12-01-quiet.md")
	check("q-2026-12-01-quiet.md") // the only table of the latest day
	touch("q-2026-12-01.md")
	check("q-2026-12-01.md")
	touch("q-2026-12-01-" + first + ".md")
	check("q-2026-12-01-" + first + ".md")
	touch("q-2026-12-01-" + second + ".md")
	check("q-2026-12-01-" + second + ".md")
	touch("q-2026-12-02.md")
	check("q-2026-12-02.md")
	if _, err := newest(dir, "none-*.md"); err == nil {
		t.Error("newest of no table did not fail")
	}
}
