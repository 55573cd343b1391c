package sketchcc

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fakeGo stands in for go and gofmt while .ci/run runs: every call
// succeeds at once, except the weakened-hash run, which fails as the real
// one must and records the file its output went to.
const fakeGo = `#!/usr/bin/env bash
echo "$*" >>"$CI_FAKE_CALLS"
case "$*" in
*weakhash*)
	readlink /proc/$$/fd/1 >>"$CI_FAKE_WEAKHASH"
	echo '--- FAIL: TestStatisticalColumns (0.01s)'
	exit 1 ;;
esac
`

// TestCIRun runs .ci/run with go and gofmt replaced by fakeGo. CI must
// name each fuzz target before it runs it, and keep the weakened-hash
// output in a temporary directory of its own (under TMPDIR) that it
// removes, not in a fixed /tmp file that two runs on one machine share.
func TestCIRun(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd/1"); err != nil {
		t.Skip("needs /proc to see where a command's output goes")
	}
	bin, tmp, rec := t.TempDir(), t.TempDir(), t.TempDir()
	for _, name := range []string{"go", "gofmt"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(fakeGo), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	calls, weak := filepath.Join(rec, "calls"), filepath.Join(rec, "weakhash")
	cmd := exec.Command("./.ci/run")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TMPDIR="+tmp, "CI_FAKE_CALLS="+calls, "CI_FAKE_WEAKHASH="+weak)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf(".ci/run with a fake go: %v\n%s", err, out)
	}
	log, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	fuzzed := regexp.MustCompile(`-fuzz=\^(Fuzz\w+)\$ .* (\S+)$`)
	n := 0
	for _, call := range strings.Split(string(log), "\n") {
		m := fuzzed.FindStringSubmatch(call)
		if m == nil {
			continue
		}
		n++
		if want := "-- fuzz target " + m[1] + " in " + m[2]; !strings.Contains(string(out), want+"\n") {
			t.Errorf("CI ran %s of %s without a line %q", m[1], m[2], want)
		}
	}
	if n == 0 {
		t.Errorf("CI ran no fuzz target; calls:\n%s", log)
	}
	where, err := os.ReadFile(weak)
	if err != nil {
		t.Fatal(err)
	}
	if p := strings.TrimSpace(string(where)); !strings.HasPrefix(p, tmp+string(os.PathSeparator)) {
		t.Errorf("the weakened-hash output went to %s, not into a directory under TMPDIR %s", p, tmp)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("CI left %s in TMPDIR", left[0].Name())
	}
	if !strings.Contains(string(out), "weakhash: failing tests: 1\n") {
		t.Errorf("CI did not count the weakened hash's failures:\n%s", out)
	}
}
