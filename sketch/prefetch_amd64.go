//go:build !purego

package sketch

// prefetch issues a PREFETCHT0 for every 64-byte line of the n bytes at p.
// Implemented in prefetch_amd64.s.
//
//go:noescape
func prefetch(p *Bucket, n int)
