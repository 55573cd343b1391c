// Package cputime reads the CPU time of the calling OS thread, for
// benchmarks that report CPU per unit of work beside wall time: on a
// shared machine the thread's CPU leaves out the time others ran. A
// benchmark that reads it locks its goroutine to its thread
// (runtime.LockOSThread) first.
package cputime
