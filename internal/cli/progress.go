package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"sketchcc/ingest"
)

// progressEvery is how often a progress bar polls its count and redraws.
const progressEvery = 200 * time.Millisecond

// StartProgress shows a progress bar on stderr, described as what (for
// example "ingesting"), while count goes to total updates, polling it
// every 200 ms from a goroutine of its own. mode is a command's
// --progress: "never" shows none, "always" one, and "auto" one only when
// stderr is a terminal; a total of 0 shows none. The rate shown is an
// ingest.RateMeter's, hidden until it means something. The returned func
// sets the final count, finishes the bar (clearing it) and waits for its
// goroutine; call it once.
func StartProgress(mode string, stderr io.Writer, what string, total uint64, count func() uint64) (stop func()) {
	f, isFile := stderr.(*os.File)
	if mode == "never" || total == 0 || (mode == "auto" && !(isFile && term.IsTerminal(int(f.Fd())))) {
		return func() {}
	}
	bar := progressbar.NewOptions64(int64(total),
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(false), // from the bar's own rate; see ingest.RateMeter
		progressbar.OptionThrottle(progressEvery),
		progressbar.OptionClearOnFinish(),
	)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		var m ingest.RateMeter
		for {
			select {
			case <-done:
				bar.Set64(int64(count()))
				bar.Finish()
				return
			case now := <-t.C:
				n := count()
				m.Add(now, n)
				if r, ok := m.Rate(); ok && r > 0 {
					left := time.Duration(float64(total-min(n, total)) / r * float64(time.Second))
					bar.Describe(fmt.Sprintf("%s at %.3g M updates/s, %v left", what, r/1e6, left.Round(time.Second)))
				}
				bar.Set64(int64(n))
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
