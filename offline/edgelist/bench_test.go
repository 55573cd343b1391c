package edgelist

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkParseSnap parses a SNAP-style edge list of 2^20 lines ("u\tv",
// ids below 2^20) held in memory: line splitting, id parsing, relabelling
// and deduplication. Bytes are input bytes.
//
// Compare two commits with
//
//	go test -run='^$' -bench=ParseSnap -count=6 ./offline/edgelist > new.txt
//	~/go/bin/benchstat old.txt new.txt
func BenchmarkParseSnap(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var in bytes.Buffer
	in.WriteString("# FromNodeId\tToNodeId\n")
	const lines = 1 << 20
	for range lines {
		fmt.Fprintf(&in, "%d\t%d\n", rng.IntN(1<<20), rng.IntN(1<<20))
	}
	data := in.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(context.Background(), bytes.NewReader(data), "bench", Snap, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
