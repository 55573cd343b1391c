//go:build purego || !amd64

package gutters

// prefetchLines does nothing on this architecture.
func prefetchLines(slab *uint32, at *int, n int) {}
