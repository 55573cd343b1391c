package cli

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/pflag"
)

// ErrVersionPrinted is returned by a command's flag parsing after it
// printed --version: exit status 0, nothing more printed.
var ErrVersionPrinted = errors.New("version printed")

// VersionVar defines --version on fs.
func VersionVar(fs *pflag.FlagSet, v *bool) {
	fs.BoolVar(v, "version", false, "print the module version, commit and Go version, then exit")
}

// PrintVersion writes one line naming the command, the module version, the
// commit (with its time, and "+dirty" for uncommitted changes) and the Go
// version, read from the binary's build information, and returns
// ErrVersionPrinted. A binary built with -buildvcs=false says "commit
// unknown".
func PrintVersion(w io.Writer, name string) error {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	fmt.Fprintln(w, VersionLine(name, bi))
	return ErrVersionPrinted
}

// VersionLine formats bi as PrintVersion does: "main-node sketchcc
// (devel) commit 0123abc… (2026-12-01T08:00:00Z, +dirty) go1.26.0".
func VersionLine(name string, bi *debug.BuildInfo) string {
	version := bi.Main.Version
	if version == "" {
		version = "(unknown)"
	}
	path := bi.Main.Path
	if path == "" {
		path = "sketchcc"
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	commit := "commit unknown (built with -buildvcs=false or outside a git checkout)"
	if rev != "" {
		var notes []string
		if at != "" {
			notes = append(notes, at)
		}
		if dirty {
			notes = append(notes, "+dirty")
		}
		commit = "commit " + rev
		if len(notes) > 0 {
			commit += " (" + strings.Join(notes, ", ") + ")"
		}
	}
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = "go version unknown"
	}
	return fmt.Sprintf("%s %s %s %s %s", name, path, version, commit, goVersion)
}
