package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
