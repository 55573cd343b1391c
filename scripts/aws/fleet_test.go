package main

// The failure paths a real account hits (issue 27): another region, late
// network interfaces, a registering SSM agent, an SSH rule open to all.

import (
	"strings"
	"testing"

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
