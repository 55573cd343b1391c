package sketch

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

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
	if !compatible(got.Params(), p) || !bytes.Equal(AsBytes(got.buckets), AsBytes(tab.buckets)) {
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
