package metrics

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// childNoFile, set in the environment, makes TestIdleConnectionsChild run:
// in a child process of TestIdleConnections, under that open-file limit.
const childNoFile = "SKETCHCC_TEST_METRICS_NOFILE"

// TestIdleConnections: far more idle connections than the server's limit,
// from a process whose descriptors they would otherwise exhaust (each
// connection takes one on both ends), leave the process descriptors for a
// checkpoint file and a data-plane connection, and the server answers a
// scrape; each idle connection is closed after the header timeout. It
// runs in a child process, under an open-file limit of 512.
func TestIdleConnections(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleConnectionsChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childNoFile+"=512")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestIdleConnectionsChild") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestIdleConnectionsChild(t *testing.T) {
	if os.Getenv(childNoFile) == "" {
		t.Skip("runs in TestIdleConnections' child process")
	}
	var lim unix.Rlimit
	requireNoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	var soft uint64
	fmt.Sscan(os.Getenv(childNoFile), &soft)
	lim.Cur = soft
	requireNoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &lim))

	s, err := Serve("127.0.0.1:0", NewRegistry(), Config{ReadHeaderTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond})
	requireNoError(t, err)
	defer s.Close()
	if want := MaxConnsFor(soft); s.MaxConns() != want || want != int(soft/FDShare) {
		t.Fatalf("MaxConns %d under a limit of %d descriptors, want %d", s.MaxConns(), soft, soft/FDShare)
	}
	idle := make([]net.Conn, s.MaxConns()+200)
	for i := range idle {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		defer c.Close()
		idle[i] = c
	}
	// The scrape waits, in the accept queue, behind the idle connections
	// that the server closes after their header timeout.
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatalf("scrape with %d idle connections: %v", len(idle), err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "process_open_fds") {
		t.Fatalf("scrape: %s, %v\n%.200s", resp.Status, err, body)
	}
	// The main node's other work still gets descriptors: a checkpoint
	// file, a data-plane connection.
	f, err := os.CreateTemp(t.TempDir(), "checkpoint.skcc.tmp")
	if err != nil {
		t.Fatalf("checkpoint file with %d idle connections: %v", len(idle), err)
	}
	f.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	requireNoError(t, err)
	defer ln.Close()
	dp, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("data-plane connection with %d idle connections: %v", len(idle), err)
	}
	dp.Close()
	// Every idle connection is closed by the server, a limit's worth
	// each header timeout.
	for i, c := range idle {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Fatalf("idle connection %d: read %v, want the server to close it (EOF)", i, err)
		}
	}
}

// TestIdleTimeout: a keep-alive connection left idle after a scrape is
// closed after IdleTimeout.
func TestIdleTimeout(t *testing.T) {
	s, err := Serve("127.0.0.1:0", NewRegistry(), Config{IdleTimeout: 100 * time.Millisecond})
	requireNoError(t, err)
	defer s.Close()
	c, err := net.Dial("tcp", s.Addr())
	requireNoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: %s\r\n\r\n", s.Addr())
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	requireNoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	requireNoError(t, err)
	if resp.Close {
		t.Fatal("the server closed the connection after the scrape; want keep-alive")
	}
	t0 := time.Now()
	c.SetReadDeadline(t0.Add(5 * time.Second))
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle keep-alive connection: read %v after %v, want the server to close it (EOF)", err, time.Since(t0))
	}
}

func TestMaxConnsFor(t *testing.T) {
	f := func(openFiles uint64, want int) {
		t.Helper()
		if got := MaxConnsFor(openFiles); got != want {
			t.Errorf("MaxConnsFor(%d) = %d, want %d", openFiles, got, want)
		}
	}
	f(1<<20, DefaultMaxConns)
	f(2048, DefaultMaxConns)
	f(1024, 128)
	f(256, 32)
	f(7, 1)
	f(0, 1)
}

// TestOpenFileLimit: the process runs with its soft open-file limit
// raised to the hard one (Go does it as the process starts, to the hard
// limit less one), which the connection limit is sized from.
func TestOpenFileLimit(t *testing.T) {
	if os.Getenv(childNoFile) != "" {
		t.Skip("the child lowers its limit")
	}
	var lim unix.Rlimit
	requireNoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	n, err := OpenFileLimit()
	requireNoError(t, err)
	if n != lim.Cur || n+1 < lim.Max {
		t.Errorf("OpenFileLimit() = %d; soft limit %d, hard %d: want the soft limit raised to the hard", n, lim.Cur, lim.Max)
	}
}

func requireNoError(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
