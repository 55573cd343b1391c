package ingest

import (
	"fmt"
	"os"
	"testing"

	"sketchcc/sketch"
)

// TestMain runs the tests and benchmarks under the sketch kernel named by
// $SKETCHCC_SKETCH_KERNEL (auto when unset), and fails at once if this CPU
// or build lacks it.
func TestMain(m *testing.M) {
	if err := sketch.SetKernel(os.Getenv(sketch.KernelEnv)); err != nil {
		fmt.Fprintf(os.Stderr, "$%s: %v\n", sketch.KernelEnv, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}
