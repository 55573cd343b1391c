package cputime

import "golang.org/x/sys/unix"

// ThreadSeconds returns the CPU time the calling OS thread has used, user
// and system, in seconds, or 0 where it cannot tell.
func ThreadSeconds() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
