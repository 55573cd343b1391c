package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
)

// awsCLI runs the aws command-line tool, or with dry set prints each call it
// would make and runs none. It is used by one goroutine at a time.
type awsCLI struct {
	region string
	dry    bool
	out    io.Writer // where dry-run calls are printed
	log    *slog.Logger
	calls  int
}

// callError is a failed aws call: the call as the user would type it, its
// exit status and what it printed on stderr.
type callError struct {
	call   string
	status int
	stderr string
}

func (e *callError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("%s: exit status %d: %s", e.call, e.status, msg)
}

// awsCode returns the AWS error code of a failed call ("NoSuchEntity" in
// "An error occurred (NoSuchEntity) when calling …"), or "".
func awsCode(err error) string {
	var ce *callError
	if !errors.As(err, &ce) {
		return ""
	}
	_, rest, ok := strings.Cut(ce.stderr, "An error occurred (")
	if !ok {
		return ""
	}
	code, _, _ := strings.Cut(rest, ")")
	return code
}

// run makes one call: aws SERVICE OP ARGS… --region R --output json. It
// returns stdout. A dry run prints the call and returns nil, nil.
func (c *awsCLI) run(ctx context.Context, args ...string) ([]byte, error) {
	full := append(append([]string{}, args...), "--region", c.region, "--output", "json")
	shown := "aws " + shellJoin(full)
	c.calls++
	if c.dry {
		fmt.Fprintln(c.out, shown)
		return nil, nil
	}
	c.log.Debug("aws call", "call", shown)
	cmd := exec.CommandContext(ctx, "aws", full...)
	// AWS CLI v2 pipes output through a pager by default.
	cmd.Env = append(os.Environ(), "AWS_PAGER=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, &callError{call: shown, status: ee.ExitCode(), stderr: stderr.String()}
		}
		return nil, fmt.Errorf("%s: %w (is the AWS CLI installed and on PATH?)", shown, err)
	}
	return stdout.Bytes(), nil
}

// runJSON makes the call and decodes its JSON output into v; a dry run
// leaves v alone.
func (c *awsCLI) runJSON(ctx context.Context, v any, args ...string) error {
	out, err := c.run(ctx, args...)
	if err != nil || c.dry {
		return err
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return nil
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("aws %s %s: cannot read its output: %w", args[0], args[1], err)
	}
	return nil
}

// shellJoin quotes args the way a POSIX shell reads them back.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// mustJSON encodes v for an aws argument; v is built here, so an error is
// a bug.
func mustJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("BUG: " + err.Error())
	}
	return strings.TrimSuffix(b.String(), "\n")
}
