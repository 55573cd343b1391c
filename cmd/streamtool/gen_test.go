package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"sketchcc/stream"
)

// TestGen_Stdout: with -o - a generator writes the same stream as to a
// file, and only the stream, to stdout, with the header's exact count; the
// summary goes to stderr, or to --summary; the counting pass logs the
// components before the stream.
func TestGen_Stdout(t *testing.T) {
	dir := t.TempDir()
	for _, model := range [][]string{
		{"gen", "erdos", "--vertices", "3000", "--density", "0.002", "--isolated", "20", "--seed", "4"},
		{"gen", "kron", "--scale", "8", "--seed", "4"},
	} {
		file := filepath.Join(dir, model[1]+".bin")
		mustRun(t, nil, append(model, "--no-cum", "-o", file)...)
		want, err := os.ReadFile(file)
		requireNoError(t, err)

		code, out, errOut := streamtool(t, append(model, "-o", "-")...)
		if code != 0 {
			t.Fatalf("%q -o -: exit %d\n%s", model, code, errOut)
		}
		if out != string(want) {
			t.Fatalf("%q -o -: %d bytes on stdout, the file has %d, or they differ", model, len(out), len(want))
		}
		r, err := stream.NewReader(strings.NewReader(out))
		requireNoError(t, err)
		// The JSON summary follows the log lines on stderr.
		var s struct {
			Updates    uint64 `json:"updates"`
			Components int    `json:"components"`
			Output     string `json:"output"`
			Cumulative string `json:"cumulative"`
			Bytes      int64  `json:"bytes"`
		}
		brace := strings.Index(errOut, "{")
		if brace < 0 {
			t.Fatalf("%q -o -: no JSON summary on stderr:\n%s", model, errOut)
		}
		requireNoError(t, json.Unmarshal([]byte(errOut[brace:]), &s))
		if s.Updates != r.Header().Updates || s.Output != "-" || s.Cumulative != "" || s.Bytes != int64(len(out)) {
			t.Errorf("%q -o -: summary %+v, header %+v, %d bytes", model, s, r.Header(), len(out))
		}
		m := regexp.MustCompile(`streamgen: counted.* components=(\d+)`).FindStringSubmatch(errOut[:brace])
		if m == nil || m[1] != strconv.Itoa(s.Components) {
			t.Errorf("%q -o -: counted log line %q, want components=%d", model, m, s.Components)
		}

		sum := filepath.Join(dir, model[1]+".json")
		code, out2, errOut := streamtool(t, append(model, "-o", "-", "--summary", sum, "--log-level", "warn")...)
		if code != 0 || out2 != out || errOut != "" {
			t.Fatalf("%q -o - --summary: exit %d, %d bytes on stdout, stderr %q", model, code, len(out2), errOut)
		}
		b, err := os.ReadFile(sum)
		requireNoError(t, err)
		var s2 struct {
			Updates uint64 `json:"updates"`
		}
		if err := json.Unmarshal(b, &s2); err != nil || s2.Updates != s.Updates {
			t.Errorf("%q: --summary file %s: %v", model, b, err)
		}
	}
	if code, _, errOut := streamtool(t, "gen", "kron", "--scale", "5", "-o", "-", "--summary", "-"); code != 2 || !strings.Contains(errOut, "--summary") {
		t.Errorf("--summary -: exit %d, %q; want a usage error naming --summary", code, errOut)
	}
}

// TestGen_BrokenPipe: when the reader of -o - exits, the generator stops
// with exit status 1 and says so, rather than dying of SIGPIPE or hanging.
func TestGen_BrokenPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	r, w, err := os.Pipe()
	requireNoError(t, err)
	cmd := exec.Command(bin, "gen", "erdos", "--vertices", "100000", "--density", "0.001", "-o", "-")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	requireNoError(t, cmd.Start())
	w.Close()
	// Read the header and some updates, then go away.
	if _, err := io.ReadFull(r, make([]byte, 1000)); err != nil {
		t.Fatalf("reading the stream: %v; stderr %s", err, stderr.String())
	}
	r.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the generator did not stop within a minute of its reader; stderr %s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "closed the pipe") {
		t.Fatalf("exit %d (state %v), stderr %q; want 1 and an error saying the reader closed the pipe",
			code, cmd.ProcessState, stderr.String())
	}
}
