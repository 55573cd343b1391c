package cli

import (
	"os"
	"runtime/pprof"
)

// StartCPUProfile starts a pprof CPU profile of the process into the file
// at path, created or truncated; the function it returns stops it and
// closes the file, returning the close's error. An empty path profiles
// nothing, and the function then does nothing.
func StartCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
