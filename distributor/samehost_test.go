package distributor

import (
	"log/slog"
	"runtime"
	"testing"
)

// TestSameHostCores: the main node runs on its cores less the same-host
// workers' threads, at least one, and gets them back when those workers
// go.
func TestSameHostCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	const cores = 3
	f := SameHostCores(cores, slog.New(slog.DiscardHandler))
	for _, c := range []struct{ threads, want int }{
		{1, 2}, {cores + 5, 1}, {cores - 1, 1}, {0, cores},
	} {
		f(c.threads)
		if got := runtime.GOMAXPROCS(0); got != c.want {
			t.Errorf("same-host threads %d: GOMAXPROCS %d, want %d of %d", c.threads, got, c.want, cores)
		}
	}
}
