package stream

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestSniff(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		data []byte
		want Looks
	}{
		{nil, LooksEmpty},
		{[]byte{0x1f, 0x8b, 8, 0}, LooksGzip},
		{[]byte("3 2\r\n0 1\n\t1 2\n"), LooksText},
		{AppendHeader(nil, Header{Vertices: 4, Updates: 1}), LooksBinary},
		// Only the first 64 bytes count.
		{append([]byte("0 1\n0 1\n0 1\n0 1\n0 1\n0 1\n0 1\n0 1\n0 1\n0 1\n0 1\n0 1\n0 1\n0 1\n0 1\n0 1\n"), 0), LooksText},
	} {
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := Sniff(path); got != tc.want {
			t.Errorf("Sniff(% x) = %d, want %d", tc.data, got, tc.want)
		}
	}
	if got := Sniff(filepath.Join(dir, "missing")); got != LooksEmpty {
		t.Errorf("a missing file looks %d", got)
	}
}

// TestOpenSource: a binary file opens as a Cursor at record 0, a text
// file as a TextReader, and a file in the other format fails.
func TestOpenSource(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "s.bin")
	data := append(AppendHeader(nil, Header{Vertices: 4, Updates: 1}), 0, 1, 0, 0, 0, 2, 0, 0, 0)
	txt := filepath.Join(dir, "s.txt")
	for path, b := range map[string][]byte{bin: data, txt: []byte("4 1\n1 2\n")} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path string
		text bool
	}{{bin, false}, {txt, true}} {
		src, closeSrc, err := OpenSource(tc.path, tc.text)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if _, ok := src.(*Cursor); ok == tc.text {
			t.Errorf("%s: source %T", tc.path, src)
		}
		u := make([]Update, 2)
		n, err := src.Read(u)
		if n == 1 && err == nil {
			n, err = src.Read(u[1:])
		}
		if n != 0 || !errors.Is(err, io.EOF) || u[0].Edge != (Edge{1, 2}) || src.Header() != (Header{Vertices: 4, Updates: 1}) {
			t.Errorf("%s: read %v, %d, %v", tc.path, u[0], n, err)
		}
		closeSrc()
	}
	if _, _, err := OpenSource(txt, false); err == nil {
		t.Error("a text file opened as binary")
	}
	if _, _, err := OpenSource(bin, true); err == nil {
		t.Error("a binary file opened as text")
	}
	if _, _, err := OpenSource(filepath.Join(dir, "missing"), true); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
