package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sketchcc/internal/testwait"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterrupt_Cancelled runs every command that reads or writes files
// with its context already done, as after SIGINT or SIGTERM: each must
// fail with exit status 1, say it was interrupted and leave no output.
// Pack and unpack are held to it too. Was: convert, snapshots, temporal,
// validate and cc ran to the end and exited 0; gen said only "context
// canceled".
func TestInterrupt_Cancelled(t *testing.T) {
	dir := t.TempDir()
	snap := writeFile(t, dir, "g.txt", "1 2\n2 3\n")
	lg := writeFile(t, dir, "g.lg", "3,2,u,g\n1,2\n2,3\n")
	ev := writeFile(t, dir, "ev.csv", "1,2,100\n2,3,150\n")
	var r struct {
		Output string `json:"output"`
	}
	mustRun(t, &r, "convert", "--from", "snap", snap, "-o", filepath.Join(dir, "g.bin"), "--no-map")
	var p struct {
		Output string `json:"output"`
	}
	mustRun(t, &p, "pack", r.Output, "-o", filepath.Join(dir, "g.packed"))
	inputs := listDir(t, dir)
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{
		{"convert", "--from", "snap", snap, "-o", out},
		{"convert", "--from", "lg", lg, "-o", out},
		{"snapshots", "--from", "snap", snap, snap, "-o", out},
		{"temporal", "--window", "10", ev, "-o", out},
		{"validate", r.Output},
		{"cc", r.Output, "--labels", out},
		{"cc", "--format", "text", writeFile(t, t.TempDir(), "g.txt", "3 2\n0 1\n1 2\n")},
		{"gen", "erdos", "--vertices", "100", "--density", "0.1", "-o", out},
		{"gen", "kron", "--scale", "4", "-o", out},
		{"gen", "kron", "--scale", "4", "--format", "packed", "-o", out},
		{"pack", r.Output, "-o", out},
		{"unpack", p.Output, "-o", out},
		{"validate", p.Output},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errors.New("terminated signal received"))
		var stdout, stderr bytes.Buffer
		code := exitCode(run(ctx, args, &stdout, &stderr), &stderr)
		name := args[0]
		if name == "gen" {
			name += " " + args[1]
		}
		if want := name + " interrupted (terminated signal received)"; code != 1 || !strings.Contains(stderr.String(), want) {
			t.Errorf("%q: exit %d, stderr %q; want 1 and %q", args, code, stderr.String(), want)
		}
		if stdout.Len() > 0 {
			t.Errorf("%q: printed a summary after the interrupt: %s", args, stdout.String())
		}
		if got := listDir(t, dir); !slices.Equal(got, inputs) {
			t.Errorf("%q: left %v, want only %v", args, got, inputs)
		}
	}
}

// TestInterrupt_Signal sends SIGTERM to the binary while it reads a FIFO
// that is fed slowly (a read that blocks), and while gen writes its
// output files: it must stop within seconds, exit 1, say it was
// interrupted and leave no output behind. Was: convert and temporal
// ignored the signal and waited for the FIFO forever.
func TestInterrupt_Signal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	for _, tc := range []struct {
		name  string
		args  []string // "IN" is the FIFO, "OUT" the output
		first string   // what the FIFO is fed before the signal
	}{
		{"convert snap", []string{"convert", "--from", "snap", "IN", "-o", "OUT"}, "# slow\n1 2\n2 3\n"},
		{"convert lg", []string{"convert", "--from", "lg", "IN", "-o", "OUT"}, "4294967295,1000000,u,g\n1,2\n"},
		{"temporal", []string{"temporal", "--window", "10", "IN", "-o", "OUT"}, "1 2 100\n"},
		{"gen", []string{"gen", "erdos", "--vertices", "2000000", "--density", "0.5", "--workers", "1",
			"-o", "OUT"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "in.fifo")
			requireNoError(t, syscall.Mkfifo(fifo, 0o600))
			args := slices.Clone(tc.args)
			for i, a := range args {
				args[i] = strings.NewReplacer("IN", fifo, "OUT", filepath.Join(dir, "out.bin")).Replace(a)
			}
			cmd := exec.Command(bin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			requireNoError(t, cmd.Start())
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			defer func() {
				select {
				case <-exited:
				default:
					cmd.Process.Kill()
					<-exited
				}
			}()
			if tc.first != "" {
				// Opening the FIFO to write returns once the command has
				// opened it to read: it is then past installing its signal
				// handler and in its read loop.
				w := openFIFO(t, fifo, exited)
				defer w.Close()
				_, err := w.WriteString(tc.first)
				requireNoError(t, err)
			} else {
				// gen: wait for its temporary output files.
				testwait.Until(t, 10*time.Second, 10*time.Millisecond, func() error {
					if n := len(listDir(t, dir)); n < 3 {
						return fmt.Errorf("%d files in %s, want the FIFO and two temporary outputs", n, dir)
					}
					return nil
				})
			}
			requireNoError(t, cmd.Process.Signal(syscall.SIGTERM))
			testwait.Until(t, 10*time.Second, 10*time.Millisecond, func() error {
				select {
				case <-exited:
					return nil
				default:
					return errors.New("still running after SIGTERM")
				}
			})
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("killed by %v, not an orderly exit; stderr %q", ws.Signal(), stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "interrupted (terminated signal received)") {
				t.Errorf("exit %d, stderr %q; want 1 and \"interrupted (terminated signal received)\"", code, stderr.String())
			}
			if stdout.Len() > 0 {
				t.Errorf("printed a summary after SIGTERM: %s", stdout.String())
			}
			if got := listDir(t, dir); !slices.Equal(got, []string{"in.fifo"}) {
				t.Errorf("left %v, want only the input", got)
			}
		})
	}
}

// openFIFO opens the FIFO at path to write, failing the test if the
// command exits before it has opened it to read or takes over 10 s.
func openFIFO(t *testing.T, path string, exited <-chan struct{}) *os.File {
	t.Helper()
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			f = nil
		}
		opened <- f
	}()
	var problem string
	select {
	case f := <-opened:
		if f != nil {
			return f
		}
		problem = "cannot open the FIFO"
	case <-exited:
		problem = "the command exited before it opened its input"
	case <-time.After(10 * time.Second):
		problem = "the command did not open its input within 10 s"
	}
	// Open the reading end here, which ends the goroutine's open.
	if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		if f := <-opened; f != nil {
			f.Close()
		}
		r.Close()
	}
	t.Fatal(problem)
	return nil
}
