package main

import (
	"strings"
	"testing"

	"sketchcc/scripts/aws/internal/fakeaws"
)

// running returns the zone of each of the fake's running or pending
// instances of us-east-1, by type.
func running(t *testing.T, state string) map[string][]string {
	t.Helper()
	zones := map[string][]string{}
	for _, in := range readFake(t, state).Region("us-east-1").Instances {
		if in.State != "terminated" {
			zones[in.Type] = append(zones[in.Type], in.Zone)
		}
	}
	return zones
}

// TestLaunchOtherZone: when the first default subnet's zone has no
// capacity, launch starts the main node in the next zone that has, and
// the workers in the main node's zone.
func TestLaunchOtherZone(t *testing.T) {
	state := fakeAWSOnPath(t)
	editFake(t, state, func(s *fakeaws.State) { s.NoCapacity = []string{"us-east-1a"} })
	launched(t)
	zones := running(t, state)
	if m, w := zones["c5n.9xlarge"], zones["c5.4xlarge"]; len(m) != 1 || m[0] != "us-east-1b" || len(w) != 4 || strings.Count(strings.Join(w, " "), "us-east-1b") != 4 {
		t.Errorf("main node in %q, workers in %q; want all in us-east-1b", m, w)
	}
}

// TestLaunchNoCapacityAnywhere: with no zone left, launch fails naming
// every zone it tried, and nothing runs.
func TestLaunchNoCapacityAnywhere(t *testing.T) {
	state := fakeAWSOnPath(t)
	editFake(t, state, func(s *fakeaws.State) { s.NoCapacity = fakeaws.Zones("us-east-1") })
	binDir, stream := fakeBinaries(t)
	code, _, stderr := tool(t, "", launchArgs(binDir, stream, "--yes")...)
	if code == 0 || !strings.Contains(stderr, "us-east-1a, us-east-1b, us-east-1c") || len(running(t, state)) != 0 {
		t.Errorf("launch with no capacity: exit %d, running %v, stderr %q", code, running(t, state), stderr)
	}
}

// TestLaunchWorkersFail: when the workers cannot start after the main
// node did, launch says exactly what is running (id, type, zone, price)
// and the command that tears it down.
func TestLaunchWorkersFail(t *testing.T) {
	state := fakeAWSOnPath(t)
	editFake(t, state, func(s *fakeaws.State) { s.NoCapacity = []string{"us-east-1a/c5.4xlarge"} })
	binDir, stream := fakeBinaries(t)
	code, _, stderr := tool(t, "", launchArgs(binDir, stream, "--yes")...)
	var id string
	for _, in := range readFake(t, state).Region("us-east-1").Instances {
		if in.State != "terminated" {
			id = in.ID
		}
	}
	want := []string{id, "c5n.9xlarge", "us-east-1a", "$1.944/h", "InsufficientInstanceCapacity",
		"go run ./scripts/aws teardown --run " + run1 + " --bucket bkt --region us-east-1"}
	for _, w := range want {
		if code == 0 || id == "" || !strings.Contains(stderr, w) {
			t.Errorf("launch whose workers fail: exit %d, stderr %q; want %q in it", code, stderr, w)
		}
	}
}
