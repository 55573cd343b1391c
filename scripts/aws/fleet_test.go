package main

// The failure paths a real account hits (issue 27): another region, late
// network interfaces, a registering SSM agent, an SSH rule open to all.

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"sketchcc/scripts/aws/internal/fakeaws"
)

// launched runs a launch in us-east-1 that must succeed, with extra flags.
func launched(t *testing.T, extra ...string) {
	t.Helper()
	binDir, stream := fakeBinaries(t)
	if code, stdout, stderr := tool(t, "", launchArgs(binDir, stream, append([]string{"--yes"}, extra...)...)...); code != 0 {
		t.Fatalf("launch: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// noPauses makes the tool's pauses return at once, and returns those it
// asked for.
func noPauses(t *testing.T) *[]time.Duration {
	t.Helper()
	var asked []time.Duration
	was := pause
	pause = func(ctx context.Context, d time.Duration) error { asked = append(asked, d); return ctx.Err() }
	t.Cleanup(func() { pause = was })
	return &asked
}

// editFake applies f to the fake's state.
func editFake(t *testing.T, state string, f func(s *fakeaws.State)) {
	t.Helper()
	s := readFake(t, state)
	f(s)
	if err := s.Save(state); err != nil {
		t.Fatal(err)
	}
}

// TestTeardownOtherRegion: a teardown in a region where the run does not
// live refuses, deletes nothing, and names the run's region; there it
// then deletes everything.
func TestTeardownOtherRegion(t *testing.T) {
	state := fakeAWSOnPath(t)
	launched(t)
	for _, bucket := range [][]string{nil, {"--bucket", "bkt"}} {
		args := append([]string{"teardown", "--region", "eu-west-1", "--run", run1}, bucket...)
		code, stdout, stderr := tool(t, "", args...)
		if code != 1 || !strings.Contains(stderr, "us-east-1") || !strings.Contains(stderr, "--region us-east-1") ||
			strings.Contains(stdout, "Deleted") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1, nothing deleted, the run's region named", args, code, stdout, stderr)
		}
		if s := readFake(t, state); len(s.Deleted) != 0 {
			t.Fatalf("%q deleted %q", args, s.Deleted)
		}
	}
	teardownRemovedAll(t, state)
}

// TestTeardownOtherRegionUntaggedRole: a run launched before the role
// carried its region is torn down only where its resources are found.
func TestTeardownOtherRegionUntaggedRole(t *testing.T) {
	state := fakeAWSOnPath(t)
	launched(t)
	editFake(t, state, func(s *fakeaws.State) { delete(s.Roles[run1].Tags, "sketchcc-region") })
	code, stdout, stderr := tool(t, "", "teardown", "--region", "eu-west-1", "--run", run1, "--bucket", "bkt")
	if code != 1 || !strings.Contains(stderr, "eu-west-1") || strings.Contains(stdout, "Deleted") {
		t.Errorf("teardown in eu-west-1: exit %d, stdout %q, stderr %q; want a refusal", code, stdout, stderr)
	}
	if s := readFake(t, state); len(s.Deleted) != 0 {
		t.Fatalf("teardown in eu-west-1 deleted %q", s.Deleted)
	}
	teardownRemovedAll(t, state)
}

// TestStatusOtherRegion: status in a region where the run does not live
// names the run's region rather than reporting an empty run.
func TestStatusOtherRegion(t *testing.T) {
	fakeAWSOnPath(t)
	launched(t)
	code, stdout, stderr := tool(t, "", "status", "--region", "eu-west-1", "--run", run1)
	if code != 1 || !strings.Contains(stderr, "status --run "+run1+" --region us-east-1") {
		t.Errorf("status in eu-west-1: exit %d, stdout %q, stderr %q; want exit 1 and the run's region", code, stdout, stderr)
	}
}

// TestTeardownLateNetworkInterface: a security group still held by a
// terminated instance's network interface for a while is retried, with
// a growing and bounded back-off, and teardown finishes.
func TestTeardownLateNetworkInterface(t *testing.T) {
	state := fakeAWSOnPath(t)
	launched(t)
	paused := noPauses(t)
	editFake(t, state, func(s *fakeaws.State) { s.Lag = fakeaws.Lag{Shutdown: 3, ENI: 4} })
	teardownRemovedAll(t, state)
	if len(*paused) == 0 || len(*paused) > 4 {
		t.Errorf("teardown paused %v; want a few retries", *paused)
	}
}

// TestTeardownNetworkInterfaceNeverLetsGo: when the retries run out,
// teardown deletes the rest, exits 1 and names what is left with the
// command that finishes the job, which then does.
func TestTeardownNetworkInterfaceNeverLetsGo(t *testing.T) {
	state := fakeAWSOnPath(t)
	launched(t)
	paused := noPauses(t)
	editFake(t, state, func(s *fakeaws.State) { s.Lag = fakeaws.Lag{ENI: 1000} })
	code, stdout, stderr := tool(t, "", "teardown", "--region", "us-east-1", "--run", run1)
	finish := "go run ./scripts/aws teardown --run " + run1 + " --region us-east-1"
	if code != 1 || !strings.Contains(stderr, "security group sg-") || !strings.Contains(stderr, finish) {
		t.Errorf("teardown: exit %d, stdout %q, stderr %q; want exit 1, the security group left and %q", code, stdout, stderr, finish)
	}
	s := readFake(t, state)
	for _, c := range s.Created {
		kept := strings.HasPrefix(c, "security-group ") || c == "role "+run1 || c == "instance-profile "+run1 // the region's record
		if !kept && !slices.Contains(s.Deleted, c) {
			t.Errorf("teardown left %s, which it could delete", c)
		}
	}
	var total time.Duration
	for i, d := range *paused {
		total += d
		if d <= 0 || d > time.Minute || i > 0 && d < (*paused)[i-1] {
			t.Errorf("pauses %v: want each in (0, 1m], none shorter than the one before", *paused)
			break
		}
	}
	if len(*paused) > 20 || total < time.Minute || total > 10*time.Minute {
		t.Errorf("pauses %v, %v in all: want a bounded back-off of a few minutes", *paused, total)
	}
	editFake(t, state, func(s *fakeaws.State) { s.Lag = fakeaws.Lag{} })
	teardownRemovedAll(t, state)
}

// TestStatusRightAfterLaunch: status waits, bounded, while the main
// node's SSM agent registers, then asks it; if the agent takes longer,
// status says the instances are still starting and when to try again.
func TestStatusRightAfterLaunch(t *testing.T) {
	state := fakeAWSOnPath(t)
	launched(t)
	paused := noPauses(t)
	editFake(t, state, func(s *fakeaws.State) { s.Lag.SSM = 8 })
	code, stdout, stderr := tool(t, "", "status", "--region", "us-east-1", "--run", run1)
	if code != 0 || !strings.Contains(stdout, "1000000 of 4000000 updates read") || len(*paused) == 0 {
		t.Errorf("status while the agent registers: exit %d, %d pauses, stdout %q, stderr %q", code, len(*paused), stdout, stderr)
	}

	editFake(t, state, func(s *fakeaws.State) { s.Lag.SSM = 1000 })
	*paused = nil
	code, stdout, stderr = tool(t, "", "status", "--region", "us-east-1", "--run", run1, "--wait", "1m")
	if code != 0 || !strings.Contains(stdout, "still starting") || !strings.Contains(stdout, "go run ./scripts/aws status --run "+run1+" --region us-east-1") ||
		strings.Contains(stderr, "InvalidInstanceId") {
		t.Errorf("status before the agent registers: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	var total time.Duration
	for _, d := range *paused {
		total += d
	}
	if total < 50*time.Second || total > time.Minute {
		t.Errorf("status --wait 1m paused %v in all (%v)", total, *paused)
	}
}

// TestSSHOpenToWorld: an SSH rule open to every address, IPv4 or IPv6, is
// refused unless --ssh-from-anywhere says so; an IPv6 range becomes an
// IPv6 rule; a malformed range is a usage error.
func TestSSHOpenToWorld(t *testing.T) {
	state := fakeAWSOnPath(t)
	binDir, stream := fakeBinaries(t)
	for _, cidr := range []string{"0.0.0.0/0", "::/0", "10.1.2.3/0", "1.2.3", "2001:db8::/300"} {
		code, _, stderr := tool(t, "", launchArgs(binDir, stream, "--yes", "--ssh-key", "k", "--ssh-cidr", cidr)...)
		want := "--ssh-from-anywhere"
		if !strings.HasSuffix(cidr, "/0") {
			want = "--ssh-cidr=" + cidr
		}
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("--ssh-cidr %s: exit %d, stderr %q; want 2 and %q", cidr, code, stderr, want)
		}
	}
	if s := readFake(t, state); len(s.Calls) != 0 {
		t.Fatalf("refused launches made calls %q", ops(s.Calls))
	}
	for _, c := range []struct{ cidr, field string }{{"0.0.0.0/0", `"CidrIp":"0.0.0.0/0"`}, {"2001:db8::/64", `"CidrIpv6":"2001:db8::/64"`}} {
		if err := os.WriteFile(state, nil, 0o600); err != nil { // a fresh account
			t.Fatal(err)
		}
		code, _, stderr := tool(t, "", launchArgs(binDir, stream, "--yes", "--ssh-key", "k", "--ssh-cidr", c.cidr, "--ssh-from-anywhere")...)
		if code != 0 {
			t.Fatalf("--ssh-cidr %s --ssh-from-anywhere: exit %d\n%s", c.cidr, code, stderr)
		}
		for _, call := range readFake(t, state).Calls {
			if call.Op() == "ec2 authorize-security-group-ingress" && !strings.Contains(flag(call.Args, "--ip-permissions"), c.field) {
				t.Errorf("--ssh-cidr %s: ingress %s, want %s", c.cidr, flag(call.Args, "--ip-permissions"), c.field)
			}
		}
	}
}

// TestSpotRequestsTagged: spot workers' requests carry the run's tag.
func TestSpotRequestsTagged(t *testing.T) {
	state := fakeAWSOnPath(t)
	launched(t, "--spot")
	spot := readFake(t, state).Region("us-east-1").Spot
	if len(spot) != 4 {
		t.Fatalf("%d spot requests, want 4", len(spot))
	}
	for id, tags := range spot {
		if tags[tagKey] != run1 {
			t.Errorf("spot request %s has tags %v, want %s=%s", id, tags, tagKey, run1)
		}
	}
}

// TestKronPasses: a kron:17 stream is generated in a few passes, as
// results/lib.sh does it, not with the generator's small default.
func TestKronPasses(t *testing.T) {
	state := fakeAWSOnPath(t)
	binDir, _ := fakeBinaries(t)
	if code, _, stderr := tool(t, "", launchArgs(binDir, "kron:17", "--yes")...); code != 0 {
		t.Fatalf("launch: exit %d\n%s", code, stderr)
	}
	main := readFake(t, state).Region("us-east-1").Instances[0].UserData
	if !strings.Contains(main, "gen kron --scale 17 --seed 1 --no-cum --pass-updates 1073741824 ") {
		t.Errorf("main node user-data does not generate kron17 in 5 passes:\n%s", main)
	}
}

// TestLaunchShowsSteps: launch says what it is doing before each slow
// step, from building the binaries on.
func TestLaunchShowsSteps(t *testing.T) {
	fakeAWSOnPath(t)
	binDir, stream := fakeBinaries(t)
	goDir := t.TempDir()
	if err := os.WriteFile(goDir+"/go", []byte("#!/bin/sh\necho 'fake go: cannot build' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", goDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	args := launchArgs(binDir, stream, "--yes")
	code, stdout, _ := tool(t, "", slices.Delete(slices.Clone(args), slices.Index(args, "--bin-dir"), slices.Index(args, "--bin-dir")+2)...)
	if code != 1 || !strings.Contains(stdout, "Building main-node, worker") {
		t.Errorf("launch with a failing build: exit %d, stdout %q; want the build step shown before it", code, stdout)
	}
	code, stdout, _ = tool(t, "", args...)
	last := -1
	for _, want := range []string{"Uploading", "Storing the cluster key", "Creating the IAM role", "Creating the placement group",
		"Starting the main node", "Starting 4 workers", "Waiting until the 5 instances run"} {
		i := strings.Index(stdout, want)
		if code != 0 || i < 0 || i < last {
			t.Errorf("launch: exit %d, step %q at %d, after %d:\n%s", code, want, i, last, stdout)
		}
		last = i
	}
}
