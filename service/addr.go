package service

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// LoopbackDefault returns addr (HOST:PORT) with an empty host made the
// loopback address 127.0.0.1, so that a listener given a port alone is
// not reachable from other machines; a bare port ("8080") counts as
// ":8080".
func LoopbackDefault(addr string) string {
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "" {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// Loopback reports whether a listener on addr (after LoopbackDefault) is
// reachable from this machine only: its host is "localhost" or a loopback
// IP address.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(LoopbackDefault(addr))
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ReadToken returns the token held in the file at path, without the
// spaces and newlines around it; "" for an empty path. An empty token is
// an error.
func ReadToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if t := strings.TrimSpace(string(b)); t != "" {
		return t, nil
	}
	return "", fmt.Errorf("service: %s holds no token", path)
}
