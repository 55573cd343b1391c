package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f := func(path, want string) {
		t.Helper()
		err := CheckWritable("--out", path)
		if got := ""; err != nil {
			got = err.Error()
			if got != want {
				t.Errorf("CheckWritable(%q) = %q, want %q", path, got, want)
			}
		} else if want != "" {
			t.Errorf("CheckWritable(%q) = nil, want %q", path, want)
		}
	}
	f("", "")
	f(filepath.Join(dir, "labels.txt"), "")
	f(filepath.Join(dir, "no", "labels.txt"),
		"--out="+filepath.Join(dir, "no", "labels.txt")+": directory "+filepath.Join(dir, "no")+" does not exist")
	f(filepath.Join(notDir, "labels.txt"),
		"--out="+filepath.Join(notDir, "labels.txt")+": directory "+notDir+" does not exist")
}
