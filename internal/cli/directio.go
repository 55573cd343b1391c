package cli

import (
	"context"
	"log/slog"
	"os"

	"github.com/spf13/pflag"

	"sketchcc/ingest"
	"sketchcc/stream"
)

// DirectIO is main-node's --direct-io: whether a stream file is read with
// O_DIRECT (stream.File.ReadDirect) or through the page cache.
type DirectIO struct {
	// Mode is auto, on or off; the command checks it.
	Mode string
}

// AddFlag defines --direct-io on fs, bound to d.
func (d *DirectIO) AddFlag(fs *pflag.FlagSet) {
	fs.StringVar(&d.Mode, "direct-io", "auto", "read a stream file with O_DIRECT, bypassing the page cache: auto (when the file is larger than half the memory this process may use at start — its memory cgroup limit, else the memory available — so that the cache could not keep it anyway), on, off")
}

// Apply turns direct reads on for f, the stream file at path, when the
// mode says so, and reports whether they are on. A file system that
// refuses O_DIRECT is logged at warn (with "on") or info (with "auto") and
// the file is read through the page cache. f may be nil (a text stream or
// a pipe): Apply then does nothing.
func (d DirectIO) Apply(f *stream.File, path string, log *slog.Logger) bool {
	if f == nil || d.Mode == "off" {
		return false
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	size := fi.Size()
	avail, err := ingest.LimitBytes()
	if d.Mode == "auto" && (err != nil || size <= avail/2) {
		return false
	}
	if err := f.ReadDirect(true); err != nil {
		level := slog.LevelInfo
		if d.Mode == "on" {
			level = slog.LevelWarn
		}
		log.Log(context.Background(), level, "direct reads refused; reading through the page cache", "err", err)
		return false
	}
	log.Info("reading the stream with O_DIRECT", "mode", d.Mode, "bytes", size, "memory_limit", avail)
	return f.Direct()
}
