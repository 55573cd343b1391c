package e2e

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"sketchcc/client"
	"sketchcc/internal/testwait"
	"sketchcc/stream"
)

// liveCopy writes a copy of the stream at path whose header's update
// count is the live marker (stream.UnknownUpdates) and returns its path.
func liveCopy(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = slices.Clone(b)
	binary.LittleEndian.PutUint64(b[4:12], stream.UnknownUpdates)
	out := filepath.Join(t.TempDir(), filepath.Base(path)+".live")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// askExact asks m's API for every vertex's component and checks the
// answer against union-find over the first updates of the stream at path
// that the answer names; it returns the answer's position.
func askExact(t *testing.T, cl *client.Client, path string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ans, err := cl.Components(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	want, n := truthAfter(t, path, ans.Position)
	if ans.Components != n || !slices.Equal(ans.Labels, want) {
		t.Fatalf("answer at %d: %d components, union-find %d (labels equal: %v)", ans.Position, ans.Components, n,
			slices.Equal(ans.Labels, want))
	}
	rng := rand.New(rand.NewPCG(ans.Position, 2))
	pairs := make([][2]uint32, 1000)
	for i := range pairs {
		pairs[i] = [2]uint32{rng.Uint32N(uint32(len(want))), rng.Uint32N(uint32(len(want)))}
	}
	conn, err := cl.Connected(ctx, pairs)
	if err != nil {
		t.Fatal(err)
	}
	if conn.Position >= ans.Position { // the same answer or a later one
		want, _ = truthAfter(t, path, conn.Position)
	}
	for i, p := range pairs {
		if conn.Connected[i] != (want[p[0]] == want[p[1]]) {
			t.Fatalf("connected(%d,%d) at %d = %v, union-find says otherwise", p[0], p[1], conn.Position, conn.Connected[i])
		}
	}
	return ans.Position
}

// TestLiveClusterWorkerKilled: a main node with two workers reads a live
// stream (header count unknown) from standard input and answers the
// query API mid-stream; one worker is SIGKILLed mid-stream. Every answer
// equals union-find over the prefix it names, and so does the final one.
func TestLiveClusterWorkerKilled(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	f := newFeeder(t, liveCopy(t, path), 0.3, 0.6)
	m, addr := startMain(t, f.r, "--stream", "-", "--query-listen", "127.0.0.1:0", "--expect-workers", "2",
		"--local-workers", "0", "--batch-factor", "0.5", "--labels", labelsPath)
	api := m.waitLog(`query API on http://(\S+)`, 20*time.Second)[1]
	cl := client.New(api, "", nil)
	w1 := startWorker(t, addr, "--name", "w1")
	startWorker(t, addr, "--name", "w2")
	m.waitLog(`msg="workers connected"`, 20*time.Second)
	f.waitHeld(t, time.Minute)
	p1 := askExact(t, cl, path)
	if err := w1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	f.run(func() error { return nil })
	f.waitHeld(t, time.Minute)
	p2 := askExact(t, cl, path)
	f.run(func() error { return nil })
	f.wait(t)
	s := finish(t, m)
	labels, want := truth(t, path)
	if s.Components != want {
		t.Fatalf("final: %d components, union-find %d", s.Components, want)
	}
	checkLabels(t, labelsPath, labels)
	t.Logf("answers at %d and %d of %d updates exact; final exact with w1 killed", p1, p2, s.Updates)
}

// TestLiveSigterm: a main node taking producers over TCP until stopped
// answers over its API, then stops at SIGTERM with the summary of every
// update it applied; a second one stops on a shutdown request.
func TestLiveSigterm(t *testing.T) {
	skipShort(t)
	for _, how := range []string{"sigterm", "shutdown"} {
		t.Run(how, func(t *testing.T) {
			m := start(t, "main-node", nil, "--updates-listen", "127.0.0.1:0", "--query-listen", "127.0.0.1:0",
				"--json", "--progress", "never")
			up := m.waitLog(`taking updates on (\S+)`, 10*time.Second)[1]
			api := m.waitLog(`query API on http://(\S+)`, 10*time.Second)[1]
			out, err := exec.Command(filepath.Join(bin, "streamtool"), "send", "--live", up, multiples).CombinedOutput()
			if err != nil {
				t.Fatalf("streamtool send: %v\n%s", err, out)
			}
			cl := client.New(api, "", nil)
			// Every record read before the question and the stop (the API
			// answers 503 until the stream has started).
			testwait.Until(t, 10*time.Second, 5*time.Millisecond, func() error {
				st, err := cl.Status(context.Background())
				if err == nil && st.Updates != 8528 {
					err = fmt.Errorf("%d of 8528 updates read", st.Updates)
				}
				return err
			})
			if p := askExact(t, cl, multiples); p != 8528 {
				t.Fatalf("answer at %d, want 8528", p)
			}
			if how == "sigterm" {
				m.cmd.Process.Signal(syscall.SIGTERM)
			} else if err := cl.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			s := finish(t, m)
			if s.Updates != 8528 || s.Components != 78 {
				t.Fatalf("summary: %d updates, %d components; want 8528 and 78", s.Updates, s.Components)
			}
		})
	}
}
