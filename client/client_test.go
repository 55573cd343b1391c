package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
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
