package sketch

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// ErrKernel is wrapped by SetKernel for an unknown kernel name or a kernel
// that this CPU or build cannot run.
var ErrKernel = errors.New("sketch kernel")

// The kernels, fastest last; kernelNames spells them.
const (
	kernelPortable = iota
	kernelAVX2
	kernelAVX512
	numKernels
)

var kernelNames = [numKernels]string{"portable", "avx2", "avx512"}

// kernel is the kernel ApplyBatch runs: the fastest available one until
// SetKernel says otherwise. Atomic, so that SetKernel is safe to call
// concurrently with ApplyBatch (a batch runs wholly in one kernel).
var kernel atomic.Int32

func init() { kernel.Store(int32(bestKernel())) }

// bestKernel returns the fastest kernel this CPU and build can run.
func bestKernel() int {
	for k := numKernels - 1; k > kernelPortable; k-- {
		if kernelMissing(k) == "" {
			return k
		}
	}
	return kernelPortable
}

// SetKernel selects the code that ApplyBatch runs in this process: "avx512"
// (AVX-512 F, DQ, CD and VL), "avx2" (AVX2 and BMI1), "portable" (the Go
// loop), or "auto" or "" for the fastest one this CPU and build have. All
// kernels write the same buckets, bit for bit. It returns an error wrapping
// ErrKernel, and changes nothing, for an unknown name or a kernel the CPU
// or build lacks. It is safe for concurrent use.
func SetKernel(name string) error {
	if name == "" || name == "auto" {
		kernel.Store(int32(bestKernel()))
		return nil
	}
	for k, n := range kernelNames {
		if n != name {
			continue
		}
		if why := kernelMissing(k); why != "" {
			return fmt.Errorf("%w: %q %s (available here: %s)",
				ErrKernel, name, why, strings.Join(Kernels(), ", "))
		}
		kernel.Store(int32(k))
		return nil
	}
	return fmt.Errorf("%w: unknown name %q; want auto, avx512, avx2 or portable", ErrKernel, name)
}

// Kernel names the kernel ApplyBatch runs: "avx512", "avx2" or "portable".
func Kernel() string { return kernelNames[kernel.Load()] }

// Kernels returns the names of the kernels this CPU and build can run,
// fastest first; "portable" is always last.
func Kernels() []string {
	var out []string
	for k := numKernels - 1; k >= kernelPortable; k-- {
		if kernelMissing(k) == "" {
			out = append(out, kernelNames[k])
		}
	}
	return out
}
