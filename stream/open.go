package stream

import (
	"fmt"
	"io"
	"os"
)

// OpenSource opens the stream file at path as a Source: a binary stream
// (Open) as a *Cursor at record 0, or, when text is set, a *TextReader of
// the typed or untyped text format (NewTextReaderAuto). The returned func
// closes the file. It returns the errors of Open and of
// NewTextReaderAuto; Sniff tells what a file it refused looks like.
func OpenSource(path string, text bool) (Source, func(), error) {
	if !text {
		f, err := Open(path)
		if err != nil {
			return nil, nil, err
		}
		return f.Cursor(), func() { f.Close() }, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open stream: %w", err)
	}
	t, err := NewTextReaderAuto(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return t, func() { f.Close() }, nil
}

// Looks is what the start of a file looks like (Sniff).
type Looks int

const (
	// LooksEmpty is a file of no byte, or one that cannot be read.
	LooksEmpty Looks = iota
	// LooksGzip starts with gzip's magic number.
	LooksGzip
	// LooksText holds printable ASCII, tabs and line ends only.
	LooksText
	// LooksBinary is anything else.
	LooksBinary
)

// sniffBytes is how much of a file Sniff reads.
const sniffBytes = 64

// Sniff returns what the first 64 bytes of the file at path look like,
// so that a caller can say why a file is not the stream it expected.
func Sniff(path string) Looks {
	f, err := os.Open(path)
	if err != nil {
		return LooksEmpty
	}
	defer f.Close()
	b := make([]byte, sniffBytes)
	n, _ := io.ReadFull(f, b)
	b = b[:n]
	switch {
	case n == 0:
		return LooksEmpty
	case n >= 2 && b[0] == 0x1f && b[1] == 0x8b:
		return LooksGzip
	}
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && c != '\n' && c != '\r' && c != '\t' {
			return LooksBinary
		}
	}
	return LooksText
}
