package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
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

// teardown deletes every resource of the run, in dependency order:
// instances (and with them their volumes and spot requests), the security
// and placement groups, the key parameter, the S3 objects, the role and
// instance profile. What is already gone is skipped, so it can run twice.
func teardown(ctx context.Context, e *env, n names) error {
	if e.dry {
		fmt.Fprintf(e.stdout, "Dry run: the calls teardown of %s would make, none is made.\n", n.run)
	}
	var deleted []string
	note := func(what string) { deleted = append(deleted, what) }
	if err := deleteInstances(ctx, e, n, note); err != nil {
		return err
	}
	if err := deleteGroupsAndKey(ctx, e, n, note); err != nil {
		return err
	}
	ours, err := roleIsOurs(ctx, e, &n)
	if err != nil {
		return err
	}
	if err := deleteObjects(ctx, e, n, note); err != nil {
		return err
	}
	if err := deleteIAM(ctx, e, n, ours, note); err != nil {
		return err
	}
	if e.dry {
		return nil
	}
	if len(deleted) == 0 {
		fmt.Fprintf(e.stdout, "Nothing left of run %s.\n", n.run)
		return nil
	}
	fmt.Fprintf(e.stdout, "Deleted from run %s:\n", n.run)
	for _, d := range deleted {
		fmt.Fprintln(e.stdout, "  "+d)
	}
	return nil
}

// deleteInstances terminates the run's instances that are not already,
// and waits until they are.
func deleteInstances(ctx context.Context, e *env, n names, note func(string)) error {
	a := e.aws
	var di struct {
		Reservations []struct{ Instances []struct{ InstanceId string } }
	}
	if err := a.runJSON(ctx, &di, "ec2", "describe-instances", "--filters", n.tagFilter(),
		"Name=instance-state-name,Values=pending,running,stopping,stopped,shutting-down"); err != nil {
		return err
	}
	var ids []string
	for _, r := range di.Reservations {
		for _, in := range r.Instances {
			ids = append(ids, in.InstanceId)
		}
	}
	if e.dry {
		ids = []string{"<instances tagged " + tagKey + "=" + n.run + ">"}
	}
	if len(ids) > 0 {
		if _, err := a.run(ctx, append([]string{"ec2", "terminate-instances", "--instance-ids"}, ids...)...); err != nil {
			return err
		}
		if _, err := a.run(ctx, append([]string{"ec2", "wait", "instance-terminated", "--instance-ids"}, ids...)...); err != nil {
			return err
		}
		for _, id := range ids {
			note("instance " + id)
		}
	}
	return nil
}

// deleteGroupsAndKey deletes the run's security and placement groups and
// its key parameter.
func deleteGroupsAndKey(ctx context.Context, e *env, n names, note func(string)) error {
	a := e.aws
	var sgs struct{ SecurityGroups []struct{ GroupId string } }
	if err := a.runJSON(ctx, &sgs, "ec2", "describe-security-groups", "--filters", n.tagFilter()); err != nil {
		return err
	}
	if e.dry {
		sgs.SecurityGroups = append(sgs.SecurityGroups, struct{ GroupId string }{"<security group tagged " + tagKey + "=" + n.run + ">"})
	}
	for _, g := range sgs.SecurityGroups {
		if _, err := a.run(ctx, "ec2", "delete-security-group", "--group-id", g.GroupId); err != nil && awsCode(err) != "InvalidGroup.NotFound" {
			return err
		}
		note("security group " + g.GroupId)
	}

	var pgs struct{ PlacementGroups []struct{ GroupName string } }
	if err := a.runJSON(ctx, &pgs, "ec2", "describe-placement-groups", "--filters", n.tagFilter()); err != nil {
		return err
	}
	if e.dry {
		pgs.PlacementGroups = append(pgs.PlacementGroups, struct{ GroupName string }{n.run})
	}
	for _, g := range pgs.PlacementGroups {
		if _, err := a.run(ctx, "ec2", "delete-placement-group", "--group-name", g.GroupName); err != nil && awsCode(err) != "InvalidPlacementGroup.Unknown" {
			return err
		}
		note("placement group " + g.GroupName)
	}

	var params struct{ Parameters []struct{ Name string } }
	if err := a.runJSON(ctx, &params, "ssm", "describe-parameters", "--parameter-filters",
		"Key=tag:"+tagKey+",Values="+n.run); err != nil {
		return err
	}
	if e.dry {
		params.Parameters = append(params.Parameters, struct{ Name string }{n.keyParam()})
	}
	for _, p := range params.Parameters {
		if _, err := a.run(ctx, "ssm", "delete-parameter", "--name", p.Name); err != nil && awsCode(err) != "ParameterNotFound" {
			return err
		}
		note("parameter " + p.Name)
	}
	return nil
}

// roleIsOurs reports whether the IAM role named after the run carries its
// run tag (true in a dry run), and reads the bucket from the role's tag
// into n.bucket unless n gives one. A role that does not exist is not
// ours; one that exists without the tag is an error.
func roleIsOurs(ctx context.Context, e *env, n *names) (bool, error) {
	a := e.aws
	// The role carries the bucket in a tag, and proves by its run tag that
	// the role and instance profile of that name are this run's.
	var rt struct{ Tags []struct{ Key, Value string } }
	err := a.runJSON(ctx, &rt, "iam", "list-role-tags", "--role-name", n.run)
	ours := e.dry
	switch {
	case awsCode(err) == "NoSuchEntity":
	case err != nil:
		return false, err
	}
	for _, t := range rt.Tags {
		switch t.Key {
		case tagKey:
			ours = t.Value == n.run
		case "sketchcc-bucket":
			if n.bucket == "" {
				n.bucket = t.Value
			}
		}
	}
	if err == nil && !ours && !e.dry {
		return false, fmt.Errorf("IAM role %s has no tag %s=%s: not deleting a role this tool did not create", n.run, tagKey, n.run)
	}
	return ours, nil
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
