package hugepage

import (
	"bytes"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

const hugePage = 2 << 20

func advise(p unsafe.Pointer, n uintptr) bool {
	b := unsafe.Slice((*byte)(p), n)
	start := uintptr(p)
	lo := (start+hugePage-1)&^(hugePage-1) - start
	hi := (start+n)&^(hugePage-1) - start
	if hi <= lo { // no whole huge page inside
		return false
	}
	return unix.Madvise(b[lo:hi], unix.MADV_HUGEPAGE) == nil
}

// Setting returns the kernel's transparent huge page mode, the bracketed
// word of /sys/kernel/mm/transparent_hugepage/enabled: "always",
// "madvise" (Advise takes effect) or "never"; "unknown" if it cannot be
// read.
func Setting() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return "unknown"
	}
	_, after, ok := bytes.Cut(b, []byte("["))
	word, _, ok2 := bytes.Cut(after, []byte("]"))
	if !ok || !ok2 {
		return "unknown"
	}
	return string(word)
}
