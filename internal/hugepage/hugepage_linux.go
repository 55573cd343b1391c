package hugepage

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const hugePage = 2 << 20

func advise(p unsafe.Pointer, n uintptr) bool {
	b := unsafe.Slice((*byte)(p), n)
	start := uintptr(p)
	lo := (start+hugePage-1)&^(hugePage-1) - start
	hi := (start+n)&^(hugePage-1) - start
	if hi <= lo || hi > n {
		return false
	}
	return unix.Madvise(b[lo:hi], unix.MADV_HUGEPAGE) == nil
}
