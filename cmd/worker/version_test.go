package main

import (
	"strings"
	"testing"
)

func TestVersionAndLogFormat(t *testing.T) {
	code, stdout, stderr := runWorkerOut("--version")
	if code != 0 || !strings.HasPrefix(stdout, "worker sketchcc ") || !strings.Contains(stdout, " go1.") || stderr != "" {
		t.Errorf("worker --version: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, stderr := runWorker("--join", "127.0.0.1:1", "--log-format", "yaml"); code != 2 || !strings.Contains(stderr, `want text or json, got "yaml"`) {
		t.Errorf("worker --log-format yaml: exit %d, stderr %q", code, stderr)
	}
}
