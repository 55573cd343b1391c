package service

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sketchcc/client"
	"sketchcc/internal/testwait"
	"sketchcc/stream"
)

// rawRequest sends one HTTP/1.1 request on a new connection to addr and
// returns the status and body of the answer.
func rawRequest(addr, method, path, token, body string) (int, string, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n", method, path, len(body))
	if token != "" {
		req += "Authorization: Bearer " + token + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"+body); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestAPIBadRequests: each bad request gets its 4xx status and a JSON
// error that says what is wrong.
func TestAPIBadRequests(t *testing.T) {
	const vertices = 100
	streams := [][]stream.Update{producerStream(vertices, 2000, 0, 1, 7)}
	r := startRig(t, vertices, streams, APIConfig{Token: "s3cret", MaxBodyBytes: 4 << 10, MaxPairs: 50})
	r.step[0] <- -1
	addr := r.api.Addr()
	big := `{"pairs": [` + strings.Repeat("[1,2],", 2000) + `[1,2]]}`
	many := `{"pairs": [` + strings.Repeat("[1,2],", 60) + `[1,2]]}`
	for _, c := range []struct {
		method, path, token, body string
		status                    int
		says                      string
	}{
		{"GET", "/v1/components", "", "", 401, "token"},
		{"GET", "/v1/components", "wrong", "", 401, "token"},
		{"GET", "/v1/nope", "s3cret", "", 404, "no such endpoint"},
		{"GET", "/v1/components?labels=maybe", "s3cret", "", 400, "labels"},
		{"GET", "/v1/connected?u=1", "s3cret", "", 400, "parameter v missing"},
		{"GET", "/v1/connected?u=1&v=100", "s3cret", "", 400, "out of range"},
		{"GET", "/v1/connected?u=-1&v=2", "s3cret", "", 400, "not a vertex id"},
		{"POST", "/v1/connected", "s3cret", "", 400, "empty body"},
		{"POST", "/v1/connected", "s3cret", `{"pairs": [[1,2]`, 400, "malformed"},
		{"POST", "/v1/connected", "s3cret", `{"pears": [[1,2]]}`, 400, "unknown field"},
		{"POST", "/v1/connected", "s3cret", `{"pairs": [[1,-2]]}`, 400, "malformed"},
		{"POST", "/v1/connected", "s3cret", `{"pairs": [[1,2]]} {}`, 400, "more than one"},
		{"POST", "/v1/connected", "s3cret", `{"pairs": [[1,200]]}`, 400, "out of range"},
		{"POST", "/v1/connected", "s3cret", many, 400, "at most 50"},
		{"POST", "/v1/connected", "s3cret", big, 413, "over 4096 bytes"},
	} {
		status, body, err := rawRequest(addr, c.method, c.path, c.token, c.body)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		var e struct{ Error string }
		if status != c.status || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, c.says) {
			t.Errorf("%s %s %.40q: %d %s, want %d and an error saying %q", c.method, c.path, c.body, status, body, c.status, c.says)
		}
	}
	// The client's typed error.
	_, err := r.cl.Connected(context.Background(), [][2]uint32{{1, 1000}})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.Message, "out of range") {
		t.Errorf("client error %v, want an *APIError 400 saying out of range", err)
	}
	// And a good request still gets an exact answer.
	ans, err := r.cl.Components(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, want := r.expect(t, ans.Head); !slices.Equal(ans.Labels, want) {
		t.Fatal("labels differ from union-find's")
	}
}

// TestAPIStorm: 1,000 connections at once, each asking for the
// components, while 50 clients never read their answers and ingestion
// goes on; each request gets an exact answer or a 503 (too many in
// flight), the answers keep coming, ingestion keeps going, and the heap
// stays bounded.
func TestAPIStorm(t *testing.T) {
	const vertices = 2000
	streams := [][]stream.Update{producerStream(vertices, 40000, 0, 1, 9)}
	r := startRig(t, vertices, streams, APIConfig{})
	addr := r.api.Addr()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// Clients that send a request and never read (nor close).
	for range 50 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /v1/components?labels=true HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	// A slow client that never finishes its header.
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	io.WriteString(slow, "GET /v1/status HTTP/1.1\r\nHo")

	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[int]int{}
	var answers []string
	for i := range 1000 {
		wg.Go(func() {
			if i%100 == 0 {
				select {
				case r.step[0] <- 400:
				case <-r.closed[0]:
				}
			}
			status, body, err := rawRequest(addr, "GET", "/v1/components?labels=true", "", "")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				counts[-1]++
				return
			}
			counts[status]++
			if status == 200 {
				answers = append(answers, body)
			}
		})
	}
	wg.Wait()
	if counts[-1] > 0 || counts[200]+counts[503] != 1000 {
		t.Fatalf("statuses %v: want only 200 and 503, no failed connection", counts)
	}
	if counts[200] < 100 {
		t.Fatalf("statuses %v: fewer than 100 answered", counts)
	}
	checked := map[uint64]bool{}
	for _, b := range answers {
		var ans client.Components
		if err := json.Unmarshal([]byte(b), &ans); err != nil {
			t.Fatal(err)
		}
		if checked[ans.Position] {
			continue
		}
		checked[ans.Position] = true
		if _, want := r.expect(t, ans.Head); !slices.Equal(ans.Labels, want) {
			t.Fatalf("answer at %d: labels differ from union-find's", ans.Position)
		}
	}
	// Ingestion goes on past the storm and the stuck clients.
	r.step[0] <- -1
	<-r.closed[0]
	<-r.done
	if r.runErr != nil || r.final.Position != 40000 {
		t.Fatalf("final answer at %v (%v), want 40000", r.final, r.runErr)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 64<<20 {
		t.Errorf("heap grew by %d MiB over the storm", grew>>20)
	}
	// Requests that arrived together shared queries.
	if st := r.final; st == nil {
		t.Fatal("no final answer")
	}
	st, err := r.cl.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Queries > uint64(counts[200]/4) {
		t.Errorf("%d queries for %d answers: requests arriving together should share them", st.Queries, counts[200])
	}
	t.Logf("statuses %v; %d distinct positions answered, %d queries", counts, len(checked), st.Queries)
}

// dialSmallWindow connects to addr with a 4 KiB receive buffer, set
// before the connection opens.
func dialSmallWindow(addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	return d.Dial("tcp", addr)
}

// TestAPIStuckReader: clients that ask for every vertex's label, again
// and again on one connection (pipelined), and never read hold a handler
// each once the answers fill their sockets' buffers, and only until
// WriteWait drops them; meanwhile ingestion goes on, other clients get
// exact answers, and the heap stays bounded. (Loopback took 2.8 MB of
// answers that nobody read before a write blocked, with a 4 KiB receive
// buffer: more than one labels answer of a graph a test can afford, so
// each stuck client asks for 160 of them, about 6 MB.)
func TestAPIStuckReader(t *testing.T) {
	const vertices, stuck, asks, writeWait = 8192, 8, 160, time.Second
	streams := [][]stream.Update{producerStream(vertices, 20000, 0, 1, 13)}
	r := startRig(t, vertices, streams, APIConfig{WriteWait: writeWait})
	r.step[0] <- 5000
	addr := r.api.Addr()
	if _, err := r.cl.Components(context.Background(), true); err != nil { // the first query's memory, before the count starts
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var conns []net.Conn
	for range stuck {
		c, err := dialSmallWindow(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, strings.Repeat("GET /v1/components?labels=true HTTP/1.1\r\nHost: x\r\n\r\n", asks))
		conns = append(conns, c)
	}
	// Every stuck client holds a handler, blocked writing: the count of
	// requests in flight stays at theirs.
	steady := 0
	testwait.Until(t, 20*time.Second, 5*time.Millisecond, func() error {
		if n := len(r.api.sem); n != stuck {
			steady = 0
			return fmt.Errorf("%d requests in flight, want the %d stuck ones", n, stuck)
		}
		if steady++; steady < 20 {
			return errors.New("not steady for 100 ms yet")
		}
		return nil
	})
	t0 := time.Now()
	// Ingestion goes on, and other clients get exact answers.
	r.step[0] <- 5000
	testwait.Until(t, 10*time.Second, time.Millisecond, func() error {
		ans, err := r.cl.Components(context.Background(), true)
		if err != nil {
			return err
		}
		if _, want := r.expect(t, ans.Head); !slices.Equal(ans.Labels, want) {
			t.Fatalf("answer at %d: labels differ from union-find's", ans.Position)
		}
		if ans.Position < 10000 {
			return fmt.Errorf("answer at %d: the second 5,000 updates are not applied yet", ans.Position)
		}
		return nil
	})
	var during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&during)
	// The write timeout releases the stuck handlers and closes their
	// connections before their answers were all sent.
	testwait.Until(t, writeWait+10*time.Second, time.Millisecond, func() error {
		if n := len(r.api.sem); n != 0 {
			return fmt.Errorf("%d requests in flight, want none once the write timeout has passed", n)
		}
		return nil
	})
	if d := time.Since(t0); d < writeWait/2 {
		t.Errorf("stuck handlers released %v after they were seen stuck, before the write timeout", d)
	}
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := io.ReadAll(c)
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("stuck connection %d: %v, want it closed by the server", i, err)
		}
		if got := strings.Count(string(b), "HTTP/1.1 200"); got >= asks {
			t.Errorf("stuck connection %d: %d answers begun of %d: its writes did not block", i, got, asks)
		}
	}
	r.step[0] <- -1
	<-r.closed[0]
	<-r.done
	if r.runErr != nil || r.final.Position != 20000 {
		t.Fatalf("final answer at %v (%v), want 20000", r.final, r.runErr)
	}
	if grew := int64(during.HeapInuse) - int64(before.HeapInuse); grew > 8<<20 {
		t.Errorf("heap grew by %d MiB with %d stuck clients", grew>>20, stuck)
	}
	t.Logf("heap grew by %d KiB with %d stuck clients; released %v after seen stuck",
		(int64(during.HeapInuse)-int64(before.HeapInuse))>>10, stuck, time.Since(t0))
}
