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

// launchInstances starts the main node in the first of subnets whose zone
// has capacity for it, then the workers that join it in the same subnet
// (one zone: the cluster placement group and the network between them),
// and waits until all run. It returns the main node's instance id and
// private IP. When the workers fail to start, its error says what runs.
func launchInstances(ctx context.Context, e *env, c launchConfig, common instanceArgs, subnets []subnet, uploaded []binary,
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
	mainIDs, mainIPs, at, err := startMain(ctx, e, c, common, subnets, mainBoot)
	if err != nil {
		return "", "", err
	}
	common.subnet = at.id
	mainIP = "<main node private ip>"
	if !e.dry {
		mainID, mainIP = mainIDs[0], mainIPs[0]
	}
	workerBoot.MainAddr = fmt.Sprintf("%s:%d", mainIP, gossipPort)
	ids := mainIDs
	if c.workers > 0 {
		step(e, "Starting %d workers (%s) in %s…", c.workers, c.workerType, at.zone)
		workerIDs, _, err := runInstances(ctx, e, common, "worker", c.workerType, c.workers, c.spot, 0, workerBoot)
		if err != nil && !e.dry {
			return "", "", fmt.Errorf("the workers did not start: %w\nrunning now: the main node %s (%s in %s), billed at $%s/h for the instance, "+
				"$%.4f/h with its %d GiB gp3 volume and public IPv4 address (on-demand list prices, %s)",
				err, mainID, c.mainType, at.zone, strconv.FormatFloat(onDemand[c.mainType], 'f', -1, 64),
				onDemand[c.mainType]+mainVolumePerHour(c.mainVolumeGiB)+publicIPv4PerHour, c.mainVolumeGiB, priceRegion)
		}
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

// startMain starts the main node in the first of subnets whose zone has
// capacity for it (EC2's "insufficient instance capacity" error moves on
// to the next zone), and returns its id and private IP (each in a slice,
// as runInstances) and the subnet it runs in.
func startMain(ctx context.Context, e *env, c launchConfig, ia instanceArgs, subnets []subnet, boot bootConfig) ([]string, []string, subnet, error) {
	var full []string
	for i, sn := range subnets {
		ia.subnet = sn.id
		if i == 0 {
			step(e, "Starting the main node (%s) in %s…", c.mainType, sn.zone)
		} else {
			step(e, "No %s capacity in %s; starting the main node in %s…", c.mainType, subnets[i-1].zone, sn.zone)
		}
		ids, ips, err := runInstances(ctx, e, ia, "main", c.mainType, 1, false, c.mainVolumeGiB, boot)
		if awsCode(err) != "InsufficientInstanceCapacity" {
			return ids, ips, sn, err
		}
		full = append(full, sn.zone)
	}
	tried := "every default subnet's zone tried"
	if c.subnet != "" {
		tried = "the zone of --subnet " + c.subnet + "; leave it out to try every zone"
	}
	return nil, nil, subnet{}, fmt.Errorf("aws ec2 run-instances: InsufficientInstanceCapacity: no %s capacity in %s (%s); "+
		"try again later, or another --main-type or --region", c.mainType, strings.Join(full, ", "), tried)
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
