package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sketchcc/scripts/aws/internal/fakeaws"
)

// fakeBin is the directory holding the fake aws command TestMain built
// (not race-instrumented, so that each call stays cheap under -race).
var fakeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sketchcc-fakeaws-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "aws"), "sketchcc/scripts/aws/internal/fakeaws/aws")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot build the fake aws:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	fakeBin = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type fakeCall = fakeaws.Call

// fakeAWSOnPath puts the fake aws first on PATH with a fresh state and
// returns the state file's path.
func fakeAWSOnPath(t *testing.T) string {
	t.Helper()
	state := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(state, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", fakeBin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("SKETCHCC_FAKE_AWS", state)
	return state
}

func readFake(t *testing.T, path string) *fakeaws.State {
	t.Helper()
	s, err := fakeaws.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var flag = fakeaws.Flag
