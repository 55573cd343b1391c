package sketch

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"testing"
)

// kernelEnv is the environment variable from which the tests and
// benchmarks of sketchcc take the kernel to force (the values of
// SetKernel), so that one machine can test and time every kernel its CPU
// has:
//
//	SKETCHCC_SKETCH_KERNEL=avx2 go test -run='^$' -bench=ApplyBatch ./sketch
//
// The package itself never reads it; the commands take their own flag.
const kernelEnv = "SKETCHCC_SKETCH_KERNEL"

// TestMain selects the kernel named by $SKETCHCC_SKETCH_KERNEL (see
// kernelEnv) for every test and benchmark, and fails at once if this CPU
// or build lacks it. Benchmarks print it as a "sketch-kernel:" line, which
// benchstat keeps as a configuration key.
func TestMain(m *testing.M) {
	flag.Parse()
	if err := SetKernel(os.Getenv(kernelEnv)); err != nil {
		fmt.Fprintf(os.Stderr, "$%s: %v\n", kernelEnv, err)
		os.Exit(2)
	}
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		fmt.Printf("sketch-kernel: %s\n", Kernel())
	}
	os.Exit(m.Run())
}

func TestSetKernel(t *testing.T) {
	was := Kernel()
	t.Cleanup(func() { _ = SetKernel(was) })
	avail := Kernels()
	if len(avail) == 0 || avail[len(avail)-1] != "portable" {
		t.Fatalf("Kernels() = %v, want a list ending in portable", avail)
	}
	if err := SetKernel("auto"); err != nil || Kernel() != avail[0] {
		t.Fatalf("SetKernel(auto) = %v, kernel %s; want nil, %s (the fastest)", err, Kernel(), avail[0])
	}
	for _, k := range avail {
		if err := SetKernel(k); err != nil || Kernel() != k {
			t.Errorf("SetKernel(%q) = %v, kernel %s", k, err, Kernel())
		}
	}
	for _, k := range []string{"avx512", "avx2", "sse", "AVX2", "portable "} {
		if slices.Contains(avail, k) {
			continue
		}
		before := Kernel()
		err := SetKernel(k)
		if !errors.Is(err, ErrKernel) {
			t.Errorf("SetKernel(%q) = %v, want an error wrapping ErrKernel", k, err)
		}
		if Kernel() != before {
			t.Errorf("SetKernel(%q) failed but changed the kernel from %s to %s", k, before, Kernel())
		}
		t.Logf("SetKernel(%q): %v", k, err)
	}
}
