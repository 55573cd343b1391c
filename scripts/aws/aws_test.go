package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sketchcc/internal/cli"
	"sketchcc/scripts/aws/internal/fakeaws"
)

// tool runs the command in-process with stdin and returns its exit
// status, stdout and stderr.
func tool(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr)
	return cli.ExitCode("aws", err, &stderr), stdout.String(), stderr.String()
}

// fakeBinaries writes stand-ins for the three binaries and a stream.
func fakeBinaries(t *testing.T) (binDir, stream string) {
	t.Helper()
	binDir = t.TempDir()
	for _, b := range []string{"main-node", "worker", "streamtool"} {
		if err := os.WriteFile(filepath.Join(binDir, b), []byte("#!/bin/true "+b+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stream = filepath.Join(t.TempDir(), "kron13.bin")
	if err := os.WriteFile(stream, make([]byte, 12+9*100), 0o644); err != nil {
		t.Fatal(err)
	}
	return binDir, stream
}

// ops returns "service op" of each call.
func ops(calls []fakeCall) []string {
	var o []string
	for _, c := range calls {
		o = append(o, c.Op())
	}
	return o
}

// dryOps reads "service op" from the lines a dry run printed.
func dryOps(stdout string) []string {
	var o []string
	for _, l := range strings.Split(stdout, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "aws" {
			o = append(o, f[1]+" "+f[2])
		}
	}
	return o
}

var launchOps = []string{
	"sts get-caller-identity", "ssm get-parameters", "ec2 describe-subnets",
	"s3 cp", "s3 cp", "s3 cp", // main-node, worker, stream
	"ssm put-parameter",
	"iam create-role", "iam put-role-policy", "iam attach-role-policy", "iam create-instance-profile",
	"iam add-role-to-instance-profile", "iam wait",
	"ec2 create-placement-group", "ec2 create-security-group", "ec2 authorize-security-group-ingress",
	"ec2 run-instances", "ec2 run-instances", "ec2 wait",
}

var teardownOps = []string{
	"iam list-role-tags", "ec2 describe-instances", "ec2 describe-security-groups",
	"ec2 describe-placement-groups", "ssm describe-parameters", // nothing is deleted before it is all found
	"ec2 terminate-instances", "ec2 wait", "ec2 delete-security-group", "ec2 delete-placement-group",
	"ssm delete-parameter", "s3 rm", "iam list-instance-profile-tags",
	"iam remove-role-from-instance-profile", "iam delete-instance-profile", "iam detach-role-policy",
	"iam delete-role-policy", "iam delete-role",
}

const run1 = "sketchcc-test-0001"

// failCall makes the fake fail the call "service op" from now on ("" for
// none).
func failCall(t *testing.T, state, op string) {
	t.Helper()
	s := readFake(t, state)
	s.Fail = fakeaws.Failure{Op: op}
	if err := s.Save(state); err != nil {
		t.Fatal(err)
	}
}

// teardownRemovedAll runs a teardown that must succeed and checks that
// everything created has been deleted, once.
func teardownRemovedAll(t *testing.T, state string) {
	t.Helper()
	if code, _, stderr := tool(t, "", "teardown", "--region", "us-east-1", "--run", run1); code != 0 {
		t.Fatalf("teardown: exit %d\n%s", code, stderr)
	}
	s := readFake(t, state)
	if c, d := slices.Sorted(slices.Values(s.Created)), slices.Sorted(slices.Values(s.Deleted)); !slices.Equal(c, d) {
		t.Errorf("created %q\ndeleted %q", c, d)
	}
}

func launchArgs(binDir, stream string, extra ...string) []string {
	return append([]string{"launch", "--region", "us-east-1", "--run", run1, "--bucket", "bkt",
		"--stream", stream, "--workers", "4", "--bin-dir", binDir, "--log-level", "warn"}, extra...)
}

// TestDryRun: launch, teardown, status and fetch --dry-run print the calls
// in the order a real run makes them, and make none.
func TestDryRun(t *testing.T) {
	state := fakeAWSOnPath(t)
	binDir, stream := fakeBinaries(t)
	code, stdout, stderr := tool(t, "", launchArgs(binDir, stream, "--dry-run")...)
	if code != 0 {
		t.Fatalf("launch --dry-run: exit %d\n%s", code, stderr)
	}
	if got := dryOps(stdout); !slices.Equal(got, launchOps) {
		t.Errorf("launch --dry-run printed\n%q\nwant\n%q", got, launchOps)
	}
	for _, want := range []string{"Cost estimate", "table dated " + priceDate, "4 × c5.4xlarge", "Restart=always"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("launch --dry-run output lacks %q", want)
		}
	}
	code, stdout, stderr = tool(t, "", "teardown", "--region", "us-east-1", "--run", run1, "--bucket", "bkt", "--dry-run")
	if code != 0 {
		t.Fatalf("teardown --dry-run: exit %d\n%s", code, stderr)
	}
	if got := dryOps(stdout); !slices.Equal(got, teardownOps) {
		t.Errorf("teardown --dry-run printed\n%q\nwant\n%q", got, teardownOps)
	}
	for _, args := range [][]string{{"status", "--run", run1}, {"fetch", "--run", run1, "--bucket", "bkt", "--dir", t.TempDir()}} {
		code, stdout, stderr = tool(t, "", append(args, "--region", "us-east-1", "--dry-run")...)
		if code != 0 || len(dryOps(stdout)) < 3 {
			t.Errorf("%s --dry-run: exit %d, stdout %q, stderr %q", args[0], code, stdout, stderr)
		}
	}
	if s := readFake(t, state); len(s.Calls) != 0 {
		t.Errorf("dry runs made %d aws calls: %q", len(s.Calls), ops(s.Calls))
	}
}

// TestLaunchTeardown: launch makes its calls in order; teardown deletes
// exactly what launch created, and a second teardown finds nothing and
// succeeds.
func TestLaunchTeardown(t *testing.T) {
	state := fakeAWSOnPath(t)
	binDir, stream := fakeBinaries(t)
	code, stdout, stderr := tool(t, "", launchArgs(binDir, stream, "--yes")...)
	if code != 0 {
		t.Fatalf("launch: exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readFake(t, state)
	if got := ops(s.Calls); !slices.Equal(got, launchOps) {
		t.Errorf("launch called\n%q\nwant\n%q", got, launchOps)
	}
	created := slices.Sorted(slices.Values(s.Created))
	if len(created) != 5+3+1+2+2 { // instances, objects, parameter, role and profile, groups
		t.Errorf("launch created %d resources: %q", len(created), created)
	}

	code, stdout, stderr = tool(t, "", "teardown", "--region", "us-east-1", "--run", run1)
	if code != 0 {
		t.Fatalf("teardown: exit %d\n%s\n%s", code, stdout, stderr)
	}
	s = readFake(t, state)
	if got := ops(s.Calls[len(launchOps):]); !slices.Equal(got, teardownOps) {
		t.Errorf("teardown called\n%q\nwant\n%q", got, teardownOps)
	}
	if deleted := slices.Sorted(slices.Values(s.Deleted)); !slices.Equal(deleted, created) {
		t.Errorf("teardown deleted\n%q\nlaunch created\n%q", deleted, created)
	}

	n := len(s.Calls)
	code, stdout, stderr = tool(t, "", "teardown", "--region", "us-east-1", "--run", run1, "--bucket", "bkt")
	if code != 0 || !strings.Contains(stdout, "Deleted from run") && !strings.Contains(stdout, "Nothing left") {
		t.Fatalf("second teardown: exit %d\n%s\n%s", code, stdout, stderr)
	}
	s = readFake(t, state)
	for _, op := range ops(s.Calls[n:]) {
		if !strings.Contains(op, "describe") && !strings.Contains(op, "list-") && op != "s3 rm" {
			t.Errorf("second teardown called %s: nothing should be left to delete", op)
		}
	}
	if len(s.Deleted) != len(created) {
		t.Errorf("after the second teardown, deleted %q", s.Deleted)
	}
}

// TestKeyNeverInArgumentsOrUserData: the cluster key reaches SSM only
// through a 0600 file that is gone after launch; no call's arguments and
// no user-data hold it; the instances read it from the parameter.
func TestKeyNeverInArgumentsOrUserData(t *testing.T) {
	state := fakeAWSOnPath(t)
	binDir, stream := fakeBinaries(t)
	if code, _, stderr := tool(t, "", launchArgs(binDir, stream, "--yes")...); code != 0 {
		t.Fatalf("launch: exit %d\n%s", code, stderr)
	}
	s := readFake(t, state)
	param := s.Region("us-east-1").Params["/sketchcc/"+run1+"/cluster-key"]
	if param == nil {
		t.Fatalf("no key parameter in us-east-1")
	}
	key := param.Value
	if len(key) != 44 || param.Tags[tagKey] != run1 {
		t.Fatalf("key parameter %v: want a tagged base64 32-byte value", param)
	}
	userData := 0
	for _, c := range s.Calls {
		for _, a := range c.Args {
			if strings.Contains(a, key) {
				t.Errorf("the key is in an argument of aws %s", c.Op())
			}
		}
		for f, content := range c.Files {
			switch {
			case c.Op() == "ssm put-parameter":
				if c.Modes[f] != 0o600 {
					t.Errorf("the key file %s has mode %o, want 600", f, c.Modes[f])
				}
				if _, err := os.Stat(strings.TrimPrefix(f, "file://")); !os.IsNotExist(err) {
					t.Errorf("the key file %s is still there after launch: %v", f, err)
				}
			case strings.Contains(content, key):
				t.Errorf("the key is in %s, read by aws %s", f, c.Op())
			}
		}
	}
	for _, in := range s.Region("us-east-1").Instances {
		userData++
		if strings.Contains(in.UserData, key) {
			t.Errorf("the key is in the user-data of %s", in.ID)
		}
		if !strings.Contains(in.UserData, "ssm get-parameter --name /sketchcc/"+run1+"/cluster-key --with-decryption") {
			t.Errorf("the user-data of %s does not read the key from SSM:\n%s", in.ID, in.UserData)
		}
	}
	if userData != 5 {
		t.Errorf("%d instances, want 5", userData)
	}
}

// TestUserData: workers join the main node's address, check the binary's
// SHA-256 before installing it and are restarted whatever their exit
// status, every 5 s and without a limit; the security group admits the
// ports from its own members only.
func TestUserData(t *testing.T) {
	state := fakeAWSOnPath(t)
	binDir, stream := fakeBinaries(t)
	if code, _, stderr := tool(t, "", launchArgs(binDir, stream, "--yes", "--spot")...); code != 0 {
		t.Fatalf("launch: exit %d\n%s", code, stderr)
	}
	s := readFake(t, state)
	main, worker := s.Region("us-east-1").Instances[0], s.Region("us-east-1").Instances[1]
	sum, err := sha256File(filepath.Join(binDir, "worker"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"--join " + main.IP + ":7946", "echo '" + sum + "  /tmp/worker' | sha256sum --check --strict -",
		"systemctl enable --now sketchcc-worker.service", "--cluster-key-file /etc/sketchcc/cluster.key",
	} {
		if !strings.Contains(worker.UserData, want) {
			t.Errorf("worker user-data lacks %q:\n%s", want, worker.UserData)
		}
	}
	checkWorkerRestart(t, worker.UserData)
	for _, want := range []string{"--expect-workers 4", "s3://bkt/runs/" + run1 + "/stream.bin /data/stream.bin", "out/result.json", "--json"} {
		if !strings.Contains(main.UserData, want) {
			t.Errorf("main user-data lacks %q:\n%s", want, main.UserData)
		}
	}
	for _, c := range s.Calls {
		switch c.Op() {
		case "ec2 authorize-security-group-ingress":
			perms := flag(c.Args, "--ip-permissions")
			g := flag(c.Args, "--group-id")
			if strings.Count(perms, `"GroupId":"`+g+`"`) != 3 || strings.Contains(perms, "CidrIp") {
				t.Errorf("ingress rules %s: want 3 rules from group %s itself and no address range", perms, g)
			}
		case "ec2 run-instances":
			spot := strings.Contains(flag(c.Args, "--instance-market-options"), `"MarketType":"spot"`)
			if spot != (flag(c.Args, "--count") == "4") {
				t.Errorf("run-instances --count %s: spot %v (only workers are spot)", flag(c.Args, "--count"), spot)
			}
			if flag(c.Args, "--image-id") != "ami-0fakeus-east-1" || !strings.Contains(flag(c.Args, "--placement"), run1) {
				t.Errorf("run-instances %q: want the SSM AMI and the placement group", c.Args)
			}
		}
	}
}

// TestFailedCall: a failing call stops launch with exit 1 and a message
// naming the call and the AWS error; teardown then removes what was
// created before it.
func TestFailedCall(t *testing.T) {
	state := fakeAWSOnPath(t)
	binDir, stream := fakeBinaries(t)
	failCall(t, state, "ec2 create-security-group")
	code, _, stderr := tool(t, "", launchArgs(binDir, stream, "--yes")...)
	if code != 1 || !regexp.MustCompile(`aws: error: aws ec2 create-security-group --group-name `+run1+` .*: exit status 254: An error occurred \(UnauthorizedOperation\)`).MatchString(stderr) ||
		!strings.Contains(stderr, "go run ./scripts/aws teardown --run "+run1) {
		t.Fatalf("launch with a failing create-security-group: exit %d, stderr:\n%s", code, stderr)
	}
	s := readFake(t, state)
	if last := s.Calls[len(s.Calls)-1].Op(); last != "ec2 create-security-group" {
		t.Errorf("launch went on after the failed call, up to %s", last)
	}
	failCall(t, state, "")
	teardownRemovedAll(t, state)

	// A failing teardown call names itself too.
	failCall(t, state, "ec2 describe-instances")
	code, _, stderr = tool(t, "", "teardown", "--region", "us-east-1", "--run", run1)
	if code != 1 || !strings.Contains(stderr, "aws ec2 describe-instances --filters Name=tag:sketchcc-run,Values="+run1) {
		t.Errorf("teardown with a failing describe-instances: exit %d, stderr %q", code, stderr)
	}
}

// TestRetries: launch retries run-instances while EC2 does not see the
// new instance profile yet, and fetch --wait polls until the result is
// there.
func TestRetries(t *testing.T) {
	state := fakeAWSOnPath(t)
	binDir, stream := fakeBinaries(t)
	defer func(d, p time.Duration) { retryDelay, pollEvery = d, p }(retryDelay, pollEvery)
	retryDelay, pollEvery = 0, 0
	s := readFake(t, state)
	s.Fail = fakeaws.Failure{Op: "ec2 run-instances", Code: "InvalidParameterValue", Times: 2,
		Message: "Value (" + run1 + ") for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name"}
	s.Save(state)
	if code, _, stderr := tool(t, "", launchArgs(binDir, stream, "--yes")...); code != 0 {
		t.Fatalf("launch: exit %d\n%s", code, stderr)
	}
	s = readFake(t, state)
	if n := slices.Index(ops(s.Calls), "ec2 wait"); n < 0 || strings.Count(strings.Join(ops(s.Calls[:n]), "\n"), "run-instances") != 4 {
		t.Errorf("want 2 failed and 2 good run-instances: %q", ops(s.Calls))
	}

	// The result appears after the third listing.
	s.Fail = fakeaws.Failure{Op: "s3api list-objects-v2", Code: "SlowDown", Times: 2}
	s.Objects["s3://bkt/runs/"+run1+"/out/result.json"] = 0
	s.Objects["s3://bkt/runs/"+run1+"/out/main-node.log"] = 0
	s.Save(state)
	code, _, stderr := tool(t, "", "fetch", "--region", "us-east-1", "--run", run1, "--bucket", "bkt", "--dir", t.TempDir(), "--wait", "1h")
	if code != 1 || !strings.Contains(stderr, "(SlowDown)") {
		t.Errorf("fetch with a failing listing: exit %d, %q; want the AWS error", code, stderr)
	}
	s = readFake(t, state)
	s.Fail = fakeaws.Failure{}
	for _, o := range []string{"result.json", "main-node.log"} {
		s.Objects["s3://bkt/runs/"+run1+"/out/"+o] = 3 // missed by three listings
	}
	s.Save(state)
	n := len(s.Calls)
	if code, stdout, stderr := tool(t, "", "fetch", "--region", "us-east-1", "--run", run1, "--bucket", "bkt", "--dir", t.TempDir(), "--wait", "1h"); code != 0 || !strings.Contains(stdout, "Wrote ") {
		t.Errorf("fetch --wait: exit %d, %q, %q", code, stdout, stderr)
	}
	want := []string{"s3api list-objects-v2", "s3api list-objects-v2", "s3api list-objects-v2", "s3api list-objects-v2", "s3 cp", "s3 cp"}
	if got := ops(readFake(t, state).Calls[n:]); !slices.Equal(got, want) {
		t.Errorf("fetch --wait called %q, want %q", got, want)
	}
}

// TestDeclined: answering no to the confirmation makes no call.
func TestDeclined(t *testing.T) {
	state := fakeAWSOnPath(t)
	binDir, stream := fakeBinaries(t)
	code, stdout, stderr := tool(t, "n\n", launchArgs(binDir, stream)...)
	if code != 1 || !strings.Contains(stdout, "Launch? [y/N]") || !strings.Contains(stderr, "not launched") {
		t.Errorf("declined launch: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if s := readFake(t, state); len(s.Calls) != 0 {
		t.Errorf("declined launch made calls %q", ops(s.Calls))
	}
}

// TestStatusAndFetch: status lists the instances and the main node's
// metrics lines; fetch writes the result to a dated file.
func TestStatusAndFetch(t *testing.T) {
	state := fakeAWSOnPath(t)
	binDir, stream := fakeBinaries(t)
	if code, _, stderr := tool(t, "", launchArgs(binDir, stream, "--yes")...); code != 0 {
		t.Fatalf("launch: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := tool(t, "", "status", "--region", "us-east-1", "--run", run1)
	if code != 0 || strings.Count(stdout, " running") != 5 || !strings.Contains(stdout, "1000000 of 4000000 updates read (25.0%), 1 workers connected") ||
		!strings.Contains(stdout, "member w1: connected") || !strings.Contains(stdout, "member w2: not connected") || !strings.Contains(stdout, "main-node service: activating") {
		t.Errorf("status: exit %d\n%s\n%s", code, stdout, stderr)
	}
	dir := t.TempDir()
	code, _, stderr = tool(t, "", "fetch", "--region", "us-east-1", "--run", run1, "--bucket", "bkt", "--dir", dir)
	if code != 1 || !strings.Contains(stderr, "no result for run "+run1+" yet") {
		t.Errorf("fetch before the result: exit %d, %q", code, stderr)
	}
	s := readFake(t, state)
	s.Objects["s3://bkt/runs/"+run1+"/out/result.json"] = 0
	s.Objects["s3://bkt/runs/"+run1+"/out/main-node.log"] = 0
	s.Save(state)
	code, stdout, stderr = tool(t, "", "fetch", "--region", "us-east-1", "--run", run1, "--bucket", "bkt", "--dir", dir)
	want := filepath.Join(dir, "aws-"+run1+"-"+time.Now().UTC().Format("2006-01-02")+".json")
	if b, err := os.ReadFile(want); code != 0 || err != nil || !strings.Contains(string(b), "components") {
		t.Errorf("fetch: exit %d, stdout %q, stderr %q; %s: %v", code, stdout, stderr, want, err)
	}
}

func TestUsage(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		code, _, stderr := tool(t, "", args...)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", args, code, stderr, want)
		}
	}
	f("no command")
	f(`unknown command "fly"`, "fly")
	f("--bucket is required", "launch", "--region", "r", "--stream", "kron:13")
	f("--worker-type=c5.large has no price", "launch", "--region", "r", "--bucket", "b", "--stream", "kron:13", "--worker-type", "c5.large")
	f("want kron:SCALE", "launch", "--region", "r", "--bucket", "b", "--stream", "kron:99")
	f("no shell syntax", "launch", "--region", "r", "--bucket", "b", "--stream", "kron:13", "--main-args", "--queries 2; rm -rf /")
	f("--run", "teardown", "--region", "r")
	if code, stdout, _ := tool(t, "", "cost", "--region", "r", "--workers", "16"); code != 0 || !strings.Contains(stdout, "$ 12.9090/h") || !strings.Contains(stdout, "public IPv4  17 × $0.005") {
		t.Errorf("cost --workers 16: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ := tool(t, "", "--version"); code != 0 || !strings.Contains(stdout, " go1.") {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
}

// TestTeardownResumes: a teardown that fails half-way (here deleting the
// role) leaves the rest to the next one, which deletes exactly what is
// left.
func TestTeardownResumes(t *testing.T) {
	state := fakeAWSOnPath(t)
	binDir, stream := fakeBinaries(t)
	if code, _, stderr := tool(t, "", launchArgs(binDir, stream, "--yes")...); code != 0 {
		t.Fatalf("launch: exit %d\n%s", code, stderr)
	}
	failCall(t, state, "iam delete-role")
	code, _, stderr := tool(t, "", "teardown", "--region", "us-east-1", "--run", run1)
	if code != 1 || !strings.Contains(stderr, "aws iam delete-role --role-name "+run1) {
		t.Fatalf("teardown with a failing delete-role: exit %d\n%s", code, stderr)
	}
	failCall(t, state, "")
	teardownRemovedAll(t, state)
}

// checkWorkerRestart checks the restart policy of the worker's service
// unit in user-data: systemd restarts it whatever its exit status (a
// worker that gave up on a lost main node exits 1, one told to stop exits
// 0), after 5 s, and never stops trying.
func checkWorkerRestart(t *testing.T, userData string) {
	t.Helper()
	_, unit, ok := strings.Cut(userData, "path: /etc/systemd/system/sketchcc-worker.service")
	if !ok {
		t.Fatalf("no worker unit in the user-data:\n%s", userData)
	}
	unit, _, _ = strings.Cut(unit, "\n  - path: ")
	settings := map[string][]string{}
	for _, l := range strings.Split(unit, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok && !strings.HasPrefix(k, "#") {
			settings[k] = append(settings[k], v)
		}
	}
	for k, want := range map[string]string{"Restart": "always", "RestartSec": "5", "StartLimitIntervalSec": "0"} {
		if got := settings[k]; len(got) != 1 || got[0] != want {
			t.Errorf("worker unit: %s=%q, want %s=%s:\n%s", k, got, k, want, unit)
		}
	}
}
