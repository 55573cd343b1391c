// Command aws starts, watches and tears down a sketchcc fleet on EC2: one
// main node and N workers in a cluster placement group, driven through the
// AWS CLI.
//
// Usage:
//
//	go run ./scripts/aws cost     --workers 16 [--hours 0.5]
//	go run ./scripts/aws launch   --bucket B --stream FILE|s3://…|kron:17 --workers 16 [--spot] [--dry-run]
//	go run ./scripts/aws status   --run RUN [--dry-run]
//	go run ./scripts/aws fetch    --run RUN --bucket B [--wait 1h] [--dry-run]
//	go run ./scripts/aws teardown --run RUN [--bucket B] [--dry-run]
//
// It is a Go program that shells out to the aws command rather than a shell
// script so that its tests run under go test with nothing to install (the
// tests put a fake aws on PATH that records every call), its JSON is read
// with encoding/json instead of text parsing, and the cluster key never
// passes through a shell variable or a command line: it goes from
// crypto/rand into a 0600 file read by `aws ssm put-parameter
// --cli-input-json file://…`, deleted right after.
//
// Everything a launch creates carries the tag sketchcc-run=RUN; teardown
// finds it by that tag (and the IAM role and instance profile by name,
// after checking their tag) and deletes it. Teardown is idempotent.
//
// Every command takes --region (default: aws configure get region, else
// us-east-1), --dry-run (print each aws call, make none), --log-format and
// --version. Exit status: 0 success, 1 a failed call (the message names
// it), 2 usage error.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"sketchcc/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(cli.ExitCode("go run ./scripts/aws", err, os.Stderr)) // the name points --help at this tool, not at the AWS CLI
}

const topUsage = `Usage: go run ./scripts/aws COMMAND [flags]

Runs sketchcc on an EC2 fleet through the AWS CLI.

Commands:
  cost       print the on-demand cost estimate of a fleet
  launch     start a main node and N workers (asks for confirmation after the estimate)
  status     instances, workers connected and ingestion progress of a run
  fetch      copy the main node's --json result into results/aws-RUN-DATE.json
  teardown   delete everything tagged with the run id (safe to run twice)

Every command takes --dry-run (print each aws call, make none), --region,
--log-format and --version. Run 'go run ./scripts/aws COMMAND --help' for
its flags.
`

// common holds the flags every command takes.
type common struct {
	region    string
	dry       bool
	logLevel  slog.Level
	logFormat cli.LogFormat
	version   bool
}

// env is what a command gets: its flags, the aws caller and its streams.
type env struct {
	common
	aws    *awsCLI
	stdin  io.Reader
	stdout io.Writer
	log    *slog.Logger
}

type command struct {
	about string
	setup func(fs *pflag.FlagSet) func(ctx context.Context, e *env) error
}

var commands = map[string]command{
	"cost":     {"print the on-demand cost estimate of a fleet", setupCost},
	"launch":   {"start a main node and N workers", setupLaunch},
	"status":   {"instances, members and progress of a run", setupStatus},
	"fetch":    {"copy a run's result into results/", setupFetch},
	"teardown": {"delete everything tagged with the run id", setupTeardown},
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return cli.Usage(errors.New("no command"))
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, topUsage)
		return nil
	case "--version":
		return cli.PrintVersion(stdout, "aws")
	}
	name := args[0]
	c, ok := commands[name]
	if !ok {
		return cli.Usage(fmt.Errorf("unknown command %q", name))
	}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(cli.UsageOutput(args, stdout, stderr))
	runCmd := c.setup(fs)
	var co common
	fs.StringVar(&co.region, "region", "", "AWS region (default: aws configure get region, else us-east-1)")
	fs.BoolVar(&co.dry, "dry-run", false, "print each aws call it would make and make none")
	cli.LevelVar(fs, &co.logLevel, slog.LevelInfo)
	cli.LogFormatVar(fs, &co.logFormat)
	cli.VersionVar(fs, &co.version)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go run ./scripts/aws %s [flags]\n\n%s.\n\nFlags:\n", name, c.about)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return cli.Usage(err)
	}
	if co.version {
		return cli.PrintVersion(stdout, "aws")
	}
	if fs.NArg() > 0 {
		return cli.Usage(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if co.region == "" {
		co.region = defaultRegion(ctx, co.dry)
	}
	log := cli.NewLogger(stderr, co.logFormat, co.logLevel)
	e := &env{common: co, stdin: stdin, stdout: stdout, log: log,
		aws: &awsCLI{region: co.region, dry: co.dry, out: stdout, log: log}}
	return runCmd(ctx, e)
}

// defaultRegion is $AWS_REGION, $AWS_DEFAULT_REGION, the AWS CLI's
// configured region, or us-east-1. A dry run runs no aws command at all,
// so it does not read the CLI's configuration.
func defaultRegion(ctx context.Context, dry bool) string {
	if r := os.Getenv("AWS_REGION"); r != "" {
		return r
	}
	if r := os.Getenv("AWS_DEFAULT_REGION"); r != "" {
		return r
	}
	if dry {
		return "us-east-1"
	}
	out, err := exec.CommandContext(ctx, "aws", "configure", "get", "region").Output()
	if r := strings.TrimSpace(string(out)); err == nil && r != "" {
		return r
	}
	return "us-east-1"
}

// confirm asks question on stdout and reads y or yes from stdin.
func confirm(e *env, question string) bool {
	fmt.Fprintf(e.stdout, "%s [y/N] ", question)
	line, _ := bufio.NewReader(e.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
