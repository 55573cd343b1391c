package cli

import (
	"strings"
	"testing"
)

func TestParseBytes_Success(t *testing.T) {
	f := func(s string, want int64) {
		t.Helper()
		got, err := parseBytes(s)
		if err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	f("1000", 1000)
	f("80M", 80<<20)
	f("80MiB", 80<<20)
	f("2g", 2<<30)
	f("3 KB", 3<<10)
	f("1T", 1<<40)
	if b, err := parseBytes("auto"); err != nil || b <= 0 {
		t.Errorf("parseBytes(auto) = %d, %v; want the cgroup's limit or the memory available", b, err)
	}
}

func TestParseBytes_Failure(t *testing.T) {
	f := func(s string) {
		t.Helper()
		if b, err := parseBytes(s); err == nil || !strings.Contains(err.Error(), "--memory-limit") {
			t.Errorf("parseBytes(%q) = %d, %v; want an error naming --memory-limit", s, b, err)
		}
	}
	f("")
	f("M")
	f("0")
	f("-5M")
	f("lots")
	f("1.5G")
	f("9999999T")
}
