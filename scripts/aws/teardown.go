package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// The tags of the run's IAM role besides tagKey: they record where the
// run lives, since IAM is global and the rest of the run is not.
const (
	bucketTag = "sketchcc-bucket"
	regionTag = "sketchcc-region"
)

func setupTeardown(fs *pflag.FlagSet) func(context.Context, *env) error {
	var run, bucket string
	fs.StringVar(&run, "run", "", "run id printed by launch (required)")
	fs.StringVar(&bucket, "bucket", "", "S3 bucket of the run (default: read from the run's IAM role tag)")
	return func(ctx context.Context, e *env) error {
		if !validRun(run) {
			return usageErr(fmt.Errorf("--run=%q: want the run id printed by launch", run))
		}
		return teardown(ctx, e, names{run: run, bucket: bucket})
	}
}

// found is what a teardown finds of a run before it deletes anything:
// the run's resources in the region, and what its IAM role records.
type found struct {
	instances, sgs, pgs, params []string
	role                        bool   // the role exists and carries the run tag
	region                      string // the role's regionTag, "" without one
}

func (f found) regional() bool {
	return len(f.instances)+len(f.sgs)+len(f.pgs)+len(f.params) > 0
}

// teardown deletes every resource of the run, in dependency order:
// instances (and with them their volumes and spot requests), the security
// and placement groups, the key parameter, the S3 objects, the role and
// instance profile. It first looks, and deletes nothing if the run lives
// in another region. What is already gone is skipped, so it can run twice.
func teardown(ctx context.Context, e *env, n names) error {
	if e.dry {
		fmt.Fprintf(e.stdout, "Dry run: the calls teardown of %s would make, none is made.\n", n.run)
	}
	f, err := survey(ctx, e, &n)
	if err != nil {
		return err
	}
	if err := checkRegion(e, n, f); err != nil {
		return err
	}
	var deleted []string
	note := func(what string) { deleted = append(deleted, what) }
	if err := deleteInstances(ctx, e, f.instances, note); err != nil {
		return err
	}
	left, err := deleteGroupsAndKey(ctx, e, f, note)
	if err != nil {
		return err
	}
	if err := deleteObjects(ctx, e, n, note); err != nil {
		return err
	}
	// While something of the run is left in the region, its role stays:
	// it is free, and it records the region for the teardown that ends
	// the job.
	if len(left) == 0 {
		if err := deleteIAM(ctx, e, n, f.role, note); err != nil {
			return err
		}
	}
	if e.dry {
		return nil
	}
	if len(deleted) == 0 {
		fmt.Fprintf(e.stdout, "Nothing left of run %s in %s.\n", n.run, e.region)
		return nil
	}
	fmt.Fprintf(e.stdout, "Deleted from run %s:\n", n.run)
	for _, d := range deleted {
		fmt.Fprintln(e.stdout, "  "+d)
	}
	if len(left) > 0 {
		var wait time.Duration
		for _, d := range dependencyBackoff {
			wait += d
		}
		return fmt.Errorf("teardown of run %s is not finished: after %v of retries these are still in use:\n  %s\n"+
			"its IAM role and instance profile are kept until then (they cost nothing); in a few minutes, finish with:\n  go run ./scripts/aws teardown --run %s --region %s",
			n.run, wait, strings.Join(left, "\n  "), n.run, e.region)
	}
	if !f.regional() && f.region == "" {
		e.log.Warn("found no instance, group or parameter of the run in this region; if it was launched in another, tear it down there too", "region", e.region)
	}
	return nil
}

// checkRegion refuses a teardown in a region where the run does not live:
// the role's region tag names another, or (a role without the tag, from
// an older launch) nothing of the run is found in this one.
func checkRegion(e *env, n names, f found) error {
	if e.dry || !f.role {
		return nil
	}
	if f.region != "" && f.region != e.region {
		return fmt.Errorf("run %s lives in %s (the tag %s of its IAM role), not in %s: nothing deleted; tear it down there:\n  go run ./scripts/aws teardown --run %s --region %s",
			n.run, f.region, regionTag, e.region, n.run, f.region)
	}
	if f.region == "" && !f.regional() {
		return fmt.Errorf("run %s has an IAM role but no instance, group or parameter in %s: it lives in another region; nothing deleted; give that region with --region",
			n.run, e.region)
	}
	return nil
}

// survey finds the run's resources in the region and reads its role's
// tags (into n.bucket unless n gives one). It deletes nothing.
func survey(ctx context.Context, e *env, n *names) (found, error) {
	var f found
	var err error
	if f.role, f.region, err = roleTags(ctx, e, n); err != nil {
		return f, err
	}
	a := e.aws
	var di struct {
		Reservations []struct{ Instances []struct{ InstanceId string } }
	}
	if err := a.runJSON(ctx, &di, "ec2", "describe-instances", "--filters", n.tagFilter(),
		"Name=instance-state-name,Values=pending,running,stopping,stopped,shutting-down"); err != nil {
		return f, err
	}
	for _, r := range di.Reservations {
		for _, in := range r.Instances {
			f.instances = append(f.instances, in.InstanceId)
		}
	}
	var sgs struct{ SecurityGroups []struct{ GroupId string } }
	if err := a.runJSON(ctx, &sgs, "ec2", "describe-security-groups", "--filters", n.tagFilter()); err != nil {
		return f, err
	}
	for _, g := range sgs.SecurityGroups {
		f.sgs = append(f.sgs, g.GroupId)
	}
	var pgs struct{ PlacementGroups []struct{ GroupName string } }
	if err := a.runJSON(ctx, &pgs, "ec2", "describe-placement-groups", "--filters", n.tagFilter()); err != nil {
		return f, err
	}
	for _, g := range pgs.PlacementGroups {
		f.pgs = append(f.pgs, g.GroupName)
	}
	var params struct{ Parameters []struct{ Name string } }
	if err := a.runJSON(ctx, &params, "ssm", "describe-parameters", "--parameter-filters",
		"Key=tag:"+tagKey+",Values="+n.run); err != nil {
		return f, err
	}
	for _, p := range params.Parameters {
		f.params = append(f.params, p.Name)
	}
	if e.dry {
		what := " tagged " + tagKey + "=" + n.run + ">"
		f = found{instances: []string{"<instances" + what}, sgs: []string{"<security group" + what},
			pgs: []string{n.run}, params: []string{n.keyParam()}, role: true}
	}
	return f, nil
}

// deleteInstances terminates the run's instances that are not already,
// and waits until they are.
func deleteInstances(ctx context.Context, e *env, ids []string, note func(string)) error {
	if len(ids) == 0 {
		return nil
	}
	a := e.aws
	if _, err := a.run(ctx, append([]string{"ec2", "terminate-instances", "--instance-ids"}, ids...)...); err != nil {
		return err
	}
	if _, err := a.run(ctx, append([]string{"ec2", "wait", "instance-terminated", "--instance-ids"}, ids...)...); err != nil {
		return err
	}
	for _, id := range ids {
		note("instance " + id)
	}
	return nil
}

// dependencyBackoff is the pause before each retry of a deletion that
// something else still holds: a security group the network interface of
// a just terminated instance still uses, a placement group EC2 still
// counts it in. EC2 lets go within a minute or two; the pauses add up to
// 4 min 29 s, and then teardown says what is left.
var dependencyBackoff = []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 15 * time.Second,
	30 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second,
	30 * time.Second, 30 * time.Second}

// pause waits d or until ctx is done; tests replace it.
var pause = func(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// deleteRetrying makes a deletion call, again after each pause of
// dependencyBackoff while AWS answers busy. It returns the last error.
func deleteRetrying(ctx context.Context, e *env, busy string, args ...string) error {
	for i := 0; ; i++ {
		_, err := e.aws.run(ctx, args...)
		if err == nil || awsCode(err) != busy || i == len(dependencyBackoff) {
			return err
		}
		e.log.Info("still in use; retrying", "call", args[1], "code", busy, "attempt", i+1, "wait", dependencyBackoff[i])
		if err := pause(ctx, dependencyBackoff[i]); err != nil {
			return err
		}
	}
}

// deleteGroupsAndKey deletes the run's security and placement groups and
// its key parameter. It returns what is still held by another resource
// after the retries.
func deleteGroupsAndKey(ctx context.Context, e *env, f found, note func(string)) (left []string, err error) {
	groups := []struct {
		kind, idFlag, busy, gone, why string
		ids                           []string
	}{
		{"security group", "--group-id", "DependencyViolation", "InvalidGroup.NotFound", "a network interface still uses it", f.sgs},
		{"placement group", "--group-name", "InvalidPlacementGroup.InUse", "InvalidPlacementGroup.Unknown", "EC2 still counts an instance in it", f.pgs},
	}
	for _, k := range groups {
		for _, g := range k.ids {
			err := deleteRetrying(ctx, e, k.busy, "ec2", "delete-"+strings.ReplaceAll(k.kind, " ", "-"), k.idFlag, g)
			switch {
			case err == nil || awsCode(err) == k.gone:
				note(k.kind + " " + g)
			case awsCode(err) == k.busy:
				left = append(left, k.kind+" "+g+" ("+k.why+")")
			default:
				return left, err
			}
		}
	}
	for _, p := range f.params {
		if _, err := e.aws.run(ctx, "ssm", "delete-parameter", "--name", p); err != nil && awsCode(err) != "ParameterNotFound" {
			return left, err
		}
		note("parameter " + p)
	}
	return left, nil
}

// roleTags reports whether the IAM role named after the run exists and
// carries its run tag (true in a dry run), and returns its region tag; it
// reads the bucket from the role's tag into n.bucket unless n gives one.
// A role that exists without the run tag is an error.
func roleTags(ctx context.Context, e *env, n *names) (ours bool, region string, err error) {
	var rt struct{ Tags []struct{ Key, Value string } }
	err = e.aws.runJSON(ctx, &rt, "iam", "list-role-tags", "--role-name", n.run)
	switch {
	case awsCode(err) == "NoSuchEntity":
		return false, "", nil
	case err != nil:
		return false, "", err
	}
	ours = e.dry
	for _, t := range rt.Tags {
		switch t.Key {
		case tagKey:
			ours = t.Value == n.run
		case regionTag:
			region = t.Value
		case bucketTag:
			if n.bucket == "" {
				n.bucket = t.Value
			}
		}
	}
	if !ours {
		return false, "", fmt.Errorf("IAM role %s has no tag %s=%s: not deleting a role this tool did not create", n.run, tagKey, n.run)
	}
	return ours, region, nil
}

// deleteObjects deletes the run's S3 objects, when the bucket is known.
func deleteObjects(ctx context.Context, e *env, n names, note func(string)) error {
	a := e.aws
	switch {
	case n.bucket != "":
		if _, err := a.run(ctx, "s3", "rm", "--only-show-errors", "--recursive", "s3://"+n.bucket+"/"+n.prefix()+"/"); err != nil {
			return err
		}
		note("s3://" + n.bucket + "/" + n.prefix() + "/")
	case e.dry:
		fmt.Fprintf(e.stdout, "aws s3 rm --only-show-errors --recursive s3://<bucket from --bucket or the role's tag>/%s/ --region %s --output json\n", n.prefix(), e.region)
	default:
		e.log.Warn("S3 objects not deleted: the role is gone and --bucket was not given", "prefix", n.prefix())
	}
	return nil
}

// deleteIAM deletes the instance profile if it carries the run tag, and
// the role if ours.
func deleteIAM(ctx context.Context, e *env, n names, ours bool, note func(string)) error {
	a := e.aws
	// The instance profile carries the run tag too: a teardown that
	// stopped between deleting the profile and the role finds the role
	// again, and one that stopped earlier finds both.
	var pt struct{ Tags []struct{ Key, Value string } }
	err := a.runJSON(ctx, &pt, "iam", "list-instance-profile-tags", "--instance-profile-name", n.run)
	profileOurs := e.dry
	switch {
	case awsCode(err) == "NoSuchEntity":
	case err != nil:
		return err
	}
	for _, t := range pt.Tags {
		if t.Key == tagKey {
			profileOurs = t.Value == n.run
		}
	}
	var steps [][]string
	if profileOurs {
		steps = append(steps,
			[]string{"iam", "remove-role-from-instance-profile", "--instance-profile-name", n.run, "--role-name", n.run},
			[]string{"iam", "delete-instance-profile", "--instance-profile-name", n.run})
	}
	if ours {
		steps = append(steps,
			[]string{"iam", "detach-role-policy", "--role-name", n.run, "--policy-arn", ssmCorePolicy},
			[]string{"iam", "delete-role-policy", "--role-name", n.run, "--policy-name", "sketchcc"},
			[]string{"iam", "delete-role", "--role-name", n.run})
	}
	for _, s := range steps {
		// What is already gone is fine.
		if _, err := a.run(ctx, s...); err != nil && awsCode(err) != "NoSuchEntity" {
			return err
		}
	}
	if profileOurs {
		note("instance profile " + n.run)
	}
	if ours {
		note("role " + n.run)
	}
	return nil
}
