package ingest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"sketchcc/internal/testgraph"
	"sketchcc/stream"
)

// liveBytes is a binary stream of updates with the given header count.
func liveBytes(t *testing.T, vertices uint32, count uint64, ups []stream.Update) []byte {
	t.Helper()
	out := testgraph.Encode(t, vertices, ups)
	copy(out[4:12], stream.AppendHeader(nil, stream.Header{Updates: count})[4:12])
	return out
}

// readAll reads l until it ends, returning the updates read.
func readAll(l *Live) ([]stream.Update, error) {
	var out []stream.Update
	buf := make([]stream.Update, 100)
	for !l.Ended() {
		n, err := l.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil && err != io.EOF {
			return out, err
		}
	}
	return out, nil
}

func someUpdates(n int) []stream.Update {
	ups := make([]stream.Update, n)
	for i := range ups {
		ups[i] = stream.Update{Type: stream.UpdateType(i % 2), Edge: stream.Edge{Src: uint32(i % 7), Dst: 7 + uint32(i%5)}}
	}
	return ups
}

// TestLiveProducers: TCP producers with the right token are read whole,
// in their own order, whatever the header count (unknown or given); a
// wrong token, another vertex count or a truncated record ends that
// producer alone, with its error reported, and its whole records before
// it are kept.
func TestLiveProducers(t *testing.T) {
	var mu sync.Mutex
	var errs []string
	l := NewLive(LiveConfig{Producers: 3, Token: "tok", HeaderTimeout: 5 * time.Second, MaxProducers: 8,
		OnError: func(name string, err error) { mu.Lock(); errs = append(errs, err.Error()); mu.Unlock() }})
	defer l.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Serve(ln)
	ups := someUpdates(5000)
	send := func(b []byte) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		c.Write(b)
	}
	auth := []byte("AUTH tok\n")
	send(append(auth, liveBytes(t, 16, stream.UnknownUpdates, ups)...))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if h, err := l.WaitHeader(ctx); err != nil || h.Vertices != 16 || h.Updates != stream.UnknownUpdates {
		t.Fatalf("header %+v, %v", h, err)
	}
	send(append([]byte("AUTH nope\n"), liveBytes(t, 16, stream.UnknownUpdates, ups)...))
	send(append(auth, liveBytes(t, 32, stream.UnknownUpdates, ups)...))
	send(append(auth, liveBytes(t, 16, uint64(len(ups)), ups)...))
	trunc := append(auth, liveBytes(t, 16, stream.UnknownUpdates, ups[:10])...)
	send(trunc[:len(trunc)-4])
	got, err := readAll(l)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2*len(ups)+9 {
		t.Fatalf("read %d updates, want %d", len(got), 2*len(ups)+9)
	}
	var applied uint64
	for _, p := range l.Counts() {
		applied += p.Applied
		if !p.Closed {
			t.Errorf("producer %+v not closed", p)
		}
	}
	if applied != uint64(len(got)) || l.Updates() != applied {
		t.Errorf("counts add up to %d, Updates %d, read %d", applied, l.Updates(), len(got))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"bad token", "header declares 32 vertices, the stream has 16", "unexpected EOF"} {
		if !strings.Contains(strings.Join(errs, "\n"), want) {
			t.Errorf("errors %q: none says %q", errs, want)
		}
	}
}

// TestLiveStdinBad: a bad record on standard input ends the stream with
// its error, after the records before it.
func TestLiveStdinBad(t *testing.T) {
	ups := someUpdates(100)
	b := liveBytes(t, 16, stream.UnknownUpdates, ups)
	b[stream.HeaderBytes+50*stream.RecordBytes] = 7 // type byte of record 50
	l := NewLive(LiveConfig{Producers: 1})
	defer l.Close()
	l.Add("stdin", io.NopCloser(bytes.NewReader(b)))
	got, err := readAll(l)
	if !errors.Is(err, stream.ErrBadUpdateType) || len(got) != 50 {
		t.Fatalf("read %d updates, error %v; want 50 and a bad update type", len(got), err)
	}
}

// TestLiveWake: Wake makes a Read blocked on an idle producer return
// io.EOF (a barrier), and Stop ends the stream.
func TestLiveWake(t *testing.T) {
	pr, pw := io.Pipe()
	l := NewLive(LiveConfig{})
	l.Add("stdin", pr)
	pw.Write(liveBytes(t, 16, stream.UnknownUpdates, nil))
	done := make(chan error)
	go func() {
		_, err := l.Read(make([]stream.Update, 10))
		done <- err
	}()
	l.Wake()
	if err := <-done; err != io.EOF {
		t.Fatalf("Read after Wake: %v, want io.EOF", err)
	}
	l.Close()
	if n, err := l.Read(make([]stream.Update, 10)); n != 0 || err != io.EOF {
		t.Fatalf("Read after Close: %d, %v", n, err)
	}
}

// FuzzLive: any bytes on standard input end the live stream cleanly
// (io.EOF or an error) without a panic, after no more updates than whole
// records followed the header, each within the header's vertex count.
func FuzzLive(f *testing.F) {
	f.Add(liveBytes(&testing.T{}, 16, stream.UnknownUpdates, someUpdates(20)))
	f.Add(liveBytes(&testing.T{}, 16, 3, someUpdates(3)))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		l := NewLive(LiveConfig{Producers: 1})
		defer l.Close()
		l.Add("stdin", io.NopCloser(bytes.NewReader(b)))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h, err := l.WaitHeader(ctx)
		if err != nil {
			return
		}
		got, _ := readAll(l)
		if max := (len(b) - stream.HeaderBytes) / stream.RecordBytes; len(got) > max {
			t.Fatalf("%d updates from %d bytes", len(got), len(b))
		}
		for _, u := range got {
			if u.Src >= h.Vertices || u.Dst >= h.Vertices || u.Src == u.Dst {
				t.Fatalf("update %+v, %d vertices", u, h.Vertices)
			}
		}
	})
}
