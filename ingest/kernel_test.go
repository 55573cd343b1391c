package ingest

import (
	"fmt"
	"os"
	"testing"

	"sketchcc/sketch"
)

// kernelEnv names the sketch kernel the tests and benchmarks run under,
// as in package sketch's tests.
const kernelEnv = "SKETCHCC_SKETCH_KERNEL"

// TestMain runs the tests and benchmarks under the sketch kernel named by
// $SKETCHCC_SKETCH_KERNEL (auto when unset), and fails at once if this CPU
// or build lacks it.
func TestMain(m *testing.M) {
	if err := sketch.SetKernel(os.Getenv(kernelEnv)); err != nil {
		fmt.Fprintf(os.Stderr, "$%s: %v\n", kernelEnv, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}
