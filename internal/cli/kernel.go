package cli

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"sketchcc/sketch"
)

// kernelValue is the --sketch-kernel flag: parsing it selects the sketch
// kernel of the process (sketch.SetKernel), so a kernel this CPU lacks is a
// usage error.
type kernelValue struct{}

func (kernelValue) String() string { return "auto" }
func (kernelValue) Set(s string) error {
	if s == "" { // SetKernel reads "" as auto; on a command line it is a slip
		return errors.New("empty; want auto, avx512, avx2 or portable")
	}
	return sketch.SetKernel(s)
}
func (kernelValue) Type() string { return "string" }

// KernelVar defines the --sketch-kernel flag on fs: auto (the fastest this
// CPU has), avx512, avx2 or portable. Parsing it sets the kernel for the
// whole process.
func KernelVar(fs *pflag.FlagSet) {
	fs.Var(kernelValue{}, "sketch-kernel",
		"sketch kernel: auto, avx512, avx2 or portable (all give the same sketches; available here: "+
			strings.Join(sketch.Kernels(), ", ")+")")
}
