package main

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// newest returns the newest table matching pattern in dir, or an error
// saying none does. Names end in their UTC date (NAME-YYYY-MM-DD.md); a
// second run on one day writes NAME-YYYY-MM-DD-COMMIT.md (dated_table in
// results/lib.sh), so on one day a name with a commit suffix is newer
// than the plain one, and of two such names the later commit (by its
// commit time in dir's git repository) is newer. A name with another
// suffix (a hand-named variant such as -quiet) ranks below its day's plain
// table.
func newest(dir, pattern string) (string, error) {
	ms, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return "", err
	}
	if len(ms) == 0 {
		return "", fmt.Errorf("no table %s in %s", pattern, dir)
	}
	type key struct {
		date string
		rank int   // 0 another suffix, 1 plain, 2 a commit suffix
		when int64 // the suffix commit's time, when rank is 2
		name string
	}
	keys := make([]key, len(ms))
	for i, m := range ms {
		k := key{name: m, rank: 1}
		if sm := datedName.FindStringSubmatch(filepath.Base(m)); sm != nil {
			k.date = sm[1]
			switch suffix := sm[2]; {
			case suffix == "":
			case commitHash.MatchString(suffix):
				k.rank, k.when = 2, commitTime(dir, suffix)
			default:
				k.rank = 0
			}
		}
		keys[i] = k
	}
	best := slices.MaxFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.date, b.date); c != 0 {
			return c
		}
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		if a.when != b.when {
			return cmp.Compare(a.when, b.when)
		}
		return strings.Compare(a.name, b.name)
	})
	return best.name, nil
}

var (
	datedName  = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2})(?:-(.+))?\.md$`)
	commitHash = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
)

// commitTime returns the commit time of rev in dir's git repository, in
// Unix seconds, or 0 when git cannot tell.
func commitTime(dir, rev string) int64 {
	out, err := exec.Command("git", "-C", dir, "log", "-1", "--format=%ct", rev, "--").Output()
	if err != nil {
		return 0
	}
	t, _ := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	return t
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
	scale, ok := strings.CutPrefix(stream, "kron")
	n, err := strconv.Atoi(scale)
	if err != nil || !ok {
		return 0, false
	}
	return float64(uint64(1) << n), true
}
