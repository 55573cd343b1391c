package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"sketchcc/distributor"
	"sketchcc/internal/testwait"
)

func runWorker(args ...string) (int, string) {
	code, _, stderr := runWorkerOut(args...)
	return code, stderr
}

func runWorkerOut(args ...string) (code int, stdout, stderr string) {
	var outb, errb bytes.Buffer
	err := run(context.Background(), args, &outb, &errb)
	return exitCode(err, &errb), outb.String(), errb.String()
}

// TestHelpToStdout: --help and -h print the usage on stdout (so that
// `worker --help | less` works) and exit 0; a usage error keeps it on
// stderr.
func TestHelpToStdout(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		code, stdout, stderr := runWorkerOut(arg)
		if code != 0 || !strings.Contains(stdout, "Usage: worker --join") || stderr != "" {
			t.Errorf("worker %s: exit %d, stdout %q, stderr %q", arg, code, stdout, stderr)
		}
	}
	code, stdout, stderr := runWorkerOut("--no-such-flag")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "no-such-flag") {
		t.Errorf("worker --no-such-flag: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		code, stderr := runWorker(args...)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("worker %q: exit %d, stderr %q; want 2 and %q", args, code, stderr, want)
		}
	}
	f("--join is required")
	f(`--join="nohost"`, "--join", "nohost")
	f("--threads=0", "--join", "127.0.0.1:1", "--threads", "0")
	f(`--listen="x"`, "--join", "127.0.0.1:1", "--listen", "x")
	f("unexpected arguments", "--join", "127.0.0.1:1", "extra")
	f(`--advertise="7100"`, "--join", "127.0.0.1:1", "--advertise", "7100")
	f(`--advertise="0.0.0.0:7100": 0.0.0.0 is not an address`, "--join", "127.0.0.1:1", "--advertise", "0.0.0.0:7100")
	f(`--advertise=":7100": no host`, "--join", "127.0.0.1:1", "--advertise", ":7100")
	f(`--advertise="h:0": port "0"`, "--join", "127.0.0.1:1", "--advertise", "h:0")
	// A host of 253 characters is a valid DNS name, but the main node
	// could not read the metadata that carries it.
	f("could read: its data-plane address is 259 bytes, limit 256",
		"--join", "127.0.0.1:1", "--advertise", strings.Repeat("h", 253)+":17100")
	// Every problem at once.
	f("--log-level", "--threads", "0", "--log-level", "loud")
}

func TestBadKeyFile(t *testing.T) {
	path := t.TempDir() + "/key"
	code, stderr := runWorker("--join", "127.0.0.1:1", "--cluster-key-file", path)
	if code != 1 || !strings.Contains(stderr, "cannot read the cluster key") {
		t.Errorf("exit %d, %q", code, stderr)
	}
}

// TestNoMainNode: with nobody at --join the worker gives up after
// --join-timeout with exit 1 and says why.
func TestNoMainNode(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a port where nothing listens
	t0 := time.Now()
	profile := filepath.Join(t.TempDir(), "cpu.pprof")
	code, stderr := runWorker("--join", addr, "--listen", "127.0.0.1:0", "--gossip-local", "--join-timeout", "300ms",
		"--cpu-profile", profile)
	if code != 1 || !strings.Contains(stderr, "cannot join the cluster at "+addr) || !strings.Contains(stderr, "worker listening") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("gave up after %v", d)
	}
	// The profile is written however the run ends: a gzipped pprof file.
	if b, err := os.ReadFile(profile); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("--cpu-profile %s: %d bytes, %v", profile, len(b), err)
	}
}

func TestAdvertised(t *testing.T) {
	got, err := distributor.Advertised(&net.TCPAddr{IP: net.IPv4zero, Port: 7100}, "127.0.0.1:7946")
	if err != nil || got != "127.0.0.1:7100" {
		t.Errorf("distributor.Advertised(0.0.0.0:7100) towards 127.0.0.1 = %q, %v", got, err)
	}
	got, err = distributor.Advertised(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 9}, "127.0.0.1:7946")
	if err != nil || got != "127.0.0.2:9" {
		t.Errorf("distributor.Advertised(127.0.0.2:9) = %q, %v", got, err)
	}
}

// logWriter keeps what a worker run in-process logs, for concurrent
// reads while it runs.
type logWriter struct {
	mu    sync.Mutex
	lines strings.Builder
}

func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines.Write(p)
}

// waitFor waits until the log has a line matching re, for at most total.
func (l *logWriter) waitFor(t *testing.T, re string, total time.Duration) {
	t.Helper()
	rx := regexp.MustCompile(re)
	testwait.Until(t, total, 10*time.Millisecond, func() error {
		l.mu.Lock()
		s := l.lines.String()
		l.mu.Unlock()
		if !rx.MatchString(s) {
			return fmt.Errorf("no log line matches %q:\n%s", re, s)
		}
		return nil
	})
}

// fakeMain starts a memberlist member with the main node's role at addr
// (127.0.0.1:0 for any port); the test's cleanup shuts it down.
func fakeMain(t *testing.T, addr string) *distributor.Membership {
	t.Helper()
	m, err := distributor.NewMembership(distributor.MembershipConfig{Name: "main", BindAddr: addr, Local: true,
		Meta: distributor.NodeMeta{Role: distributor.RoleMain}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	return m
}

// lostMain starts a worker in-process joining a fake main node and
// crashes that main node (Shutdown without Leave) once the worker has
// joined; it returns the main node's gossip address, the worker's log and
// its exit code, and cancel, which interrupts the worker (SIGTERM).
func lostMain(t *testing.T, args ...string) (addr string, log *logWriter, code <-chan int, cancel func()) {
	t.Helper()
	m := fakeMain(t, "127.0.0.1:0")
	addr = m.Addr()
	ctx, cancel := context.WithCancel(context.Background())
	log = &logWriter{}
	codes := make(chan int, 1)
	go func() {
		err := run(ctx, append([]string{"--join", addr, "--listen", "127.0.0.1:0", "--gossip-local", "--threads", "1"},
			args...), io.Discard, log)
		codes <- exitCode(err, log)
		close(codes) // for the cleanup, after the test has read the code
	}()
	t.Cleanup(func() {
		cancel()
		<-codes
	})
	log.waitFor(t, `msg="joined the cluster"`, 10*time.Second)
	m.Shutdown()
	// memberlist's local timings: a probe a second, 3 s of suspicion.
	log.waitFor(t, `level=WARN msg="the cluster declared the main node dead; serving on and trying to rejoin"`, 20*time.Second)
	return addr, log, codes, cancel
}

// TestRejoinTimeout: a worker whose main node is declared dead and does
// not come back exits 1 once --rejoin-timeout has passed, saying so.
func TestRejoinTimeout(t *testing.T) {
	_, log, codes, _ := lostMain(t, "--rejoin-timeout", "1s")
	t0 := time.Now()
	if code := exitWithin(t, codes, 10*time.Second); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	t.Logf("gave up %v after the main node was declared dead", time.Since(t0).Round(time.Millisecond))
	log.waitFor(t, `worker: error: the main node at \S+ has been gone for 1(\.\d+)?s since the cluster declared it dead; `+
		`gave up rejoining \(--rejoin-timeout=1s; 0 never gives up\)`, 0)
}

// TestRejoinRestartedMain: a worker whose main node was declared dead
// rejoins a new main node process at the same address (a main node
// restarted with --resume), and still exits 0 on SIGTERM.
func TestRejoinRestartedMain(t *testing.T) {
	addr, log, codes, cancel := lostMain(t, "--rejoin-timeout", "0")
	t0 := time.Now()
	fakeMain(t, addr)
	log.waitFor(t, `msg="rejoined the cluster"`, 15*time.Second)
	t.Logf("rejoined %v after the new main node started", time.Since(t0).Round(time.Millisecond))
	cancel()
	if code := exitWithin(t, codes, 5*time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// exitWithin returns the exit code from codes, failing the test if none
// comes within total.
func exitWithin(t *testing.T, codes <-chan int, total time.Duration) int {
	t.Helper()
	select {
	case code := <-codes:
		return code
	case <-time.After(total):
		t.Fatalf("the worker is still running after %v", total)
		return -1
	}
}
