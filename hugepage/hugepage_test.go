package hugepage

import (
	"os"
	"runtime"
	"testing"
)

func TestAdvise(t *testing.T) {
	if Advise([]uint32(nil)) || Advise(make([]byte, MinBytes-1)) {
		t.Error("Advise accepted a slab below MinBytes")
	}
	s := make([]uint64, 4*MinBytes/8)
	ok := Advise(s)
	if runtime.GOOS == "linux" && !ok {
		t.Error("madvise(MADV_HUGEPAGE) failed on Linux for a fresh 32 MiB slab")
	}
	for i := range s { // the advice must not change the memory's contents
		s[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	for i := range s {
		if s[i] != uint64(i)*0x9e3779b97f4a7c15 {
			t.Fatalf("word %d changed", i)
		}
	}
}

func TestSetting(t *testing.T) {
	s := Setting()
	if runtime.GOOS != "linux" {
		if s != "unsupported" {
			t.Errorf("Setting() = %q off Linux, want unsupported", s)
		}
		return
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		if s != "unknown" {
			t.Errorf("Setting() = %q without the sysfs file, want unknown", s)
		}
		return
	}
	if s != "always" && s != "madvise" && s != "never" {
		t.Errorf("Setting() = %q, want always, madvise or never", s)
	}
}
