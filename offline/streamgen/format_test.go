package streamgen

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"sketchcc/stream"
)

// TestFormatPacked: a generator asked for the packed format writes the
// updates it writes in the binary format, packed, and an unknown format
// is a *FieldError.
func TestFormatPacked(t *testing.T) {
	var bin, packed bytes.Buffer
	cfg := DefaultKronConfig(7, 3)
	if _, err := Kron(context.Background(), cfg, &bin, nil); err != nil {
		t.Fatal(err)
	}
	cfg.Format = stream.FormatPacked
	if _, err := Kron(context.Background(), cfg, &packed, nil); err != nil {
		t.Fatal(err)
	}
	if !stream.IsPacked(packed.Bytes()) || packed.Len() >= bin.Len()/2 {
		t.Fatalf("packed output of %d bytes (binary %d), packed header %v", packed.Len(), bin.Len(), stream.IsPacked(packed.Bytes()))
	}
	br, err := stream.NewReader(&bin)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := stream.NewReader(&packed)
	if err != nil {
		t.Fatal(err)
	}
	a, b := drain(t, br), drain(t, pr)
	if len(a) == 0 || !slices.Equal(a, b) {
		t.Fatalf("binary: %d updates; packed: %d, differing", len(a), len(b))
	}
	cfg.Format = 7
	var fe *FieldError
	if err := cfg.Validate(); !errors.As(err, &fe) || fe.Field != "Format" {
		t.Fatalf("Format 7: Validate says %v", err)
	}
}

func drain(t *testing.T, src stream.Source) []stream.Update {
	t.Helper()
	var out []stream.Update
	buf := make([]stream.Update, 1000)
	for {
		n, err := src.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
