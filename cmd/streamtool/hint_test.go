package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateTextHint: validate, given a text stream or an edge list,
// says that the file looks like text and names streamtool convert, as
// main-node does; an invalid binary stream gets no such hint.
func TestValidateTextHint(t *testing.T) {
	dir := t.TempDir()
	f := func(name, content string, hint bool) {
		t.Helper()
		p := filepath.Join(dir, name)
		requireNoError(t, os.WriteFile(p, []byte(content), 0o644))
		code, _, errOut := streamtool(t, "validate", p)
		got := strings.Contains(errOut, "looks like text") && strings.Contains(errOut, "streamtool convert")
		if code != 1 || got != hint {
			t.Errorf("validate %s: exit %d, stderr %q; want exit 1, a hint naming streamtool convert: %v", name, code, errOut, hint)
		}
	}
	f("typed.txt", "4 2\n0 0 1\n0 2 3\n", true)
	f("snap.txt", "# a SNAP edge list\n3466\t5233\n5233\t17\n", true)
	f("short.bin", "\x04\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x01", false)
}
