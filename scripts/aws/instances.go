package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// launchInstances starts the main node, then the workers that join it,
// and waits until all run. It returns the main node's instance id and
// private IP.
func launchInstances(ctx context.Context, e *env, c launchConfig, common instanceArgs, uploaded []binary,
	streamURI string, src streamSource) (mainID, mainIP string, err error) {
	n := common.n
	mainBoot := bootConfig{Run: n.run, Region: e.region, KeyParam: n.keyParam(), StreamURI: streamURI,
		Workers: strconv.Itoa(c.workers), OutPrefix: n.s3("out"), MainArgs: c.mainArgs}
	workerBoot := bootConfig{Run: n.run, Region: e.region, KeyParam: n.keyParam()}
	for _, b := range uploaded {
		if b.Name == "worker" {
			workerBoot.Binaries = append(workerBoot.Binaries, b)
		} else {
			mainBoot.Binaries = append(mainBoot.Binaries, b)
		}
	}
	if src.kronScale > 0 {
		mainBoot.KronScale = strconv.Itoa(src.kronScale)
	}
	if src.kronScale >= 16 {
		// As results/lib.sh: 2^30 updates (8 GiB) a pass, 5 passes for
		// kron17 instead of the default's 34.
		mainBoot.KronPass = strconv.Itoa(1 << 30)
	}
	step(e, "Starting the main node (%s)…", c.mainType)
	mainIDs, mainIPs, err := runInstances(ctx, e, common, "main", c.mainType, 1, false, c.mainVolumeGiB, mainBoot)
	if err != nil {
		return "", "", err
	}
	mainIP = "<main node private ip>"
	if !e.dry {
		mainID, mainIP = mainIDs[0], mainIPs[0]
	}
	workerBoot.MainAddr = fmt.Sprintf("%s:%d", mainIP, gossipPort)
	ids := mainIDs
	if c.workers > 0 {
		step(e, "Starting %d workers (%s)…", c.workers, c.workerType)
		workerIDs, _, err := runInstances(ctx, e, common, "worker", c.workerType, c.workers, c.spot, 0, workerBoot)
		if err != nil {
			return "", "", err
		}
		ids = append(ids, workerIDs...)
	}
	if e.dry {
		ids = []string{"<instance ids>"}
	}
	step(e, "Waiting until the %d instances run…", len(ids))
	if _, err := e.aws.run(ctx, append([]string{"ec2", "wait", "instance-running", "--instance-ids"}, ids...)...); err != nil {
		return "", "", err
	}
	return mainID, mainIP, nil
}

type instanceArgs struct {
	image, subnet, sg, sshKey string
	n                         names
}

// runInstances starts count instances of one role and returns their ids
// and private addresses. It retries while EC2 does not yet see the new
// instance profile.
func runInstances(ctx context.Context, e *env, ia instanceArgs, role, typ string, count int, spot bool, volumeGiB int, boot bootConfig) ([]string, []string, error) {
	ud, err := userData(boot)
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "sketchcc-ud")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	udPath := filepath.Join(dir, role+".yaml")
	if err := os.WriteFile(udPath, []byte(ud), 0o600); err != nil {
		return nil, nil, err
	}
	if e.dry {
		fmt.Fprintf(e.stdout, "# user-data of the %s, in the temporary file %s:\n", role, udPath)
		for _, l := range strings.Split(strings.TrimRight(ud, "\n"), "\n") {
			fmt.Fprintln(e.stdout, "#   "+l)
		}
	}
	tags := []map[string]any{}
	types := []string{"instance", "volume"}
	if spot {
		types = append(types, "spot-instances-request")
	}
	for _, rt := range types {
		tags = append(tags, map[string]any{"ResourceType": rt, "Tags": []map[string]string{
			{"Key": tagKey, "Value": ia.n.run}, {"Key": "Name", "Value": ia.n.run + "-" + role}, {"Key": "sketchcc-role", "Value": role}}})
	}
	args := []string{"ec2", "run-instances", "--image-id", ia.image, "--instance-type", typ,
		"--count", strconv.Itoa(count), "--subnet-id", ia.subnet, "--security-group-ids", ia.sg,
		"--placement", mustJSON(map[string]string{"GroupName": ia.n.run}),
		"--iam-instance-profile", mustJSON(map[string]string{"Name": ia.n.run}),
		"--user-data", "file://" + udPath, "--tag-specifications", mustJSON(tags),
		"--metadata-options", mustJSON(map[string]any{"HttpTokens": "required"})}
	if volumeGiB > 0 {
		args = append(args, "--block-device-mappings", mustJSON([]map[string]any{{"DeviceName": "/dev/xvda",
			"Ebs": map[string]any{"VolumeSize": volumeGiB, "VolumeType": "gp3", "Iops": mainIOPS, "Throughput": mainThroughput, "DeleteOnTermination": true}}}))
	}
	if spot {
		args = append(args, "--instance-market-options", mustJSON(map[string]any{"MarketType": "spot",
			"SpotOptions": map[string]string{"SpotInstanceType": "one-time", "InstanceInterruptionBehavior": "terminate"}}))
	}
	if ia.sshKey != "" {
		args = append(args, "--key-name", ia.sshKey)
	}
	var res struct {
		Instances []struct{ InstanceId, PrivateIpAddress string }
	}
	for attempt := 1; ; attempt++ {
		err = e.aws.runJSON(ctx, &res, args...)
		if err == nil || attempt == 12 || awsCode(err) != "InvalidParameterValue" || !strings.Contains(err.Error(), "iamInstanceProfile") {
			break
		}
		e.log.Info("the instance profile is not visible to EC2 yet; retrying", "attempt", attempt)
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(retryDelay):
		}
	}
	if err != nil {
		return nil, nil, err
	}
	var ids, ips []string
	for _, in := range res.Instances {
		ids = append(ids, in.InstanceId)
		ips = append(ips, in.PrivateIpAddress)
	}
	if !e.dry && len(ids) != count {
		return nil, nil, fmt.Errorf("aws ec2 run-instances: asked for %d %s instances, got %d", count, role, len(ids))
	}
	if !e.dry {
		e.log.Info("instances started", "role", role, "type", typ, "instances", ids)
	}
	return ids, ips, nil
}
