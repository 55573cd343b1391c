package main

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEmptyGraph checks that a stream of 0 updates, binary or text, is
// answered as its header's isolated vertices, in-process and by the
// binary, and that a file with no header at all stays an error.
func TestEmptyGraph(t *testing.T) {
	bin := writeFile(t, "empty.bin", header(5, 0))
	txt := writeFile(t, "empty.txt", []byte("5 0\n"))
	for _, tc := range []struct {
		args []string
		warn string // "": no warning at all
	}{
		{[]string{"--stream", bin, "--json"}, ""},
		{[]string{"--stream", txt, "--format", "text", "--json"}, ""},
		{[]string{"--stream", bin, "--json", "--queries", "3"},
			`msg="--queries: the stream has no updates; one query answers for its isolated vertices" queries=3`},
	} {
		args := tc.args
		for _, r := range []result{runMain(t, args...), runBinary(t, args...)} {
			var js struct {
				Vertices, Components int
				Updates              uint64
			}
			if err := json.Unmarshal([]byte(r.stdout), &js); r.code != 0 || err != nil {
				t.Fatalf("%q: %v", args, r)
			}
			if js.Vertices != 5 || js.Updates != 0 || js.Components != 5 {
				t.Errorf("%q: %+v, want 5 vertices, 0 updates, 5 components", args, js)
			}
			if tc.warn == "" && strings.Contains(r.stderr, "level=WARN") || !strings.Contains(r.stderr, tc.warn) {
				t.Errorf("%q: stderr %q, want warning %q", args, r.stderr, tc.warn)
			}
		}
	}
	for _, args := range [][]string{
		{"--stream", writeFile(t, "none.bin", nil)},
		{"--stream", writeFile(t, "none.txt", nil), "--format", "text"},
	} {
		for _, r := range []result{runMain(t, args...), runBinary(t, args...)} {
			if r.code != 1 || !strings.Contains(r.stderr, "no header") || r.stdout != "" {
				t.Errorf("%q: want exit 1 and \"no header\", got %v", args, r)
			}
		}
	}
}

// TestQueryAtRepeated checks that repeated --query-at flags accumulate
// (each answer compared with a union-find over the stream's prefix) and
// that a repeated position is queried once, with a warning.
func TestQueryAtRepeated(t *testing.T) {
	type out struct {
		Queries []struct {
			AfterUpdates uint64 `json:"after_updates"`
			Components   int    `json:"components"`
		} `json:"queries"`
	}
	for _, tc := range []struct {
		args []string
		at   []uint64
		warn string
	}{
		// Was: queried only at 2556 (and the end).
		{[]string{"--query-at", "852,1704", "--query-at", "2556"}, []uint64{852, 1704, 2556, 8528}, ""},
		// Was: merged without a word.
		{[]string{"--query-at", "852,852"}, []uint64{852, 8528},
			`msg="--query-at: position given more than once; querying once" position=852`},
		{[]string{"--query-at", "852", "--query-at", "852, 1704"}, []uint64{852, 1704, 8528},
			`msg="--query-at: position given more than once; querying once" position=852`},
	} {
		args := append([]string{"--stream", multiples, "--json"}, tc.args...)
		for _, r := range []result{runMain(t, args...), runBinary(t, args...)} {
			var js out
			if err := json.Unmarshal([]byte(r.stdout), &js); r.code != 0 || err != nil {
				t.Fatalf("%q: %v", tc.args, r)
			}
			var at []uint64
			for _, q := range js.Queries {
				at = append(at, q.AfterUpdates)
				if want := prefixDSU(t, multiples, q.AfterUpdates).Sets(); q.Components != want {
					t.Errorf("%q: %d components after %d updates, union-find says %d",
						tc.args, q.Components, q.AfterUpdates, want)
				}
			}
			if !slices.Equal(at, tc.at) {
				t.Errorf("%q: queried after %v, want %v", tc.args, at, tc.at)
			}
			if tc.warn != "" && !strings.Contains(r.stderr, tc.warn) {
				t.Errorf("%q: stderr %q does not warn %q", tc.args, r.stderr, tc.warn)
			}
			if tc.warn == "" && strings.Contains(r.stderr, "more than once") {
				t.Errorf("%q: a warning without repeats: %q", tc.args, r.stderr)
			}
		}
	}
}

// TestProgressRate runs the binary with --progress always on a stream long
// enough for the bar to draw: no rate it shows may be absurd (the bar's own
// rate showed 21–40 G updates/s in its first samples; ingestion runs at
// tens of millions per second).
func TestProgressRate(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 27 MB stream") // as TestInterrupt; scripts/test.sh runs it
	}
	path := writeLargeStream(t, 10_000, 3_000_000)
	r := runBinary(t, "--stream", path, "--progress", "always", "--workers", "1")
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	for _, m := range regexp.MustCompile(`([0-9.e+]+) (M )?updates/s`).FindAllStringSubmatch(r.stderr, -1) {
		x, err := strconv.ParseFloat(m[1], 64)
		if m[2] != "" {
			x *= 1e6
		}
		if err != nil || x > 1e9 {
			t.Errorf("progress shows %q", m[0])
		}
	}
}

// TestKeyFileMessage runs the binary with a key file holding base64 of 20
// bytes: the message gives the key's length, not the text's.
func TestKeyFileMessage(t *testing.T) {
	key := writeFile(t, "key20", []byte(base64.StdEncoding.EncodeToString(make([]byte, 20))+"\n"))
	r := runBinary(t, "--stream", multiples, "--listen", "127.0.0.1:0", "--cluster-key-file", key)
	if r.code != 1 || !strings.Contains(r.stderr, key+": distributor: cluster key is base64 of 20 bytes (28 characters)") ||
		r.stdout != "" {
		t.Errorf("want exit 1 and the decoded length, got %v", r)
	}
}

// TestMemoryRefusalNamesFlag: the memory verdict (ingest's MemoryPlan.Fit)
// names the flag to lower, not the library's Config field.
func TestMemoryRefusalNamesFlag(t *testing.T) {
	path := writeFile(t, "big.bin", append(header(1<<30, 1), 0, 1, 0, 0, 0, 2, 0, 0, 0))
	for _, k := range []string{"1", "3"} { // --k-connectivity's K sets of sketches, counted before allocating
		r := runMain(t, "--stream", path, "--k-connectivity", k)
		if r.code != 1 || !strings.Contains(r.stderr, path+" declares 1073741824 vertices: their sketches ("+k+" set(s)) are") ||
			!strings.Contains(r.stderr, "; lower --sketch-factor, or run on a machine with more memory") ||
			strings.Contains(r.stderr, "Config.") {
			t.Errorf("want exit 1 and --sketch-factor named, got %v", r)
		}
	}
}
