package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/internal/cli"
)

// tagKey is the tag every resource of a run carries, with the run id as
// its value.
const tagKey = "sketchcc-run"

// amiParam is the public SSM parameter that names the latest Amazon Linux
// 2023 AMI for x86-64 in each region.
const amiParam = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"

// ssmCorePolicy lets the SSM agent on the instances run `status`'s
// commands (and `aws ssm start-session` for a shell, with no SSH port).
const ssmCorePolicy = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"

// retryDelay is the pause between run-instances attempts while a new
// instance profile is not yet visible to EC2 (IAM is eventually
// consistent); tests set it to zero.
var retryDelay = 5 * time.Second

func usageErr(err error) error { return cli.Usage(err) }

// step tells the user what launch does next, before a call that can take
// a while; a dry run prints the calls themselves instead.
func step(e *env, format string, args ...any) {
	if !e.dry {
		fmt.Fprintf(e.stdout, format+"\n", args...)
	}
}

// names derives every name of run from its id.
type names struct{ run, bucket string }

func (n names) keyParam() string     { return "/sketchcc/" + n.run + "/cluster-key" }
func (n names) prefix() string       { return "runs/" + n.run }
func (n names) s3(rel string) string { return "s3://" + n.bucket + "/" + n.prefix() + "/" + rel }

// tags is the --tag-specifications value for resource types rt.
func (n names) tags(rt ...string) string {
	var specs []map[string]any
	for _, t := range rt {
		specs = append(specs, map[string]any{"ResourceType": t,
			"Tags": []map[string]string{{"Key": tagKey, "Value": n.run}, {"Key": "Name", "Value": n.run}}})
	}
	return mustJSON(specs)
}

func (n names) tagFilter() string { return "Name=tag:" + tagKey + ",Values=" + n.run }

type launchConfig struct {
	fleet
	run, bucket, stream, subnet, sshKey, sshCIDR, binDir, mainArgs string
	yes, sshAnywhere                                               bool
}

func setupLaunch(fs *pflag.FlagSet) func(context.Context, *env) error {
	var c launchConfig
	fs.StringVar(&c.bucket, "bucket", "", "S3 bucket for the binaries, the stream and the results, under runs/RUN/ (required)")
	fs.StringVar(&c.stream, "stream", "", "stream to ingest: a local file (uploaded), s3://BUCKET/KEY, or kron:SCALE (generated on the main node) (required)")
	addFleetFlags(fs, &c.fleet)
	fs.IntVar(&c.mainVolumeGiB, "main-volume-gib", 0, "EBS volume of the main node in GiB (0: the stream's size + 16, at least 30)")
	fs.StringVar(&c.run, "run", "", "run id (default sketchcc-YYYYMMDD-HHMMSS-XXXX)")
	fs.StringVar(&c.subnet, "subnet", "", "subnet id (default: the region's default subnets, one zone after another while a zone has no capacity for the main node)")
	fs.StringVar(&c.mainArgs, "main-args", "", "extra main-node flags, e.g. '--queries 20'")
	fs.StringVar(&c.binDir, "bin-dir", "", "directory holding linux/amd64 main-node, worker and streamtool (default: go build them)")
	fs.StringVar(&c.sshKey, "ssh-key", "", "EC2 key pair name for SSH (default none: use aws ssm start-session)")
	fs.StringVar(&c.sshCIDR, "ssh-cidr", "", "the only address range SSH is admitted from, e.g. your address/32 or an IPv6 /64 (needs --ssh-key)")
	fs.BoolVar(&c.sshAnywhere, "ssh-from-anywhere", false, "allow an --ssh-cidr of 0.0.0.0/0 or ::/0: SSH open to the whole internet")
	fs.BoolVar(&c.yes, "yes", false, "do not ask for confirmation after the cost estimate")
	return func(ctx context.Context, e *env) error { return launch(ctx, e, c) }
}

func (c *launchConfig) validate() error {
	var errs []error
	if c.bucket == "" {
		errs = append(errs, errors.New("--bucket is required"))
	}
	if c.stream == "" {
		errs = append(errs, errors.New("--stream is required"))
	}
	if err := c.fleet.validate(); err != nil {
		errs = append(errs, err)
	}
	if (c.sshKey == "") != (c.sshCIDR == "") {
		errs = append(errs, errors.New("give --ssh-key and --ssh-cidr together"))
	}
	if c.sshCIDR != "" {
		if err := checkSSHRange(c.sshCIDR, c.sshAnywhere); err != nil {
			errs = append(errs, err)
		}
	}
	if strings.ContainsAny(c.mainArgs, "`$;&|<>\\'\"\n") {
		errs = append(errs, fmt.Errorf("--main-args=%q: plain flags only, no shell syntax", c.mainArgs))
	}
	if c.run != "" && !validRun(c.run) {
		errs = append(errs, fmt.Errorf("--run=%q: want 1 to 48 letters, digits and dashes", c.run))
	}
	return errors.Join(errs...)
}

// checkSSHRange checks an --ssh-cidr: an IPv4 or IPv6 prefix, and not
// every address unless anywhere is set.
func checkSSHRange(cidr string, anywhere bool) error {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || p.Addr().Is4In6() || p.Addr().Zone() != "" {
		return fmt.Errorf("--ssh-cidr=%s: want an address range such as 203.0.113.7/32 or 2001:db8::/64", cidr)
	}
	if p.Bits() == 0 && !anywhere {
		return fmt.Errorf("--ssh-cidr=%s admits SSH from every address on the internet: give your own address/32 (aws ssm start-session needs no SSH at all), or add --ssh-from-anywhere if you mean it", cidr)
	}
	return nil
}

func validRun(s string) bool {
	if len(s) == 0 || len(s) > 48 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

func newRunID() string {
	var b [2]byte
	rand.Read(b[:])
	return "sketchcc-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// streamSource is where the main node gets the stream.
type streamSource struct {
	kronScale   int    // > 0: generate kron<scale> on the main node
	localPath   string // upload this file
	s3URI       string // or read this object
	sizeBytes   int64  // known or estimated size
	bucket, key string
}

func parseStream(s string) (streamSource, error) {
	if scale, ok := strings.CutPrefix(s, "kron:"); ok {
		n, err := strconv.Atoi(scale)
		if err != nil || n < 2 || n > 20 {
			return streamSource{}, fmt.Errorf("--stream=%s: want kron:SCALE with SCALE in [2, 20]", s)
		}
		// kron17 is 38 GiB; the update count grows about 4× per scale.
		return streamSource{kronScale: n, sizeBytes: int64(38 << 30 * math.Pow(4, float64(n-17)))}, nil
	}
	if object, ok := strings.CutPrefix(s, "s3://"); ok {
		b, k, ok := strings.Cut(object, "/")
		if !ok || b == "" || k == "" {
			return streamSource{}, fmt.Errorf("--stream=%s: want s3://BUCKET/KEY", s)
		}
		return streamSource{s3URI: s, bucket: b, key: k}, nil
	}
	fi, err := os.Stat(s)
	if err != nil {
		return streamSource{}, fmt.Errorf("--stream: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return streamSource{}, fmt.Errorf("--stream=%s is not a regular file", s)
	}
	return streamSource{localPath: s, sizeBytes: fi.Size()}, nil
}

func launch(ctx context.Context, e *env, c launchConfig) error {
	if err := c.validate(); err != nil {
		return usageErr(err)
	}
	src, err := parseStream(c.stream)
	if err != nil {
		return usageErr(err)
	}
	if c.run == "" {
		c.run = newRunID()
	}
	n := names{run: c.run, bucket: c.bucket}
	a := e.aws

	// The size of an S3 stream sets the volume, so it is read before the
	// estimate; it is the only call made before the confirmation.
	if src.s3URI != "" {
		var head struct{ ContentLength int64 }
		if err := a.runJSON(ctx, &head, "s3api", "head-object", "--bucket", src.bucket, "--key", src.key); err != nil {
			return err
		}
		src.sizeBytes = head.ContentLength
	}
	if c.mainVolumeGiB == 0 {
		c.mainVolumeGiB = max(30, int((src.sizeBytes+(1<<30)-1)>>30)+16)
	}
	fmt.Fprintf(e.stdout, "Run %s in %s: 1 main node (%s) and %d workers (%s%s), stream %s\n",
		n.run, e.region, c.mainType, c.workers, c.workerType, map[bool]string{true: ", spot"}[c.spot], c.stream)
	printEstimate(e.stdout, c.fleet)
	switch {
	case e.dry:
		fmt.Fprintln(e.stdout, "Dry run: these are the calls launch would make, none is made.")
	case c.yes:
	case !confirm(e, "Launch?"):
		return errors.New("not launched")
	}

	bins, cleanup, err := binaries(ctx, e, c.binDir, src.kronScale > 0)
	if err != nil {
		return err
	}
	defer cleanup()
	err = launchSteps(ctx, e, c, n, src, bins)
	if err != nil && !e.dry {
		return fmt.Errorf("%w\nlaunch stopped; what it created is tagged %s=%s: delete it with\n  go run ./scripts/aws teardown --run %s --bucket %s --region %s",
			err, tagKey, n.run, n.run, n.bucket, e.region)
	}
	return err
}

// binaries returns the local paths of the binaries to upload, building
// them for linux/amd64 unless dir holds them.
func binaries(ctx context.Context, e *env, dir string, streamtool bool) (map[string]string, func(), error) {
	want := []string{"main-node", "worker"}
	if streamtool {
		want = append(want, "streamtool")
	}
	paths := map[string]string{}
	cleanup := func() {}
	if dir == "" {
		if e.dry {
			fmt.Fprintln(e.stdout, "# GOOS=linux GOARCH=amd64 CGO_ENABLED=0 go build -buildvcs=true ./cmd/main-node ./cmd/worker ./cmd/streamtool (local, not an AWS call)")
			for _, b := range want {
				paths[b] = "<" + b + ">"
			}
			return paths, cleanup, nil
		}
		step(e, "Building %s for linux/amd64 with go build (a minute or more the first time)…", strings.Join(want, ", "))
		tmp, err := os.MkdirTemp("", "sketchcc-bin")
		if err != nil {
			return nil, nil, err
		}
		cleanup = func() { os.RemoveAll(tmp) }
		args := []string{"build", "-buildvcs=true", "-trimpath", "-o", tmp + "/"}
		for _, b := range want {
			args = append(args, "./cmd/"+b)
		}
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("go build (run from the repository's root): %v\n%s", err, out)
		}
		e.log.Info("built the binaries", "dir", tmp)
		dir = tmp
	}
	for _, b := range want {
		p := filepath.Join(dir, b)
		if _, err := os.Stat(p); err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("--bin-dir: %w", err)
		}
		paths[b] = p
	}
	return paths, cleanup, nil
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// launchSteps makes launch's AWS calls in order.
func launchSteps(ctx context.Context, e *env, c launchConfig, n names, src streamSource, bins map[string]string) error {
	at, err := lookUp(ctx, e, c)
	if err != nil {
		return err
	}
	uploaded, streamURI, err := upload(ctx, e, n, src, bins)
	if err != nil {
		return err
	}
	step(e, "Storing the cluster key in SSM as %s…", n.keyParam())
	if err := putKey(ctx, e, n); err != nil {
		return err
	}
	step(e, "Creating the IAM role and instance profile %s…", n.run)
	if err := createRole(ctx, e, n, at.account, src); err != nil {
		return err
	}
	step(e, "Creating the placement group and the security group %s…", n.run)
	sg, err := createGroups(ctx, e, c, n, at.vpc)
	if err != nil {
		return err
	}
	common := instanceArgs{image: at.image, sg: sg, n: n, sshKey: c.sshKey}
	mainID, mainIP, err := launchInstances(ctx, e, c, common, at.subnets, uploaded, streamURI, src)
	if err != nil {
		return err
	}
	if !e.dry {
		fmt.Fprintf(e.stdout, "Launched run %s: main node %s (%s), %d workers.\n", n.run, mainID, mainIP, c.workers)
	}
	fmt.Fprintf(e.stdout, "Next:\n  go run ./scripts/aws status   --run %s --region %s\n"+
		"  go run ./scripts/aws fetch    --run %s --bucket %s --region %s --wait 2h\n"+
		"  go run ./scripts/aws teardown --run %s --bucket %s --region %s\n",
		n.run, e.region, n.run, n.bucket, e.region, n.run, n.bucket, e.region)
	return nil
}

// site is where a run launches: the account, the AMI, the subnets to try
// in order and their VPC (placeholders in a dry run).
type site struct {
	account, image, vpc string
	subnets             []subnet
}

// subnet is a subnet and its availability zone.
type subnet struct{ id, zone string }

// lookUp reads the account, the latest AMI of amiParam and the subnets:
// the region's default ones, one per availability zone, in zone order,
// unless --subnet gives the only one.
func lookUp(ctx context.Context, e *env, c launchConfig) (site, error) {
	a := e.aws
	at := site{account: "<account>", image: "<ami from " + amiParam + ">", vpc: "<vpc of the subnet>",
		subnets: []subnet{{"<subnet>", "<zone>"}}}
	var ident struct{ Account string }
	if err := a.runJSON(ctx, &ident, "sts", "get-caller-identity"); err != nil {
		return site{}, err
	}
	var ami struct{ Parameters []struct{ Value string } }
	if err := a.runJSON(ctx, &ami, "ssm", "get-parameters", "--names", amiParam); err != nil {
		return site{}, err
	}
	if !e.dry {
		if len(ami.Parameters) == 0 || ami.Parameters[0].Value == "" {
			return site{}, fmt.Errorf("aws ssm get-parameters --names %s: no AMI in region %s", amiParam, e.region)
		}
		at.account, at.image = ident.Account, ami.Parameters[0].Value
	}
	var subnets struct {
		Subnets []struct{ SubnetId, VpcId, AvailabilityZone string }
	}
	args := []string{"ec2", "describe-subnets", "--filters", "Name=default-for-az,Values=true"}
	if c.subnet != "" {
		args = []string{"ec2", "describe-subnets", "--subnet-ids", c.subnet}
	}
	if err := a.runJSON(ctx, &subnets, args...); err != nil {
		return site{}, err
	}
	if !e.dry {
		if len(subnets.Subnets) == 0 {
			return site{}, fmt.Errorf("aws ec2 describe-subnets: no default subnet in %s; give --subnet", e.region)
		}
		at.vpc, at.subnets = subnets.Subnets[0].VpcId, nil
		for _, sn := range subnets.Subnets {
			at.subnets = append(at.subnets, subnet{sn.SubnetId, sn.AvailabilityZone})
		}
		slices.SortFunc(at.subnets, func(a, b subnet) int { return strings.Compare(a.zone, b.zone) })
	}
	return at, nil
}

// upload copies the binaries and, from a local file, the stream to S3,
// with the checksums the instances verify. It returns the binaries and
// the stream's S3 URI.
func upload(ctx context.Context, e *env, n names, src streamSource, bins map[string]string) ([]binary, string, error) {
	step(e, "Uploading the binaries%s to s3://%s/%s/…", map[bool]string{true: " and the stream"}[src.localPath != ""], n.bucket, n.prefix())
	var uploaded []binary
	for _, b := range []string{"main-node", "worker", "streamtool"} {
		p, ok := bins[b]
		if !ok {
			continue
		}
		sum := "<sha256 of " + b + ">"
		if !e.dry {
			var err error
			if sum, err = sha256File(p); err != nil {
				return nil, "", err
			}
		}
		uri := n.s3("bin/" + b)
		if _, err := e.aws.run(ctx, "s3", "cp", "--only-show-errors", p, uri); err != nil {
			return nil, "", err
		}
		uploaded = append(uploaded, binary{Name: b, URI: uri, SHA256: sum})
	}
	streamURI := src.s3URI
	if src.localPath != "" {
		streamURI = n.s3("stream.bin")
		if _, err := e.aws.run(ctx, "s3", "cp", "--only-show-errors", src.localPath, streamURI); err != nil {
			return nil, "", err
		}
	}
	return uploaded, streamURI, nil
}

// createGroups creates the run's placement group and its security group
// in vpc, open between members only (and to --ssh-cidr on port 22), and
// returns the security group's id.
func createGroups(ctx context.Context, e *env, c launchConfig, n names, vpc string) (string, error) {
	a := e.aws
	if _, err := a.run(ctx, "ec2", "create-placement-group", "--group-name", n.run, "--strategy", "cluster",
		"--tag-specifications", n.tags("placement-group")); err != nil {
		return "", err
	}
	var sg struct{ GroupId string }
	if err := a.runJSON(ctx, &sg, "ec2", "create-security-group", "--group-name", n.run,
		"--description", "sketchcc run "+n.run+": gossip and data plane between members only",
		"--vpc-id", vpc, "--tag-specifications", n.tags("security-group")); err != nil {
		return "", err
	}
	if e.dry {
		sg.GroupId = "<security group id>"
	}
	self := []map[string]string{{"GroupId": sg.GroupId}}
	perms := []map[string]any{
		{"IpProtocol": "tcp", "FromPort": gossipPort, "ToPort": dataPort, "UserIdGroupPairs": self},
		{"IpProtocol": "udp", "FromPort": gossipPort, "ToPort": gossipPort, "UserIdGroupPairs": self},
		{"IpProtocol": "tcp", "FromPort": mainMetricsPort, "ToPort": workerMetricsPort, "UserIdGroupPairs": self},
	}
	if c.sshCIDR != "" {
		// validate has parsed it; EC2 wants the network address, and IPv6
		// ranges in their own field.
		p := netip.MustParsePrefix(c.sshCIDR).Masked()
		ranges, key := "IpRanges", "CidrIp"
		if p.Addr().Is6() {
			ranges, key = "Ipv6Ranges", "CidrIpv6"
		}
		perms = append(perms, map[string]any{"IpProtocol": "tcp", "FromPort": 22, "ToPort": 22,
			ranges: []map[string]string{{key: p.String(), "Description": "SSH from the launcher"}}})
	}
	if _, err := a.run(ctx, "ec2", "authorize-security-group-ingress", "--group-id", sg.GroupId,
		"--ip-permissions", mustJSON(perms)); err != nil {
		return "", err
	}
	return sg.GroupId, nil
}
