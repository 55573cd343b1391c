package edgelist

import (
	"bytes"
	"testing"
)

// FuzzParse feeds arbitrary bytes to every parser: none may panic, and a
// graph it returns must be simple, in range and sorted. The first byte
// selects the format.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"\x00# c\n1 2\n2 3\n3 3\n",
		"\x00from,to\r\n1,2\r\n",
		"\x01%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n",
		"\x024,2,u,g\n1,2\n3,4\n",
		"\x03graph [ node [ id 1 ] node [ id 2 label \"a b\" ] edge [ source 1 target 2 ] ]",
		"\x04" + "3 2\n0 1\n1 2\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		format := Format(int(data[0]) % len(formatNames))
		g, err := Parse(bytes.NewReader(data[1:]), "fuzz", format)
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
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := ParseEvents(bytes.NewReader(data), "fuzz", 0)
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
