package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// table is one Markdown table of a results file: its header cells and
// its rows, cell text trimmed and stripped of ** emphasis.
type table struct {
	file   string
	header []string
	rows   [][]string
}

// col returns the index of the first header cell that starts with name,
// or an error naming the file.
func (t *table) col(name string) (int, error) {
	for i, h := range t.header {
		if strings.HasPrefix(h, name) {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%s: no column %q in %q", t.file, name, t.header)
}

// cols returns the indices of the columns names, in order.
func (t *table) cols(names ...string) ([]int, error) {
	idx := make([]int, len(names))
	for i, n := range names {
		var err error
		if idx[i], err = t.col(n); err != nil {
			return nil, err
		}
	}
	return idx, nil
}

// readTables returns the Markdown tables of path, in order.
func readTables(path string) ([]*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ts []*table
	var cur *table
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			cur = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i, c := range cells {
			cells[i] = strings.TrimSpace(strings.ReplaceAll(c, "**", ""))
		}
		switch {
		case cur == nil:
			cur = &table{file: path, header: cells}
			ts = append(ts, cur)
		case strings.Trim(strings.Join(cells, ""), "-: ") == "":
			// the separator line
		default:
			if len(cells) != len(cur.header) {
				return nil, fmt.Errorf("%s: a row of %d cells under a header of %d: %q", path, len(cells), len(cur.header), line)
			}
			cur.rows = append(cur.rows, cells)
		}
	}
	return ts, sc.Err()
}

// newest returns the last file, in name order (names end in a date),
// matching pattern in dir, or an error saying none does.
func newest(dir, pattern string) (string, error) {
	ms, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return "", err
	}
	if len(ms) == 0 {
		return "", fmt.Errorf("no table %s in %s", pattern, dir)
	}
	slices.Sort(ms)
	return ms[len(ms)-1], nil
}

// number reads a cell such as "33.44 M", "17,550,438", "130 MiB",
// "0.1810 / 0.2512" (the first figure) or "2.22×".
func number(cell string) (float64, error) {
	s, _, _ := strings.Cut(cell, "/")
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "×"))
	s = strings.ReplaceAll(s, ",", "")
	mult := 1.0
	for _, u := range []struct {
		suffix string
		m      float64
	}{{" GiB", 1 << 30}, {" MiB", 1 << 20}, {" KiB", 1 << 10}, {" G", 1e9}, {" M", 1e6}, {" k", 1e3}} {
		if t, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = t, u.m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", cell)
	}
	return v * mult, nil
}

// kronVertices returns 2^N for a stream named kronN.
func kronVertices(stream string) (float64, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(stream, "kron"))
	if err != nil || !strings.HasPrefix(stream, "kron") {
		return 0, false
	}
	return float64(uint64(1) << n), true
}
