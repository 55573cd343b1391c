//go:build !linux

package cputime

// ThreadSeconds returns 0: the thread's CPU time is read on Linux only.
func ThreadSeconds() float64 { return 0 }
