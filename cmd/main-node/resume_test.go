package main

import (
	"bufio"
	le "encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sketchcc/checkpoint"
	"sketchcc/stream"
)

// writePairsStream writes n random toggles of the edges (2i, 2i+1) over
// vertices ids: the final graph has an edge where a pair was toggled an odd
// number of times, so a record lost, doubled or changed anywhere flips
// the answer by a component or two, and a wrong prefix by many.
func writePairsStream(t *testing.T, path string, vertices uint32, n int, seed uint64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := stream.NewWriter(bufio.NewWriterSize(f, 1<<20), stream.Header{Vertices: vertices, Updates: uint64(n)})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for range n {
		p := 2 * rng.Uint32N(vertices/2)
		if err := w.Write(stream.Update{Type: stream.UpdateType(rng.IntN(2)), Edge: stream.Edge{Src: p, Dst: p + 1}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// components returns the "components" field of a --json answer, or -1.
func components(out string) int {
	m := regexp.MustCompile(`"components":(\d+)`).FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// prefixCRC is the CRC-32C of records [0, n) of the stream file at path,
// computed directly over its bytes.
func prefixCRC(t *testing.T, path string, n uint64) uint32 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return crc32.Checksum(data[stream.HeaderBytes:stream.RecordOffset(n)], crc32.MakeTable(crc32.Castagnoli))
}

// TestResumeEditedStream (issue 29, item 1): a checkpoint taken after
// 262,144 updates, then one record in the middle of the stream's prefix
// replaced by another (same size, same first and last MiB): --resume must
// refuse it, naming the stream, the checkpoint and the updates checked,
// and print no answer. The checkpoint's prefix digest is the CRC-32C of
// the file's record bytes with one reader and with two, and a resume of
// the unedited stream gives the union-find's answer.
func TestResumeEditedStream(t *testing.T) {
	const vertices, n, edit = 2000, 300_000, 150_000 // 2.7 MB; record 150,000 is at 1.35 MB
	dir := t.TempDir()
	path := filepath.Join(dir, "pairs.bin")
	writePairsStream(t, path, vertices, n, 3)
	_, _, truth := oracle(t, path)
	for _, readers := range []string{"1", "2"} {
		ck := filepath.Join(dir, "ck"+readers)
		r := runMain(t, "--stream", path, "--readers", readers, "--checkpoint-dir", ck, "--checkpoint-every", "1ns", "--json")
		if r.code != 0 || components(r.stdout) != truth.Sets() {
			t.Fatalf("--readers %s, checkpointing: want %d components: %v", readers, truth.Sets(), r)
		}
		m, _, err := checkpoint.Read(ck)
		if err != nil {
			t.Fatal(err)
		}
		if m.Updates != 262_144 || m.Prefix.Records != m.Updates || m.Prefix.CRC != prefixCRC(t, path, m.Updates) {
			t.Fatalf("--readers %s: checkpoint at %d with prefix %+v; the file's first %d records hash to %#08x",
				readers, m.Updates, m.Prefix, m.Updates, prefixCRC(t, path, m.Updates))
		}
		r = runMain(t, "--stream", path, "--readers", readers, "--resume", ck, "--json")
		if r.code != 0 || components(r.stdout) != truth.Sets() || !strings.Contains(r.stdout, `"resumed_from":262144`) {
			t.Fatalf("--readers %s: resume of the unedited stream: want %d components from 262144: %v", readers, truth.Sets(), r)
		}
	}

	// The edit: the first record from update 150,000 on whose pair has no
	// edge in the final graph turns into an edge from that pair to the
	// next, which no record holds: the pair gains its edge and joins the
	// next pair, two components fewer.
	edited := filepath.Join(dir, "edited.bin")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, final, _ := oracle(t, path)
	at := uint64(edit)
	for ; final[stream.Edge{Src: le.LittleEndian.Uint32(data[stream.RecordOffset(at)+1:]),
		Dst: le.LittleEndian.Uint32(data[stream.RecordOffset(at)+5:])}]; at++ {
	}
	rec := data[stream.RecordOffset(at):]
	le.LittleEndian.PutUint32(rec[5:], (le.LittleEndian.Uint32(rec[1:])+2)%vertices)
	if err := os.WriteFile(edited, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if id, err := checkpoint.Identify(edited); err != nil || id != mustIdentify(t, path) {
		t.Fatalf("the edit shows in the stream's size or ends: %+v, %v", id, err)
	}
	_, _, editedTruth := oracle(t, edited)
	if editedTruth.Sets() == truth.Sets() {
		t.Fatalf("the edit leaves the answer at %d components: it shows nothing", truth.Sets())
	}
	ck := filepath.Join(dir, "ck1")
	r := runMain(t, "--stream", edited, "--resume", ck, "--json")
	want := fmt.Sprintf("--resume: stream %s differs from the one checkpoint %s was taken on: its first 262144 updates hash to",
		edited, checkpoint.Path(ck))
	if r.code != 1 || !strings.Contains(r.stderr, want) || r.stdout != "" {
		t.Errorf("resume of the edited stream (true answer %d components, the checkpoint's graph %d): want exit 1 and %q, no answer; got %v",
			editedTruth.Sets(), truth.Sets(), want, r)
	}
}

func mustIdentify(t *testing.T, path string) checkpoint.StreamID {
	t.Helper()
	id, err := checkpoint.Identify(path)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestResumeAfterStopWithReaders: SIGTERM during a run that reads with two
// readers takes a stop checkpoint of exactly a prefix of the stream, and
// --resume from it gives the union-find's answer.
func TestResumeAfterStopWithReaders(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 54 MB stream")
	}
	const vertices, n = 20_000, 6_000_000
	dir := t.TempDir()
	path := filepath.Join(dir, "pairs.bin")
	writePairsStream(t, path, vertices, n, 4)
	_, _, truth := oracle(t, path)
	// The signal comes at the first read, and some milliseconds into the
	// run: most likely in the middle of the readers' blocks.
	for _, delay := range []time.Duration{0, 20 * time.Millisecond, 50 * time.Millisecond} {
		ck := filepath.Join(dir, "ck"+delay.String())
		cmd := exec.Command(binary, "--stream", path, "--readers", "2", "--workers", "1", "--checkpoint-dir", ck,
			"--log-level", "info", "--progress", "never")
		finish := startIngesting(t, cmd)
		time.Sleep(delay)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		log, _ := finish()
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(log, "checkpoint taken") {
			t.Logf("SIGTERM %v after the first read: exit %d, no stop checkpoint (the run ended first?):\n%s", delay, code, log)
			continue
		}
		m, _, err := checkpoint.Read(ck)
		if err != nil {
			t.Fatal(err)
		}
		r := runMain(t, "--stream", path, "--resume", ck, "--json")
		if r.code != 0 || components(r.stdout) != truth.Sets() {
			t.Fatalf("SIGTERM %v after the first read, resumed from the stop checkpoint at %d: want %d components: %v\nstopped run:\n%s",
				delay, m.Updates, truth.Sets(), r, log)
		}
		t.Logf("SIGTERM %v after the first read: stopped at %d of %d updates, resumed to %d components", delay, m.Updates, n, truth.Sets())
	}
}

// TestResumeSummary (issue 27, item 8): a resumed run says so, in text and
// in --json, and gives two rates: the updates it ingested over its
// ingestion time, and the whole stream over that time plus the prefix
// check. A run that did not resume says neither.
func TestResumeSummary(t *testing.T) {
	const vertices, n = 2000, 300_000
	dir := t.TempDir()
	path := filepath.Join(dir, "pairs.bin")
	writePairsStream(t, path, vertices, n, 5)
	_, _, truth := oracle(t, path)
	ck := filepath.Join(dir, "ck")
	r := runMain(t, "--stream", path, "--checkpoint-dir", ck, "--checkpoint-every", "1ns")
	if r.code != 0 || strings.Contains(r.stdout, "resumed") || strings.Contains(r.stdout, "whole stream") {
		t.Fatalf("a run from the start: want no resumed or whole-stream line: %v", r)
	}
	m, _, err := checkpoint.Read(ck)
	if err != nil {
		t.Fatal(err)
	}
	from := m.Updates
	if from == 0 || from >= n {
		t.Fatalf("checkpoint at %d of %d updates: the test needs one inside the stream", from, n)
	}

	r = runMain(t, "--stream", path, "--resume", ck)
	for _, want := range []string{
		fmt.Sprintf("\nresumed       from update %d (the stream up to there checked against the checkpoint in ", from),
		fmt.Sprintf(" updates/s over the %d updates since (insertion ", n-from),
		fmt.Sprintf("\nwhole stream  %d updates answered in ", n),
		fmt.Sprintf("\ncomponents    %d\n", truth.Sets()),
	} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("resumed text summary lacks %q: %v", want, r)
		}
	}

	r = runMain(t, "--stream", path, "--resume", ck, "--json")
	var s struct {
		Components  int      `json:"components"`
		Updates     uint64   `json:"updates"`
		ResumedFrom *uint64  `json:"resumed_from"`
		EndToEnd    float64  `json:"end_to_end_seconds"`
		Rate        float64  `json:"updates_per_second"`
		PrefixCheck float64  `json:"prefix_check_seconds"`
		StreamRate  *float64 `json:"stream_updates_per_second"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || r.code != 0 {
		t.Fatalf("%v: %v", r, err)
	}
	if s.Components != truth.Sets() || s.Updates != n || s.ResumedFrom == nil || *s.ResumedFrom != from {
		t.Fatalf("got %d components after %d updates resumed from %v; want %d after %d from %d",
			s.Components, s.Updates, s.ResumedFrom, truth.Sets(), n, from)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(a, b) }
	if s.PrefixCheck <= 0 || s.StreamRate == nil || !near(s.Rate, float64(n-from)/s.EndToEnd) ||
		!near(*s.StreamRate, n/(s.PrefixCheck+s.EndToEnd)) {
		t.Errorf("rates: %.0f updates/s over %d updates in %.6f s; whole stream %v over %.6f s + %.6f s",
			s.Rate, n-from, s.EndToEnd, s.StreamRate, s.PrefixCheck, s.EndToEnd)
	}
}
