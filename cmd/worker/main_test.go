package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	got, err := advertised(&net.TCPAddr{IP: net.IPv4zero, Port: 7100}, "127.0.0.1:7946")
	if err != nil || got != "127.0.0.1:7100" {
		t.Errorf("advertised(0.0.0.0:7100) towards 127.0.0.1 = %q, %v", got, err)
	}
	got, err = advertised(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 9}, "127.0.0.1:7946")
	if err != nil || got != "127.0.0.2:9" {
		t.Errorf("advertised(127.0.0.2:9) = %q, %v", got, err)
	}
}
