// Package cli holds what the sketchcc commands share about ending a run:
// which errors are usage errors, which exit status each error gets, and
// the process's peak memory.
package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// UsageError marks a bad command line: exit status 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usage wraps err as a UsageError.
func Usage(err error) error { return UsageError{err} }

// Count returns n and noun, with an s unless n is 1: "1 reader",
// "2 readers".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// OneOf returns nil when v is one of want, else an error naming flag (as
// the command spells it), v and the values it takes.
func OneOf(flag, v string, want ...string) error {
	if slices.Contains(want, v) {
		return nil
	}
	return fmt.Errorf("%s=%q, want %s or %s", flag, v, strings.Join(want[:len(want)-1], ", "), want[len(want)-1])
}

// ExitCode reports err on stderr, prefixed with the command's name, and
// returns the exit status: 0 for nil, --help or --version, 2 for a UsageError (with a
// pointer to --help), 1 for anything else. An error marked by InFormat is
// written as a JSON log record.
func ExitCode(name string, err error, stderr io.Writer) int {
	switch {
	case err == nil || errors.Is(err, pflag.ErrHelp) || errors.Is(err, ErrVersionPrinted):
		return 0
	case errors.As(err, new(UsageError)):
		fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for usage.\n", name, err, name)
		return 2
	case errors.As(err, new(jsonError)):
		slog.New(slog.NewJSONHandler(stderr, nil)).Error(name+": error", "err", err.Error())
		return 1
	default:
		fmt.Fprintf(stderr, "%s: error: %v\n", name, err)
		return 1
	}
}

// jsonError is an error that ExitCode reports as a JSON log record.
type jsonError struct{ error }

func (e jsonError) Unwrap() error { return e.error }

// InFormat marks err, the error a command's run ends with, to be reported
// by ExitCode in log format f: with LogJSON as one JSON object (level
// ERROR, msg "NAME: error", err), so that stderr stays all JSON lines for a
// log collector; otherwise, and for nil, err is returned as it is.
func InFormat(err error, f LogFormat) error {
	if err == nil || f != LogJSON {
		return err
	}
	return jsonError{err}
}

// UsageOutput returns where a command prints its usage for args: stdout
// when the user asked for it (-h or --help before any "--"), so that
// `cmd --help | less` works, and stderr when usage accompanies an error.
func UsageOutput(args []string, stdout, stderr io.Writer) io.Writer {
	for _, a := range args {
		switch a {
		case "--":
			return stderr
		case "-h", "--help", "-help":
			return stdout
		}
	}
	return stderr
}

// levelValue is a log level as a pflag.Value: "debug", "info", "warn" or
// "error" (slog.Level's text forms), checked when the flag is parsed.
type levelValue struct{ l *slog.Level }

func (v levelValue) String() string { return strings.ToLower(v.l.String()) }
func (v levelValue) Set(s string) error {
	if err := v.l.UnmarshalText([]byte(s)); err != nil {
		return errors.New("want debug, info, warn or error")
	}
	return nil
}
func (v levelValue) Type() string { return "string" }

// LevelVar defines a --log-level flag on fs that parses into l, with the
// default def.
func LevelVar(fs *pflag.FlagSet, l *slog.Level, def slog.Level) {
	*l = def
	fs.Var(levelValue{l}, "log-level", "log level on stderr: debug, info, warn, error")
}

// PeakRSS returns the process's peak resident set in bytes (0 if unknown).
func PeakRSS() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss) * 1024 // Linux reports KiB
}

// FieldErrors returns the problems of err (one error, or several joined
// by errors.Join), each of a Config field in flags (a field's Go name to
// its flag, "--workers") spelled "--workers=0, want [1, 4096]"; the field
// errors of packages ingest and distributor say which field through
// their Problem method. Others are returned unchanged.
func FieldErrors(err error, flags map[string]string) []error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = slices.Clone(j.Unwrap())
	} else if err != nil {
		errs = []error{err}
	}
	for i, err := range errs {
		var fe interface {
			error
			Problem() (field string, value any, want string)
		}
		if errors.As(err, &fe) {
			if field, value, want := fe.Problem(); flags[field] != "" {
				errs[i] = fmt.Errorf("%s=%v, want %s", flags[field], value, want)
			}
		}
	}
	return errs
}
