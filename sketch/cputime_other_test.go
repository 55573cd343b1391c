//go:build !linux

package sketch

// threadCPUSeconds returns 0: the thread's CPU time is read on Linux only.
func threadCPUSeconds() float64 { return 0 }
