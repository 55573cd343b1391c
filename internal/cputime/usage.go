package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

// started is about when the process started: when this package was
// initialised, before main.
var started = time.Now()

// Usage is the whole process's CPU from its start, for the main node's
// --json "process_cpu": user and system seconds (getrusage), the system
// time per stream update (reading the stream, page faults, network), and
// the cores busy on average, (user + system) / wall time.
type Usage struct {
	UserSeconds       float64 `json:"user_seconds"`
	SystemSeconds     float64 `json:"system_seconds"`
	SystemNsPerUpdate float64 `json:"system_ns_per_update"`
	CoresBusy         float64 `json:"cores_busy"`
}

// ProcessUsage returns the process's Usage so far over updates stream
// updates, or nil when getrusage fails. Any goroutine may call it.
func ProcessUsage(updates uint64) *Usage {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return nil
	}
	u := &Usage{UserSeconds: float64(ru.Utime.Nano()) / 1e9, SystemSeconds: float64(ru.Stime.Nano()) / 1e9}
	if updates > 0 {
		u.SystemNsPerUpdate = u.SystemSeconds * 1e9 / float64(updates)
	}
	if wall := time.Since(started).Seconds(); wall > 0 {
		u.CoresBusy = (u.UserSeconds + u.SystemSeconds) / wall
	}
	return u
}
