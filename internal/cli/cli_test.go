package cli

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/sketch"
)

func TestVersionLine(t *testing.T) {
	f := func(bi *debug.BuildInfo, want string) {
		t.Helper()
		if got := VersionLine("worker", bi); got != want {
			t.Errorf("VersionLine:\n got %q\nwant %q", got, want)
		}
	}
	f(&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "sketchcc", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-12-01T08:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
		"worker sketchcc (devel) commit 0123456789abcdef0123456789abcdef01234567 (2026-12-01T08:00:00Z, +dirty) go1.26.0")
	f(&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "sketchcc", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}},
		"worker sketchcc v1.2.3 commit abc go1.26.0")
	f(&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "sketchcc", Version: "(devel)"}},
		"worker sketchcc (devel) commit unknown (built with -buildvcs=false or outside a git checkout) go1.26.0")
	f(&debug.BuildInfo{}, "worker sketchcc (unknown) commit unknown (built with -buildvcs=false or outside a git checkout) go version unknown")
}

func TestPrintVersion(t *testing.T) {
	var b bytes.Buffer
	err := PrintVersion(&b, "streamtool")
	if ExitCode("streamtool", err, &b) != 0 {
		t.Errorf("PrintVersion's error %v does not exit 0", err)
	}
	if s := b.String(); !strings.HasPrefix(s, "streamtool ") || !strings.Contains(s, " go1.") || !strings.Contains(s, "commit ") {
		t.Errorf("PrintVersion wrote %q", s)
	}
}

func TestLogFormat(t *testing.T) {
	parse := func(args ...string) (LogFormat, error) {
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		fs.SetOutput(new(bytes.Buffer))
		var f LogFormat
		LogFormatVar(fs, &f)
		return f, fs.Parse(args)
	}
	if f, err := parse(); err != nil || f != LogText {
		t.Errorf("default: %q, %v; want text", f, err)
	}
	if f, err := parse("--log-format", "json"); err != nil || f != LogJSON {
		t.Errorf("--log-format json: %q, %v", f, err)
	}
	if _, err := parse("--log-format", "xml"); err == nil || !strings.Contains(err.Error(), `want text or json, got "xml"`) {
		t.Errorf("--log-format xml: %v", err)
	}

	var b bytes.Buffer
	NewLogger(&b, LogJSON, slog.LevelInfo).Info("worker joined", "worker", "w1", "addr", "10.0.0.2:7947",
		"every", 1500*time.Millisecond)
	NewLogger(&b, LogJSON, slog.LevelInfo).Debug("hidden")
	var rec map[string]any
	if err := json.Unmarshal(b.Bytes(), &rec); err != nil {
		t.Fatalf("json log line %q: %v", b.String(), err)
	}
	if rec["msg"] != "worker joined" || rec["worker"] != "w1" || rec["level"] != "INFO" || rec["every"] != "1.5s" {
		t.Errorf("json log record %v", rec)
	}
	b.Reset()
	NewLogger(&b, LogText, slog.LevelInfo).Info("worker left", "worker", "w1")
	if s := b.String(); !strings.Contains(s, `msg="worker left" worker=w1`) {
		t.Errorf("text log line %q", s)
	}
}

// TestKernelFlag: --sketch-kernel takes the kernel names, refuses an
// unknown one and an empty value (which the sketch package would read as
// auto), and sets the process's kernel.
func TestKernelFlag(t *testing.T) {
	defer sketch.SetKernel("auto")
	parse := func(args ...string) error {
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		fs.SetOutput(new(bytes.Buffer))
		KernelVar(fs)
		return fs.Parse(args)
	}
	if err := parse("--sketch-kernel", "portable"); err != nil || sketch.Kernel() != "portable" {
		t.Errorf("portable: %v, kernel %s", err, sketch.Kernel())
	}
	for _, bad := range []string{"", "avx-512", "AUTO"} {
		if err := parse("--sketch-kernel", bad); err == nil || !strings.Contains(err.Error(), "want auto, avx512, avx2 or portable") {
			t.Errorf("--sketch-kernel %q: %v", bad, err)
		}
	}
	if sketch.Kernel() != "portable" {
		t.Errorf("a refused value changed the kernel to %s", sketch.Kernel())
	}
}
