package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/spf13/pflag"

	"sketchcc/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

func usagef(format string, args ...any) error { return cli.Usage(fmt.Errorf(format, args...)) }

func exitCode(err error, stderr io.Writer) int {
	if errors.Is(err, errReported) {
		return 1
	}
	var cu *commandUsage
	if errors.As(err, &cu) {
		fmt.Fprintf(stderr, "streamtool: %v\nRun 'streamtool %s --help' for usage.\n", cu.err, cu.cmd)
		return 2
	}
	return cli.ExitCode("streamtool", err, stderr)
}

// commandUsage is a usage error of one command: the pointer to --help
// names the command.
type commandUsage struct {
	cmd string
	err error
}

func (e *commandUsage) Error() string { return e.err.Error() }
func (e *commandUsage) Unwrap() error { return e.err }

// errReported is returned by a command that has already printed its
// failure (validate's JSON verdict): exit status 1, nothing more printed.
var errReported = errors.New("failure already reported")

const topUsage = `Usage: streamtool COMMAND [flags] [args]

Builds, converts and checks edge-update streams (binary format: 12-byte
header, 9-byte records; or packed, detected from its header; see package
stream).

Commands:
  gen kron       Kronecker stream with deletions (--scale N --seed S -o OUT)
  gen erdos      Erdős–Rényi stream with deletions (--vertices N --density P -o OUT)
  convert        public edge list -> binary stream of inserts (--from FORMAT IN -o OUT)
  snapshots      snapshots of one graph -> one stream of their differences
  temporal       timestamped events -> stream with expiring edges (--window W)
  validate       check that a binary stream is well formed
  pack           binary stream -> packed stream, about half the bytes (IN -o OUT)
  unpack         packed stream -> binary stream (IN -o OUT)
  cc             exact connected components of a stream's final graph
  send           send a stream to a main node's --updates-listen (ADDR STREAM)
  query          ask a main node's query API (ADDR components|connected U V|forest|status|shutdown)

Results are JSON on stdout; logs go to stderr (--log-format text|json).
'streamtool --version' prints the module version, commit and Go version. Exit status: 0 success,
1 runtime or input error or SIGINT/SIGTERM (partial output is removed),
2 usage error. Run 'streamtool COMMAND --help' for a command's flags.
`

// command is one subcommand. setup registers its flags into a fresh
// configuration and returns the function that runs it once the flags are
// parsed.
type command struct {
	usage string // first line: "streamtool convert --from FORMAT IN -o OUT"
	about string // what it does, a few lines
	setup func(fs *pflag.FlagSet) func(ctx context.Context, e *env, fs *pflag.FlagSet) error
}

var commands = map[string]*command{
	"gen kron":  genKronCommand,
	"gen erdos": genErdosCommand,
	"convert":   convertCommand,
	"snapshots": snapshotsCommand,
	"temporal":  temporalCommand,
	"validate":  validateCommand,
	"cc":        ccCommand,
	"pack":      packCommand,
	"unpack":    unpackCommand,
	"query":     queryCommand,
	"send":      sendCommand,
}

// env is what a command needs from main.
type env struct {
	stdout, stderr io.Writer
	log            *slog.Logger
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return usagef("no command")
	}
	name := args[0]
	switch name {
	case "--version", "version":
		return cli.PrintVersion(stdout, "streamtool")
	case "-h", "--help", "help":
		fmt.Fprint(stdout, topUsage)
		return nil
	case "gen":
		if len(args) < 2 || args[1] == "-h" || args[1] == "--help" {
			fmt.Fprint(stdout, "Usage: streamtool gen kron|erdos [flags]\n\nRun 'streamtool gen kron --help' or 'streamtool gen erdos --help'.\n")
			if len(args) < 2 {
				return usagef("gen: missing model (kron or erdos)")
			}
			return nil
		}
		name, args = "gen "+args[1], args[1:]
	}
	c, ok := commands[name]
	if !ok {
		return usagef("unknown command %q", name)
	}
	defer func() {
		if err != nil && errors.As(err, new(cli.UsageError)) {
			err = &commandUsage{cmd: name, err: err}
		}
	}()
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	runCommand := c.setup(fs)
	var lvl slog.Level
	var logFormat cli.LogFormat
	var version bool
	cli.LevelVar(fs, &lvl, slog.LevelInfo)
	cli.LogFormatVar(fs, &logFormat)
	cli.VersionVar(fs, &version)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: %s\n\n%s\nFlags:\n", c.usage, c.about)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return cli.Usage(err)
	}
	if version {
		return cli.PrintVersion(stdout, "streamtool")
	}
	e := &env{stdout: stdout, stderr: stderr, log: cli.NewLogger(stderr, logFormat, lvl)}
	return cli.InFormat(interrupted(ctx, name, runCommand(ctx, e, fs)), logFormat)
}

// interrupted says that command name was interrupted when err ended it
// after ctx was done (SIGINT or SIGTERM): its outputs, written under
// temporary names, have been removed.
func interrupted(ctx context.Context, name string, err error) error {
	if err == nil || ctx.Err() == nil || errors.Is(err, errReported) {
		return err
	}
	return fmt.Errorf("%s interrupted (%v), no output written: %w", name, context.Cause(ctx), err)
}

// printJSON writes v as indented JSON to the command's stdout.
func (e *env) printJSON(v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// outputs creates files under temporary names next to their final paths
// and renames them into place only when every one is complete, so that a
// failed command leaves no output behind.
type outputs struct {
	files []*os.File
	paths []string
}

// create opens a temporary file in path's directory; commit renames it to
// path. Writes to the returned writer fail with ctx.Err() once ctx is done,
// so that a command stops writing at a signal.
func (o *outputs) create(ctx context.Context, path string) (io.Writer, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		// The error names the temporary file; the user gave path.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot create output %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("cannot create output: %w", err)
	}
	o.files = append(o.files, f)
	o.paths = append(o.paths, path)
	return writerFunc(func(p []byte) (int, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		return f.Write(p)
	}), nil
}

// writerFunc is an io.Writer made of its Write.
type writerFunc func(p []byte) (int, error)

func (w writerFunc) Write(p []byte) (int, error) { return w(p) }

// commit closes every file and renames it to its final path.
func (o *outputs) commit() error {
	for i, f := range o.files {
		if err := f.Close(); err != nil {
			o.abort()
			return fmt.Errorf("cannot write %s: %w", o.paths[i], err)
		}
	}
	for i, f := range o.files {
		if err := os.Rename(f.Name(), o.paths[i]); err != nil {
			o.abort()
			return fmt.Errorf("cannot write %s: %w", o.paths[i], err)
		}
	}
	o.files, o.paths = nil, nil
	return nil
}

// commitWithMap writes the id mapping to out+".map" with write, unless
// noMap, then commits every output. It returns the map's path, or "".
func (o *outputs) commitWithMap(ctx context.Context, out string, noMap bool, write func(io.Writer) error) (string, error) {
	var mp string
	if !noMap {
		mp = out + ".map"
		mw, err := o.create(ctx, mp)
		if err != nil {
			return "", err
		}
		if err := write(mw); err != nil {
			return "", fmt.Errorf("cannot write %s: %w", mp, err)
		}
	}
	return mp, o.commit()
}

// abort closes and removes every file not yet committed. It is safe to
// call after commit.
func (o *outputs) abort() {
	for _, f := range o.files {
		f.Close()
		os.Remove(f.Name())
	}
	o.files, o.paths = nil, nil
}

// oneArg returns the single positional argument, or a usage error.
func oneArg(fs *pflag.FlagSet, what string) (string, error) {
	switch fs.NArg() {
	case 1:
		return fs.Arg(0), nil
	case 0:
		return "", usagef("missing %s", what)
	}
	return "", usagef("want one %s, got %q", what, fs.Args())
}

// defaultWorkers is the default of every --workers flag.
func defaultWorkers() int { return runtime.GOMAXPROCS(0) }
