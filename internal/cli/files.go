package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// CheckWritable fails early, before a run does any work, for an output
// file path whose directory does not exist or cannot be written; flag is
// the command's flag that named it, which the error starts with. An empty
// path (no such output) is nil.
func CheckWritable(flag, path string) error {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s=%s: directory %s does not exist", flag, path, dir)
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return fmt.Errorf("%s=%s: cannot write in %s: %w", flag, path, dir, err)
	}
	return nil
}
