package distributor

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// TestConfigValidate: Validate takes a zero as the default, ValidateExplicit
// as a value for Credits, FlushDelay and the timeouts; both name each
// field out of range with a *FieldError.
func TestConfigValidate(t *testing.T) {
	fields := func(err error) []string {
		t.Helper()
		if err == nil {
			return nil
		}
		var out []string
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			var fe *FieldError
			if !errors.As(e, &fe) {
				t.Fatalf("%v: not a *FieldError", e)
			}
			out = append(out, fe.Field)
		}
		return out
	}
	f := func(c Config, lax, explicit []string) {
		t.Helper()
		if got := fields(c.Validate()); !slices.Equal(got, lax) {
			t.Errorf("%+v: Validate names %q, want %q", c, got, lax)
		}
		if got := fields(c.ValidateExplicit()); !slices.Equal(got, explicit) {
			t.Errorf("%+v: ValidateExplicit names %q, want %q", c, got, explicit)
		}
	}
	timed := []string{"FlushDelay", "AnswerTimeout", "DialTimeout", "HandshakeTimeout", "RedialBackoff"}
	f(Config{}, nil, append([]string{"Credits"}, timed...))
	s := time.Second
	good := Config{Credits: MaxCredits, FlushDelay: s, AnswerTimeout: s, DialTimeout: s, HandshakeTimeout: s, RedialBackoff: s}
	f(good, nil, nil)
	bad := Config{Credits: -1, FrameBytes: -1, MaxFrameBytes: -1, FlushDelay: -s, AnswerTimeout: -s, DialTimeout: -s,
		HandshakeTimeout: -s, RedialBackoff: -s}
	all := append([]string{"Credits", "FrameBytes", "MaxFrameBytes"}, timed...)
	f(bad, all, all)
	good.Credits = MaxCredits + 1
	f(good, []string{"Credits"}, []string{"Credits"})

	good.Credits, good.DialTimeout = 1, 0
	if err := good.ValidateExplicit(); err == nil || err.Error() != "distributor: DialTimeout = 0s, want > 0" {
		t.Errorf("ValidateExplicit with DialTimeout 0: %v", err)
	}
}

// TestPoolReserveBytes: nothing without --listen; at least two workers'
// frames and credits over the fixed part; more with more workers or
// credits.
func TestPoolReserveBytes(t *testing.T) {
	if n := PoolReserveBytes(false, 8, Config{}); n != 0 {
		t.Errorf("not listening: %d bytes, want 0", n)
	}
	two := PoolReserveBytes(true, 0, Config{})
	if want := int64(8<<20 + 2*(2*512<<10+DefaultCredits<<12)); two != want || PoolReserveBytes(true, 1, Config{}) != two {
		t.Errorf("0 or 1 expected workers: %d bytes, want %d (two workers)", two, want)
	}
	if PoolReserveBytes(true, 4, Config{}) <= two || PoolReserveBytes(true, 2, Config{Credits: 1024}) <= two {
		t.Error("more workers or more credits did not raise the reserve")
	}
}
