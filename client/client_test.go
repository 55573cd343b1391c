package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDeadline: a server that does not answer in time gives an error that
// is context.DeadlineExceeded; one that answers 4xx an *APIError with its
// message; the token goes out as a Bearer header.
func TestDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/components":
			<-release
		case "/v1/status":
			if r.Header.Get("Authorization") != "Bearer tok" {
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"error":"missing or wrong token"}`))
				return
			}
			w.Write([]byte(`{"vertices":5,"updates":7}`))
		}
	}))
	defer srv.Close()
	defer close(release)
	c := New(srv.URL, "tok", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Components(ctx, false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Components past its deadline: %v, want context.DeadlineExceeded", err)
	}
	st, err := c.Status(context.Background())
	if err != nil || st.Vertices != 5 || st.Updates != 7 {
		t.Fatalf("Status: %+v, %v", st, err)
	}
	_, err = New(srv.URL, "", nil).Status(context.Background())
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 401 || ae.Message != "missing or wrong token" {
		t.Fatalf("Status without token: %v, want *APIError 401", err)
	}
}

// TestConnectedBatchMalformed: a binary answer of the wrong length or
// pair count is an error that says so, never a wrong answer.
func TestConnectedBatchMalformed(t *testing.T) {
	var answer []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != binaryType {
			t.Errorf("Content-Type %q, want %q", r.Header.Get("Content-Type"), binaryType)
		}
		w.Write(answer)
	}))
	defer srv.Close()
	c := New(srv.URL, "", nil)
	good := []byte{7, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0b101}
	for _, tc := range []struct {
		answer []byte
		says   string
	}{
		{good[:10], "shorter than the 16-byte head"},
		{good[:len(good)-1], "28 bytes, want 29"},
		{append(good[:8:8], append([]byte{2, 0, 0, 0}, good[12:]...)...), "answers 2 pairs, 3 asked"},
	} {
		answer = tc.answer
		if _, err := c.ConnectedBatch(context.Background(), [][2]uint32{{1, 2}, {3, 4}, {5, 6}}); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("answer % x: error %v, want one saying %q", tc.answer, err, tc.says)
		}
	}
	answer = good
	ans, err := c.ConnectedBatch(context.Background(), [][2]uint32{{1, 2}, {3, 4}, {5, 6}})
	if err != nil || ans.Position != 7 || len(ans.Producers) != 1 || ans.Producers[0] != (Producer{ID: 9, Applied: 7}) ||
		!slices.Equal(ans.Connected, []bool{true, false, true}) {
		t.Fatalf("ConnectedBatch = %+v, %v", ans, err)
	}
}
