package sketch

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

func TestDeltaRoundTrip(t *testing.T) {
	p := mustParams(t, 1000, 1, 9)
	rng := rand.New(rand.NewPCG(5, 6))
	d := make([]Bucket, p.BucketsPerVertex())
	var b []byte
	want := map[uint32][]Bucket{}
	for _, v := range []uint32{0, 17, 999} {
		p.Delta(d, v, randomNeighbors(rng, 1000, v, 50))
		want[v] = append([]Bucket(nil), d...)
		b = AppendDelta(b, v, d)
	}
	got := make([]Bucket, p.BucketsPerVertex())
	for range 3 {
		v, rest, err := p.DecodeDelta(got, b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bucketBytes(got), bucketBytes(want[v])) {
			t.Fatalf("vertex %d: delta differs after round trip", v)
		}
		b = rest
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes left", len(b))
	}
	// Malformed: short, wrong count, vertex out of range.
	good := AppendDelta(nil, 3, want[17])
	bad := [][]byte{nil, good[:5], good[:len(good)-1], AppendDelta(nil, 3, want[17][:10]), AppendDelta(nil, 1000, want[17])}
	for i, in := range bad {
		if _, _, err := p.DecodeDelta(got, in); !errors.Is(err, ErrEncoding) {
			t.Errorf("case %d: err = %v, want ErrEncoding", i, err)
		}
	}
}

func TestTableRoundTrip(t *testing.T) {
	p := mustParams(t, 300, 1.5, 77)
	tab := NewTable(p)
	rng := rand.New(rand.NewPCG(1, 9))
	for v := range uint32(300) {
		tab.ApplyBatch(v, randomNeighbors(rng, 300, v, 5))
	}
	var buf bytes.Buffer
	n, err := tab.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}
	enc := buf.Bytes()
	got, err := ReadTable(bytes.NewReader(enc))
	if err != nil {
		t.Fatal(err)
	}
	if !compatible(got.Params(), p) || !bytes.Equal(bucketBytes(got.buckets), bucketBytes(tab.buckets)) {
		t.Fatal("table differs after round trip")
	}
	if _, err := ReadTable(bytes.NewReader(enc[:len(enc)-3])); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short table: %v", err)
	}
	bad := append([]byte("XXXXXXXX"), enc[8:]...)
	if _, err := ReadTable(bytes.NewReader(bad)); !errors.Is(err, ErrEncoding) {
		t.Errorf("bad magic: %v", err)
	}
}
