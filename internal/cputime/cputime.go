// Package cputime reads CPU time. ThreadSeconds is the calling OS
// thread's, for benchmarks that report CPU per unit of work beside wall
// time: on a shared machine the thread's CPU leaves out the time others
// ran (a benchmark that reads it locks its goroutine to its thread,
// runtime.LockOSThread, first). Profile splits a process's CPU by the
// pprof labels its goroutines carry ("stage", "goroutine"), for the main
// node's --json "main_cpu".
package cputime
