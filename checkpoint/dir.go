package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// LockFileName is the lock file inside a checkpoint directory. It stays
// there after the run (removing a file others may be waiting to lock
// would let two processes hold "the" lock); what it holds, "pid N host
// H", names the last process that held it.
const LockFileName = "checkpoint.lock"

// tempPrefix starts the name of Write's temporary files, which
// os.CreateTemp ends with a random decimal number.
const tempPrefix = FileName + ".tmp"

// Lock is the exclusive hold of one process on a checkpoint directory,
// so that two main nodes never write over each other's checkpoints. It
// is an flock(2) of DIR/checkpoint.lock: the kernel releases it when the
// process ends, however it ends.
type Lock struct {
	f *os.File
}

// LockDir takes the lock of checkpoint directory dir, without waiting,
// and writes this process's pid and host name into the lock file. When
// another process holds it, it returns an error wrapping ErrLocked that
// names the holder as its lock file says. Other errors are those of
// opening the lock file. Release the Lock with Unlock.
func LockDir(dir string) (*Lock, error) {
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: cannot open the lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is held by %s (%s)", ErrLocked, dir, holder(f), path)
		}
		return nil, fmt.Errorf("checkpoint: cannot lock %s: %w", path, err)
	}
	host, _ := os.Hostname()
	me := fmt.Sprintf("pid %d host %s\n", os.Getpid(), host)
	// The holder's name is a courtesy to whoever is refused: failing to
	// write it does not make the lock any less held.
	if f.Truncate(0) == nil {
		_, _ = f.WriteAt([]byte(me), 0)
	}
	return &Lock{f: f}, nil
}

// holder returns what the lock file f says of its holder, for a message.
func holder(f *os.File) string {
	b := make([]byte, 256)
	n, err := f.ReadAt(b, 0)
	if err != nil && err != io.EOF || n == 0 {
		return "another process (its lock file names none yet)"
	}
	return strings.TrimSpace(string(b[:n]))
}

// Unlock releases the lock and closes the lock file. It is idempotent.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}

// RemoveTemps removes the temporary files that a Write cut short by a
// crash left in dir (checkpoint.skcc.tmp followed by digits, regular
// files) and returns their paths. Call it only while holding dir's Lock:
// another main node's temporary is not stale. It returns the paths it
// removed before any error.
func RemoveTemps(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: cannot list %s: %w", dir, err)
	}
	var removed []string
	for _, e := range ents {
		if !isTemp(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err != nil {
			return removed, fmt.Errorf("checkpoint: cannot remove the stale temporary %s: %w", p, err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// isTemp reports whether name is one of Write's temporary files.
func isTemp(name string) bool {
	n, ok := strings.CutPrefix(name, tempPrefix)
	if !ok || n == "" {
		return false
	}
	return strings.TrimLeft(n, "0123456789") == ""
}
