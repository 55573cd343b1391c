package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sketchcc/internal/testgraph"
)

// TestCheckpointFlags: checkpoint and resume mistakes are usage errors
// (exit 2) or refusals (exit 1) that say what is wrong and print no answer.
func TestCheckpointFlags(t *testing.T) {
	const karate = "../../testdata/karate.bin"
	dir := t.TempDir()
	f := func(code int, want string, args ...string) {
		t.Helper()
		r := runMain(t, args...)
		if r.code != code || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "components") {
			t.Errorf("%v: want exit %d and %q, got %v", args, code, want, r)
		}
	}
	f(2, "--checkpoint-every needs --checkpoint-dir", "--stream", karate, "--checkpoint-every", "1s")
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f(2, "--checkpoint-dir="+notDir+": not a directory", "--stream", karate, "--checkpoint-dir", notDir)
	f(2, "--resume="+filepath.Join(dir, "none")+": no such file or directory", "--stream", karate, "--resume", filepath.Join(dir, "none"))
	// A --checkpoint-dir that does not exist is made.
	made := filepath.Join(dir, "made", "here")
	if r := runMain(t, "--stream", karate, "--checkpoint-dir", made, "--checkpoint-every", "1ns"); r.code != 0 {
		t.Errorf("--checkpoint-dir %s (missing): %v", made, r)
	} else if fi, err := os.Stat(made); err != nil || !fi.IsDir() {
		t.Errorf("--checkpoint-dir %s (missing) was not made: %v", made, err)
	}
	f(2, "need a binary stream", "--stream", karate, "--format", "text", "--resume", dir)
	f(2, "--rate-limit=-1", "--stream", karate, "--rate-limit", "-1")
	f(1, filepath.Join(dir, "checkpoint.skcc"), "--stream", karate, "--resume", dir)

	// A checkpoint of a stream longer than one checkpoint step (64 Ki
	// updates) is refused with another seed or sketch factor, and resumed
	// with the run's own.
	stream := filepath.Join(dir, "s.bin")
	testgraph.WriteRandomStream(t, stream, 300, 150_000, 5, true)
	whole := runMain(t, "--stream", stream, "--json")
	if r := runMain(t, "--stream", stream, "--checkpoint-dir", dir, "--checkpoint-every", "1ns", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"checkpoints":2`) {
		t.Fatalf("run with checkpoints: %v", r)
	}
	f(1, "asked for 7", "--stream", stream, "--resume", dir, "--seed", "7")
	f(1, "sketch factor 1, asked for 2", "--stream", stream, "--resume", dir, "--sketch-factor", "2")
	r := runMain(t, "--stream", stream, "--resume", dir, "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"resumed_from":131072`) {
		t.Fatalf("resume: %v", r)
	}
	comps := func(s string) string { return s[strings.Index(s, `"components"`):][:20] }
	if comps(r.stdout) != comps(whole.stdout) {
		t.Errorf("resumed run: %s; uninterrupted: %s", comps(r.stdout), comps(whole.stdout))
	}
}

// TestCheckpointDirLocked (issue 29, item 4): a second main node given a
// --checkpoint-dir another one holds (here, a flock on its lock file
// taken by hand, naming pid 4242 on host elsewhere) fails at start,
// naming the holder, before it reads anything.
func TestCheckpointDirLocked(t *testing.T) {
	dir := t.TempDir()
	f, err := os.OpenFile(filepath.Join(dir, "checkpoint.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("pid 4242 host elsewhere\n"); err != nil {
		t.Fatal(err)
	}
	r := runMain(t, "--stream", multiples, "--checkpoint-dir", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "--checkpoint-dir="+dir) ||
		!strings.Contains(r.stderr, "pid 4242 host elsewhere") || r.stdout != "" {
		t.Errorf("--checkpoint-dir held by another main node: want exit 1 naming the directory and pid 4242 host elsewhere, no answer; got %v", r)
	}
	// Released, the directory is the run's, and the lock file then names
	// it.
	f.Close()
	if r := runMain(t, "--stream", multiples, "--checkpoint-dir", dir); r.code != 0 {
		t.Fatalf("--checkpoint-dir released: %v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "checkpoint.lock")); !strings.HasPrefix(string(b), fmt.Sprintf("pid %d host ", os.Getpid())) {
		t.Errorf("lock file after the run: %q, want this process's pid", b)
	}
}

// TestStaleTempsRemoved (issue 29, item 4): the temporaries of a main node
// killed while writing a checkpoint are removed at the next start, each
// logged; files that only look alike stay.
func TestStaleTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	stale := []string{"checkpoint.skcc.tmp1234567", "checkpoint.skcc.tmp42"}
	keep := []string{"checkpoint.skcc.tmp", "checkpoint.skcc.tmpx1", "notes.txt"}
	for _, n := range append(slices.Clone(stale), keep...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runMain(t, "--stream", multiples, "--checkpoint-dir", dir)
	if r.code != 0 {
		t.Fatal(r)
	}
	for _, n := range stale {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there: %v", n, err)
		}
		if !strings.Contains(r.stderr, "removed a stale checkpoint temporary") || !strings.Contains(r.stderr, p) {
			t.Errorf("the removal of %s is not logged: %v", p, r)
		}
	}
	for _, n := range keep {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
}

// TestResumeFromPipe (issue 29, item 4): a pipe in place of the checkpoint
// is refused at once, naming it, instead of blocking --resume forever.
func TestResumeFromPipe(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "checkpoint.skcc")
	if err := syscall.Mkfifo(ck, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() { done <- runMain(t, "--stream", multiples, "--resume", dir) }()
	select {
	case r := <-done:
		if r.code != 1 || !strings.Contains(r.stderr, ck) || !strings.Contains(r.stderr, "not a regular file") {
			t.Errorf("--resume from a pipe: want exit 1 naming %s, not a regular file; got %v", ck, r)
		}
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(ck, os.O_WRONLY, 0); err == nil {
			w.Close() // unblock the stuck run
		}
		t.Fatal("--resume from a pipe still blocked after 10 s")
	}
}
