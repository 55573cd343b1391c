package lib

import (
	"testing"
	"time"
)

type clock struct{}

func (clock) Sleep(time.Duration) {}

// TestSleeps sleeps (FAULT).
func TestSleeps(t *testing.T) {
	time.Sleep(time.Millisecond)
}

// TestClock calls a method named Sleep (NEAR).
func TestClock(t *testing.T) {
	clock{}.Sleep(time.Millisecond)
}
