package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMemoryLimitOutOfCore: under a memory limit below the sketches'
// bytes, with --sketch-dir, every query equals the union-find's answer,
// the labels equal the in-RAM run's, --json reports the plan and the
// disk I/O, and the directory is left
// empty; without --sketch-dir the run is refused, naming the flag.
func TestMemoryLimitOutOfCore(t *testing.T) {
	_, _, truth := oracle(t, multiples)
	dir := t.TempDir()
	limit := "35M" // the 32 MiB runtime reserve and half the 6 MiB of sketches
	labels := [2]string{filepath.Join(t.TempDir(), "ram.txt"), filepath.Join(t.TempDir(), "disk.txt")}
	if r := runMain(t, "--stream", multiples, "--labels", labels[0]); r.code != 0 {
		t.Fatal(r)
	}
	r := runMain(t, "--stream", multiples, "--json", "--queries", "4", "--no-greedy", "--memory-limit", limit, "--sketch-dir", dir,
		"--labels", labels[1])
	if r.code != 0 {
		t.Fatal(r)
	}
	ram, err1 := os.ReadFile(labels[0])
	disk, err2 := os.ReadFile(labels[1])
	if err1 != nil || err2 != nil || len(ram) == 0 || !bytes.Equal(ram, disk) {
		t.Errorf("--labels out of core differ from the in-RAM run's (%v, %v)", err1, err2)
	}
	var s summary
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatal(err)
	}
	m := s.Memory
	if s.Components != truth.Sets() || len(s.Queries) != 4 {
		t.Errorf("%d components in %d queries, union-find says %d", s.Components, len(s.Queries), truth.Sets())
	}
	if m.LimitBytes != 35<<20 || !m.OutOfCore || m.Ranges < 2 || m.DiskWrittenBytes == 0 || m.DiskReadBytes == 0 || m.ColumnPasses == 0 {
		t.Errorf("memory record %+v: want the sketches on disk in ranges, with reads and writes", m)
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("--sketch-dir holds %d entries after the run (%v), want none", len(left), err)
	}
	r = runMain(t, "--stream", multiples, "--memory-limit", limit)
	if r.code != 1 || !strings.Contains(r.stderr, "--sketch-dir DIR") || r.stdout != "" {
		t.Errorf("a limit too small without --sketch-dir: want exit 1 naming --sketch-dir, got %v", r)
	}
}
