package cli

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"sketchcc/internal/testgraph"
	"sketchcc/stream"
)

// TestDirectIOApply checks each mode on a small stream file: off and auto
// (the file is far below half the available memory) read through the page
// cache, on reads with O_DIRECT where the file system allows it, and logs
// a warning where it does not; a nil File (a pipe) is left alone.
func TestDirectIOApply(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.bin")
	data := testgraph.Encode(t, 8, []stream.Update{{Edge: stream.Edge{Src: 1, Dst: 2}}})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"off", "auto", "on"} {
		t.Run(mode, func(t *testing.T) {
			f, err := stream.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var logged bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
			d := DirectIO{Mode: mode}
			got := d.Apply(f, path, log)
			if got != f.Direct() {
				t.Fatalf("Apply says %v, the File reads direct: %v", got, f.Direct())
			}
			switch {
			case mode != "on" && got:
				t.Fatalf("mode %s turned direct reads on for a %d-byte file", mode, len(data))
			case mode == "on" && !got && logged.Len() == 0:
				t.Fatal("mode on: direct reads refused without a warning")
			}
			if d.Apply(nil, path, log) {
				t.Fatal("a nil File reads direct")
			}
		})
	}
}
