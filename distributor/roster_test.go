package distributor

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "TestRosterScripts: write the actions seen into the scripts")

// TestRosterScripts runs the scripts in testdata/roster through a roster:
// each unindented line is an input, the indented lines after it are the
// actions it must return, in order (rosterScriptUsage gives the inputs).
// No socket, no goroutine, no clock: a connection's end says how long it
// lasted. With -rewrite the scripts are written back with the actions
// seen, for review.
func TestRosterScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/roster/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got, diffs := runRosterScript(t, string(b))
			for _, d := range diffs {
				t.Errorf("%s:%s", file, d)
			}
			if *rewrite && got != string(b) {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

const rosterScriptUsage = `inputs:
  join NAME ADDR INC | leaving NAME INC | left NAME INC | failed NAME INC | remove NAME
  connected CONN | ended CONN ERR LIVED | due NAME TOKEN WAIT | close | abandon
ERR is one of: ` + "refused io timeout integrity auth params goodbye stopped removed replaced abandoned"

// rosterErrors are the errors a script's ended names, as the Pool's
// connections end with them.
var rosterErrors = map[string]error{
	"refused":   errors.New("dial tcp 10.0.0.1:7000: connect: connection refused"),
	"io":        fmt.Errorf("cannot read deltas from 10.0.0.1:7000: %w", io.ErrUnexpectedEOF),
	"timeout":   errors.New("the worker holds 3 batches and has sent nothing for 30s (answer timeout)"),
	"integrity": &ProtocolError{Worker: "w", Err: ErrIntegrity},
	"auth":      &ProtocolError{Worker: "w", Err: ErrAuth},
	"params":    &ProtocolError{Worker: "w", Err: ErrParams},
	"goodbye":   errWorkerLeft,
	"stopped":   errStopped,
	"removed":   fmt.Errorf("%w: the worker left the cluster", errRemoved),
	"replaced":  fmt.Errorf("%w: incarnation 2 replaced 1 (a restart)", errReplaced),
	"abandoned": errAbandoned,
}

// runRosterScript runs one script and returns it with the actions seen
// in place of those written, and the differences.
func runRosterScript(t *testing.T, script string) (string, []string) {
	r := newRoster(2 * time.Second)
	var out strings.Builder
	var diffs []string
	var want []string // the actions written after the current input
	var input string
	var inputLine int
	var got []string
	finish := func() {
		if input == "" {
			return
		}
		for _, g := range got {
			fmt.Fprintf(&out, "  %s\n", g)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			diffs = append(diffs, fmt.Sprintf("%d: %s\n  want:\n    %s\n  got:\n    %s", inputLine, input,
				strings.Join(want, "\n    "), strings.Join(got, "\n    ")))
		}
		input, want, got = "", nil, nil
	}
	sc := bufio.NewScanner(strings.NewReader(script))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "  "):
			want = append(want, strings.TrimSpace(line))
			continue
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#"):
			finish()
			fmt.Fprintln(&out, line)
			continue
		}
		finish()
		fmt.Fprintln(&out, line)
		input, inputLine = line, n
		acts, err := rosterInput(&r, strings.Fields(line))
		if err != nil {
			t.Fatalf("line %d: %q: %v\n%s", n, line, err, rosterScriptUsage)
		}
		for _, a := range acts {
			got = append(got, formatAction(a))
		}
	}
	finish()
	return out.String(), diffs
}

// rosterInput feeds r the input f (a script line's fields).
func rosterInput(r *roster, f []string) ([]action, error) {
	num := func(i int) uint64 {
		if i >= len(f) {
			return 0
		}
		n, _ := strconv.ParseUint(f[i], 10, 64)
		return n
	}
	dur := func(i int) (time.Duration, error) {
		if i >= len(f) {
			return 0, errors.New("missing duration")
		}
		return time.ParseDuration(f[i])
	}
	need := map[string]int{"join": 4, "leaving": 3, "left": 3, "failed": 3, "remove": 2, "connected": 2,
		"ended": 4, "due": 4, "close": 1, "abandon": 1}
	if want, ok := need[f[0]]; !ok || len(f) != want {
		return nil, fmt.Errorf("want %d fields for %q", want, f[0])
	}
	switch f[0] {
	case "join":
		return r.join(f[1], f[2], num(3)), nil
	case "leaving":
		return r.leaving(f[1], num(2)), nil
	case "left", "failed":
		return r.depart(f[1], num(2), f[0] == "failed"), nil
	case "remove":
		acts, _ := r.remove(f[1], 0, "removed by the operator")
		return acts, nil
	case "connected":
		return r.connected(connID(num(1))), nil
	case "ended":
		err, ok := rosterErrors[f[2]]
		if !ok {
			return nil, fmt.Errorf("unknown error %q", f[2])
		}
		lived, e := dur(3)
		if e != nil {
			return nil, e
		}
		return r.ended(connID(num(1)), err, lived), nil
	case "due":
		wait, e := dur(3)
		if e != nil {
			return nil, e
		}
		return r.due(f[1], num(2), wait), nil
	case "close":
		return sortedByConn(r.close("", nil)), nil
	default: // abandon
		return sortedByConn(r.close("main node interrupted", errAbandoned)), nil
	}
}

// sortedByConn orders close's actions (from a map) by connection.
func sortedByConn(acts []action) []action {
	for i := range acts {
		for j := i + 1; j < len(acts); j++ {
			if acts[j].conn < acts[i].conn {
				acts[i], acts[j] = acts[j], acts[i]
			}
		}
	}
	return acts
}

// formatAction writes a as a script's action line.
func formatAction(a action) string {
	s := a.kind.String() + " " + a.name
	switch a.kind {
	case actDial:
		s += fmt.Sprintf(" %s inc=%d conn=%d", a.addr, a.inc, a.conn)
		if a.wait > 0 {
			s += fmt.Sprintf(" after=%v", a.wait)
		}
	case actDrop:
		s += fmt.Sprintf(" conn=%d err=%q", a.conn, a.err)
	case actDismiss:
		s += fmt.Sprintf(" conn=%d reason=%q", a.conn, a.reason)
	case actStop:
		s += fmt.Sprintf(" conn=%d", a.conn)
	case actRedial:
		s += fmt.Sprintf(" after=%v token=%d", a.wait, a.token)
	case actJoined:
		s += fmt.Sprintf(" %s inc=%d", a.addr, a.inc)
	case actIgnored:
		s += fmt.Sprintf(" inc=%d: %s", a.inc, a.reason)
	case actLeft, actFailed:
		s += fmt.Sprintf(" inc=%d", a.inc)
	}
	return s
}
