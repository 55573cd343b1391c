package main

import (
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
}
