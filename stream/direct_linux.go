package stream

import (
	"os"
	"syscall"
)

// openDirect opens name for reading with O_DIRECT.
func openDirect(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_DIRECT, 0)
}
