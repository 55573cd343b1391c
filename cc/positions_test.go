package cc

import (
	"slices"
	"strings"
	"testing"
)

func TestPositions(t *testing.T) {
	for _, tc := range []struct {
		at      []uint64
		queries int
		total   uint64
		want    []uint64
		skipped []Skipped
	}{
		{nil, 1, 100, []uint64{100}, nil},
		{nil, 4, 100, []uint64{25, 50, 75, 100}, nil},
		{nil, 3, 0, []uint64{0}, []Skipped{{0, SkipNoUpdates}}},
		{nil, 5, 2, []uint64{1, 2}, []Skipped{{0, SkipCrowded}}},
		{[]uint64{50, 10, 50, 50, 0, 0, 200, 100}, 1, 100, []uint64{10, 50, 100},
			[]Skipped{{50, SkipRepeated}, {0, SkipZero}, {0, SkipRepeated}, {200, SkipPastEnd}}},
		// at decides, whatever queries says.
		{[]uint64{30}, 4, 100, []uint64{30, 100}, nil},
	} {
		pos, skipped := Positions(tc.at, tc.queries, tc.total)
		if !slices.Equal(pos, tc.want) || !slices.Equal(skipped, tc.skipped) {
			t.Errorf("Positions(%v, %d, %d) = %v, %v; want %v, %v",
				tc.at, tc.queries, tc.total, pos, skipped, tc.want, tc.skipped)
		}
	}
}

func TestReadPairs(t *testing.T) {
	ps, err := ReadPairs(strings.NewReader("# pairs\n1 2\n\n  3 3 \n"), "q.txt", 4)
	if err != nil || !slices.Equal(ps, []Pair{{1, 2}, {3, 3}}) {
		t.Fatalf("got %v, %v", ps, err)
	}
	for in, want := range map[string]string{
		"1 2\n3 4\n":  "q.txt:2: vertex out of range: (3,4), stream has 4 vertices",
		"1\n":         `q.txt:1: want "u v", got "1"`,
		"1 2 3\n":     `q.txt:1: want "u v", got "1 2 3"`,
		"0 1\n-1 2\n": `q.txt:2: want "u v", got "-1 2"`,
	} {
		if _, err := ReadPairs(strings.NewReader(in), "q.txt", 4); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", in, err, want)
		}
	}
	res := &Result{Labels: []uint32{0, 1, 0, 1}}
	if !res.Connected(Pair{0, 2}) || res.Connected(Pair{0, 1}) {
		t.Error("Connected does not follow the labels")
	}
}
