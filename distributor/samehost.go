package distributor

import (
	"log/slog"
	"runtime"
)

// SameHostCores returns a Config.SameHost that runs the main node on
// cores (GOMAXPROCS) less the delta threads of the connected workers on
// this machine, at least one and at most cores, and gives the cores back
// as those workers go; log gets every change at info. On 2 cores with two
// single-thread workers on loopback (the benchmark setup) that is one:
// with two, the main node's idle Ps spin and take the workers' cores
// (kron15, 8 readers, AMD EPYC family 26 model 2, two interleaved rounds:
// main-node CPU 43.9 / 44.8 against 61.3 / 57.9 ns per update, workers
// 47.3 / 52.0 against 71.7 / 64.2; results/perf-notes.md, fifth session).
func SameHostCores(cores int, log *slog.Logger) func(threads int) {
	return func(threads int) {
		n := min(cores, max(1, cores-threads))
		if was := runtime.GOMAXPROCS(n); was != n {
			log.Info("main node cores changed", "cores", n, "was", was, "same_host_worker_threads", threads)
		}
	}
}
