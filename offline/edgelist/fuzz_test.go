package edgelist

import (
	"bytes"
	"context"
	"testing"
)

// FuzzParse feeds arbitrary bytes to every parser: none may panic, and a
// graph it returns must be simple, in range and sorted. The first byte
// selects the format (low 7 bits) and lenient parsing (high bit).
func FuzzParse(f *testing.F) {
	seeds := []string{
		"\x00# c\n1 2\n2 3\n3 3\n",
		"\x00from,to\r\n1,2\r\n",
		"\x01%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n",
		"\x024,2,u,g\n1,2\n3,4\n",
		"\x03graph [ node [ id 1 ] node [ id 2 label \"a b\" ] edge [ source 1 target 2 ] ]",
		"\x04" + "3 2\n0 1\n1 2\n",
		// Inputs from the wild (wild_test.go): lone CR line ends, a huge
		// id on line 1, a negative id, ids up to 2^64-1, a banner-less
		// MatrixMarket file, a SNAP comment that lost its '#', empty
		// graphs, and a lenient parse (first byte | 0x80).
		"\x00" + "10 20\r30 40\r",
		"\x00" + "18446744073709551615 2\n3 4\n",
		"\x00" + "1 2\n-1 3\n",
		"\x00" + "0 1\n18446744073709551615 5\n",
		"\x01" + "3 3 2\n2 1\n3 2\n",
		"\x00" + "# Undirected graph\n# Legend:\n    2 = strong tie\n# Nodes: 3\n1 2 2\n2 3 1\n",
		"\x01%%MatrixMarket matrix coordinate pattern symmetric\n5 5 0\n",
		"\x04" + "5 0\n",
		"\x80" + "src dst\n1 2\nx y\n-4 5\n2 3\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		format := Format(int(data[0]&0x7f) % len(formatNames))
		g, err := Parse(context.Background(), bytes.NewReader(data[1:]), "fuzz", format, Options{Lenient: data[0]&0x80 != 0})
		if err != nil {
			return
		}
		checkSimple(t, g)
		if g.Stats.Entries != int64(len(g.Edges))+g.Stats.SelfLoops+g.Stats.Duplicates {
			t.Fatalf("entries %d != edges %d + self-loops %d + duplicates %d",
				g.Stats.Entries, len(g.Edges), g.Stats.SelfLoops, g.Stats.Duplicates)
		}
	})
}

// FuzzParseEvents checks that the event parser never panics and keeps
// its ids in range.
func FuzzParseEvents(f *testing.F) {
	f.Add([]byte("1 2 100\n2 3 50.5\n3 3 7\n"))
	f.Add([]byte("a,b,c,d\n1,2,-1,1e9\n"))
	f.Add([]byte("u v t\r1 18446744073709551615 5\r2 3 6\r"))
	f.Add([]byte("1 2 5\n-1 3 6\nx\n2 3 7\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lenient := len(data) > 0 && data[0] == '!'
		ev, err := ParseEvents(context.Background(), bytes.NewReader(data), "fuzz", 0, Options{Lenient: lenient})
		if err != nil {
			return
		}
		for _, e := range ev.List {
			if e.Edge.Src >= e.Edge.Dst || e.Edge.Dst >= ev.Vertices {
				t.Fatalf("event %+v out of range or not canonical", e)
			}
		}
	})
}
