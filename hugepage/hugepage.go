// Package hugepage asks the kernel to back large, randomly accessed slabs
// (the sketch table, the gutters) with transparent huge pages.
//
// A 2^17-vertex graph has 1.7 GB of sketches and as much of gutters, and
// both are written at random: with 4 KiB pages nearly every gutter append
// and every batch's first touch of a sketch misses the TLB. With 2 MiB
// pages the whole slab fits in the second-level TLB. Linux enables
// transparent huge pages either always or on request (madvise, the default
// of many distributions); Advise makes the request. Elsewhere it does
// nothing.
package hugepage

import "unsafe"

// MinBytes is the smallest slab Advise bothers with: below it a slab spans
// few huge pages and the TLB covers it anyway.
const MinBytes = 8 << 20

// Advise requests huge pages for the 2 MiB-aligned part of the memory of s,
// which should be freshly allocated and not yet written (the kernel then
// faults huge pages in directly). It reports whether the kernel accepted
// the advice; failure costs only speed, so callers may ignore it.
func Advise[T any](s []T) bool {
	if len(s) == 0 {
		return false
	}
	n := uintptr(len(s)) * unsafe.Sizeof(s[0])
	if n < MinBytes {
		return false
	}
	return advise(unsafe.Pointer(unsafe.SliceData(s)), n)
}
