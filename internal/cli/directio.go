package cli

import (
	"bufio"
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

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
	fs.StringVar(&d.Mode, "direct-io", "auto", "read a stream file with O_DIRECT, bypassing the page cache: auto (when the file is larger than half the memory available at start, so that the cache could not keep it anyway), on, off")
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
	avail, known := memAvailable()
	if d.Mode == "auto" && (!known || size <= avail/2) {
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
	log.Info("reading the stream with O_DIRECT", "mode", d.Mode, "bytes", size, "mem_available", avail)
	return f.Direct()
}

// memAvailable returns the kernel's estimate of the memory available to
// new work (/proc/meminfo) in bytes, and whether the kernel gives one.
func memAvailable() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return kb << 10, err == nil
	}
	return 0, false
}
