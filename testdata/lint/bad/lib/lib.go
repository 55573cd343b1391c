// Package lib is the synthetic library of the repository's lint test.
// Each deliberate fault is marked FAULT; the near misses around it, which
// must not be reported, NEAR.
//
// The doc check: Frob.Twiddle (FAULT: no such method), Frob.Used and
// (*Frob).String (NEAR), lib.Gone (FAULT), lib.Used (NEAR), time.Sleeep
// (FAULT: package time is imported here), time.Sleep and
// time.Duration.Round (NEAR), WaitWorkers (FAULT: declared nowhere),
// InsertBatch (NEAR: declared below), GraphZeppelin (NEAR: prose), a
// file lib.go, a path cmd/tool/main.go, e.g. an abbreviation, and an
// address github.com/GraphStreamingProject/GraphZeppelin (NEAR).
package lib

import (
	"errors"
	"fmt"
	"time"
)

// Timeout is how long Check may take: time.Duration.Hours (NEAR).
const Timeout = time.Second

// ErrBad is returned by Check. Its text spells a flag (FAULT); the
// strings of Check do not (NEAR).
var ErrBad = errors.New("lib: --batch-updates must be positive")

// Check returns ErrBad for n < 1, wrapped in an *Error.
func Check(n int) error {
	_ = "a -- b, ----, x--y"
	if n < 1 {
		return &Error{Err: ErrBad}
	}
	return nil
}

// Error wraps a check's error. Its Unwrap is called by errors.Is alone
// (NEAR: exempt by name).
type Error struct{ Err error }

func (e *Error) Error() string { return "lib: " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// Frob has a mutex-guarded group of 13 fields (FAULT).
type Frob struct {
	mu struct {
		a, b, c, d, e, f, g, h, i, j, k, l, m int
	}
}

// New returns a Frob.
func New() *Frob { return &Frob{} }

// Used is called by cmd/tool (NEAR).
func (f *Frob) Used() int { return f.mu.a + helper() }

// String makes Frob a fmt.Stringer (NEAR: exempt by the interface).
func (f *Frob) String() string { return fmt.Sprint(f.mu.b) }

// Unused has no caller (FAULT).
func (f *Frob) Unused() {}

// Unused has no caller (FAULT).
func Unused() {}

// Self calls only itself (FAULT: a use inside its own declaration does
// not count).
func Self(n int) int {
	if n > 0 {
		return Self(n - 1)
	}
	return 0
}

// Used is called by cmd/tool (NEAR).
func Used() int { return InsertBatch() }

// InsertBatch is called by Used only, in its own package (NEAR).
func InsertBatch() int { return 1 }

func helper() int { return 2 }

// Wide has 13 fields (FAULT).
type Wide struct {
	A, B, C, D, E, F, G, H, I, J, K, L int
	M                                  string
}

// Twelve has 12 fields (NEAR).
type Twelve struct {
	A, B, C, D, E, F, G, H, I, J, K int
	L                               string
}

// Twelve returns 12 (FAULT: a doc left behind by a rename).
func Twelfth() int { return 12 }

// Returns 13: the first word is prose, not a name (NEAR).
func Thirteen() int { return 13 }
