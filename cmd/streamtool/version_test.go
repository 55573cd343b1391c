package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionAndLogFormat(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"cc", "--version"}} {
		code, stdout, stderr := streamtool(t, args...)
		if code != 0 || !strings.HasPrefix(stdout, "streamtool sketchcc ") || !strings.Contains(stdout, " go1.") || stderr != "" {
			t.Errorf("streamtool %q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	if code, _, stderr := streamtool(t, "cc", "--log-format", "xml", "x"); code != 2 || !strings.Contains(stderr, `want text or json`) {
		t.Errorf("streamtool cc --log-format xml: exit %d, stderr %q", code, stderr)
	}
	// With json, the error the command ends with is a JSON record too.
	code, _, stderr := streamtool(t, "validate", "--log-format", "json", filepath.Join(t.TempDir(), "missing.bin"))
	var rec struct{ Level, Msg, Err string }
	if err := json.Unmarshal([]byte(stderr), &rec); code != 1 || err != nil || rec.Level != "ERROR" ||
		rec.Msg != "streamtool: error" || !strings.Contains(rec.Err, "missing.bin") {
		t.Errorf("streamtool validate --log-format json, a missing file: exit %d, stderr %q (%v)", code, stderr, err)
	}
}
