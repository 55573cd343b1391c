package ingest

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// fieldsOf returns the fields that err's *FieldErrors name, in order, and
// fails t on any other error in it.
func fieldsOf(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%v: not a *FieldError", e)
		}
		fields = append(fields, fe.Field)
	}
	return fields
}

// TestConfigValidate: Validate takes a zero as the default, ValidateExplicit
// as a value; both name each field out of range.
func TestConfigValidate(t *testing.T) {
	f := func(c Config, lax, explicit []string) {
		t.Helper()
		if got := fieldsOf(t, c.Validate()); !slices.Equal(got, lax) {
			t.Errorf("%+v: Validate names %q, want %q", c, got, lax)
		}
		if got := fieldsOf(t, c.ValidateExplicit()); !slices.Equal(got, explicit) {
			t.Errorf("%+v: ValidateExplicit names %q, want %q", c, got, explicit)
		}
	}
	all := []string{"Workers", "SketchFactor"}
	f(Config{}, nil, all)
	good := Config{Workers: 1, Readers: 1, SketchFactor: 0.5, BatchFactor: MaxBatchFactor}
	f(good, nil, nil)
	f(Config{Remote: true, Readers: 1, SketchFactor: 1, BatchFactor: 1}, nil, nil)
	bad := Config{Workers: MaxWorkers + 1, Readers: -1, SketchFactor: -1, BatchFactor: math.NaN(), QueueBatches: -1}
	f(bad, []string{"Workers", "Readers", "BatchFactor", "QueueBatches"}, []string{"Workers", "Readers", "SketchFactor", "BatchFactor", "QueueBatches"})
	remote := good
	remote.Remote = true
	f(remote, []string{"Workers"}, []string{"Workers"})

	var fe *FieldError
	if err := (Config{Workers: -3}).ValidateExplicit(); !errors.As(err, &fe) ||
		fe.Value != -3 || fe.Want != "[1, 4096]" || err.Error() != "ingest: Workers = -3, want [1, 4096]\n"+
		"ingest: SketchFactor = 0, want > 0" {
		t.Errorf("ValidateExplicit of Workers -3: %v", err)
	}
}

// TestDefaultBatchFactor: at the default batch factor the gutters (with
// their queue) take at most 0.55× the sketch bytes on either side of 2^16 vertices, where their
// ids widen from 16 to 32 bits (issue 28: peak RSS at most 1.5× the
// sketches).
func TestDefaultBatchFactor(t *testing.T) {
	for _, v := range []uint32{1 << 13, 1 << 16, 1<<16 + 1, 1 << 17, 1 << 20} {
		s, g, err := Memory(Config{Vertices: v, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if r := float64(g) / float64(s); r > 0.55 || r < 0.3 {
			t.Errorf("%d vertices: gutters %d bytes = %.2f× the sketches' %d, want in [0.3, 0.55]", v, g, r, s)
		}
	}
}
