//go:build !purego

package gutters

// prefetchLines asks for the 64-byte line at slab[at[i]], for i < n, to be
// written (PREFETCHW), one after the other, so that their TLB walks and
// misses overlap. A prefetch never faults, so the indices need no bounds
// check. Implemented in prefetch_amd64.s.
//
//go:noescape
func prefetchLines(slab *uint32, at *int, n int)
