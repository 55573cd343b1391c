// Package sketchcc holds the repository's lint test: checks over every .go
// file of the module that keep its contracts true (pebble's
// internal/lint/lint_test.go in spirit, with the standard library's
// go/parser, go/ast and go/types). The checks are in lintcheck_test.go,
// the loader in lintload_test.go.
package sketchcc

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// allowFile excuses findings, one a line: `check path identifier  #
// reason`. Entries in code that others are rewriting say whose they are;
// the owner deletes an entry with its fix. An entry that matches nothing
// fails the test, so the list only shrinks.
const allowFile = "testdata/lint/allow.txt"

// TestLint runs every check over the module. Each check is a subtest that
// names each finding by file:line; the allow-list subtest fails on
// entries that no longer match a finding.
func TestLint(t *testing.T) {
	m, err := loadModule(".")
	if err != nil {
		t.Fatal(err)
	}
	allow, err := readAllow(allowFile)
	if err != nil {
		t.Fatal(err)
	}
	findings := lint(m)
	matched := make([]bool, len(allow))
	for _, check := range allChecks {
		t.Run(check, func(t *testing.T) {
			for _, f := range findings {
				if f.check != check {
					continue
				}
				i := slices.IndexFunc(allow, func(a allowEntry) bool {
					return a.check == f.check && a.path == f.pos.Filename && a.ident == f.ident
				})
				if i >= 0 {
					matched[i] = true
					continue
				}
				t.Errorf("%v\n\t(to excuse it, add to %s: %s %s %s  # reason)", f, allowFile, f.check, f.pos.Filename, f.ident)
			}
		})
	}
	t.Run("allow-list", func(t *testing.T) {
		for i, a := range allow {
			if !slices.Contains(allChecks, a.check) {
				t.Errorf("%s:%d: no check named %q (checks: %s)", allowFile, a.line, a.check, strings.Join(allChecks, ", "))
			} else if !matched[i] {
				t.Errorf("%s:%d: %s %s %s matches no finding any more: delete the entry", allowFile, a.line, a.check, a.path, a.ident)
			}
		}
	})
}

// TestLintBites runs the checks over testdata/lint/bad, a small module
// with one deliberate fault for each check next to near misses that must
// not be reported, and compares the findings with the list below.
func TestLintBites(t *testing.T) {
	m, err := loadModule("testdata/lint/bad")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"doc lib/lib.go Frob.Twiddle",
		"doc lib/lib.go lib.Gone",
		"doc lib/lib.go WaitWorkers",
		"doc lib/lib.go time.Sleeep",
		"doc lib/lib.go Twelfth",
		"unused lib/lib.go Unused",
		"unused lib/lib.go Frob.Unused",
		"unused lib/lib.go Self",
		"flag lib/lib.go --batch-updates",
		"sleep lib/lib_test.go TestSleeps",
		"file-lines lib/long.go -",
		"func-lines lib/long.go long",
		"struct-fields lib/lib.go Wide",
		"struct-fields lib/lib.go Frob.mu",
	}
	var got []string
	for _, f := range lint(m) {
		got = append(got, fmt.Sprintf("%s %s %s", f.check, f.pos.Filename, f.ident))
		t.Log(f)
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("not reported: %s", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("reported, but not a fault: %s", g)
		}
	}
	for _, check := range allChecks {
		if !slices.ContainsFunc(want, func(w string) bool { return strings.HasPrefix(w, check+" ") }) {
			t.Errorf("testdata/lint/bad has no fault for check %s", check)
		}
	}
}
