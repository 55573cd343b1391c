package ingest

import "testing"

// TestChunkPairs: a chunk gives each vertex of a Part chunkPairsPerVertex
// pairs within [minChunkPairs, maxChunkPairs], and the pool of chunks
// stays within chunkPoolBytes unless the floor forces more.
func TestChunkPairs(t *testing.T) {
	for _, c := range []struct {
		vertices      uint32
		readers, want int
	}{
		{1 << 13, 8, 16 << 10}, // kron13: 1,024 vertices a Part
		{1 << 15, 8, 64 << 10}, // kron15: 4,096 vertices a Part
		{1 << 17, 8, 64 << 10}, // capped at maxChunkPairs
		{1 << 20, 32, 8 << 10}, // 1,184 chunks: the pool budget, then the floor
		{1 << 20, 16, 24966},   // 336 chunks: 64 MiB / (8 B · 336)
		{100, 2, 8 << 10},      // tiny graph: the floor
	} {
		parts := c.readers
		chunks := c.readers*parts + parts*(inserterQueue+1)
		got := chunkPairs(c.vertices, parts, chunks)
		if got != c.want {
			t.Errorf("chunkPairs(%d vertices, %d parts, %d chunks) = %d, want %d", c.vertices, parts, chunks, got, c.want)
		}
		if pool := got * 8 * chunks; got > minChunkPairs && pool > chunkPoolBytes {
			t.Errorf("%d vertices, %d readers: pool of %d bytes, over %d", c.vertices, c.readers, pool, chunkPoolBytes)
		}
	}
}
