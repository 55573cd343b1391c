//go:build !linux

package hugepage

import "unsafe"

func advise(unsafe.Pointer, uintptr) bool { return false }

// Setting returns "unsupported": only Linux has transparent huge pages.
func Setting() string { return "unsupported" }
