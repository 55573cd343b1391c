//go:build !linux

package stream

import (
	"errors"
	"fmt"
	"os"
)

// openDirect fails: O_DIRECT reads are Linux's.
func openDirect(name string) (*os.File, error) {
	return nil, fmt.Errorf("stream: %s: direct reads: %w", name, errors.ErrUnsupported)
}
