//go:build weakhash || purego || !amd64

package sketch

// haveAVX512 is false where the assembly kernel is not built: other
// architectures, -tags purego (to test the portable loop), and -tags
// weakhash (whose hash the kernel does not compute).
const haveAVX512 = false

func (p Params) applyBatchFast(s []Bucket, v uint32, neighbors []uint32) bool { return false }

// Kernel names the code that ApplyBatch runs on this machine: always
// "portable" (the Go loop) in this build.
func Kernel() string { return "portable" }
