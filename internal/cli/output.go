package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"

	"sketchcc/stream"
)

// HumanCount writes x with a k, M or G suffix and two decimals ("2.18 M"),
// or as a whole number under 1,000.
func HumanCount(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.2f G", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.2f M", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.2f k", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// WriteComponents writes a query's answer to the files a command was given
// (an empty path: none), each name followed by suffix: "vertex label"
// lines, one per vertex, to labelsPath, and "u v" lines, one per forest
// edge, to forestPath.
func WriteComponents(labelsPath, forestPath, suffix string, labels []uint32, forest []stream.Edge) error {
	if labelsPath != "" {
		err := writeLines(labelsPath+suffix, len(labels), func(b []byte, i int) []byte {
			b = strconv.AppendUint(b, uint64(i), 10)
			b = append(b, ' ')
			return strconv.AppendUint(b, uint64(labels[i]), 10)
		})
		if err != nil {
			return err
		}
	}
	if forestPath != "" {
		return writeLines(forestPath+suffix, len(forest), func(b []byte, i int) []byte {
			b = strconv.AppendUint(b, uint64(forest[i].Src), 10)
			b = append(b, ' ')
			return strconv.AppendUint(b, uint64(forest[i].Dst), 10)
		})
	}
	return nil
}

// writeLines writes n lines to a new file at path, line i made by
// line(b[:0], i) without its newline.
func writeLines(path string, n int, line func([]byte, int) []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var b []byte
	for i := range n {
		b = append(line(b[:0], i), '\n')
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return f.Close()
}

// OpenStream opens the stream at path (stream.OpenSource; text when format
// is "text"); a file that is plainly not in that format gets a hint that
// names the flag or tool to use.
func OpenStream(path, format string) (stream.Source, func(), error) {
	src, closeSrc, err := stream.OpenSource(path, format == "text")
	if err == nil {
		return src, closeSrc, nil
	}
	switch looks := stream.Sniff(path); {
	case looks == stream.LooksGzip:
		err = fmt.Errorf("%w; the file is gzip-compressed: decompress it (gunzip) for a stream, or give an edge list to streamtool convert, which reads gzip", err)
	case looks == stream.LooksText && format == "binary":
		err = fmt.Errorf("%w; the file looks like text: use --format text, or streamtool convert for an edge list", err)
	case looks == stream.LooksBinary && format == "text":
		err = fmt.Errorf("%w; the file is not text: drop --format text for a binary stream", err)
	}
	return nil, nil, err
}

// TextHint adds to err, when it is a *stream.FormatError of the text
// stream at path (format "text", a file that looks like text), that an
// edge list with no stream header (SNAP and the like) must go through
// streamtool convert first. Any other err is returned as it is.
func TextHint(err error, path, format string) error {
	var fe *stream.FormatError
	if format != "text" || !errors.As(err, &fe) || fe.Line == 0 || stream.Sniff(path) != stream.LooksText {
		return err
	}
	return fmt.Errorf("%w; an edge list with no stream header (SNAP and the like) must be converted first: streamtool convert --from snap %s -o OUT.bin", err, path)
}
