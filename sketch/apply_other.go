//go:build weakhash || purego || !amd64

package sketch

// kernelMissing reports that this build has only the portable loop: the
// assembly kernels are built on amd64 only, and not with -tags purego (to
// test the portable loop) or -tags weakhash (whose hash they do not
// compute).
func kernelMissing(k int) string {
	if k == kernelPortable {
		return ""
	}
	return "is not in this build (purego or weakhash tag, or not amd64)"
}

func (p Params) applyBatchFast(s []Bucket, v uint32, neighbors []uint32) bool { return false }
