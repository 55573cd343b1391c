// Package fakeaws is a fake aws command for the tests of scripts/aws: it
// records every call (its arguments, and the contents and permission bits
// of the file:// arguments it read) in a JSON state file named by
// $SKETCHCC_FAKE_AWS, and keeps a small model of the resources the calls
// create and delete, answering with canned JSON shaped like the AWS CLI's.
// The command is fakeaws/aws; the tests build it once and put it on PATH.
package fakeaws

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// tagKey is scripts/aws's run tag.
const tagKey = "sketchcc-run"

// Call is one recorded call.
type Call struct {
	Args  []string          // without --region and --output
	Files map[string]string // file:// argument → its contents
	Modes map[string]uint32 // file:// argument → its permission bits
}

// Op returns "service operation", e.g. "ec2 run-instances".
func (c Call) Op() string { return c.Args[0] + " " + c.Args[1] }

// Instance is an EC2 instance of the model.
type Instance struct {
	ID, Type, IP, State, UserData string
	Tags                          map[string]string
}

// Role is an IAM role of the model.
type Role struct {
	Tags     map[string]string
	Policies []string
	Attached []string
}

// Profile is an IAM instance profile of the model.
type Profile struct {
	Roles []string
	Tags  map[string]string
}

// Failure makes the calls Op ("service op") fail with the AWS error code
// Code (default "UnauthorizedOperation") and message Message (default
// "fake"); Times > 0 makes them fail only that many more times.
type Failure struct {
	Op, Code, Message string
	Times             int
}

// State is the whole fake: the calls so far and the resources that exist.
type State struct {
	Calls     []Call
	Instances []*Instance
	SGs       map[string]string // id → run tag
	PGs       map[string]string // name → run tag
	Params    map[string]map[string]string
	Roles     map[string]*Role
	Profiles  map[string]*Profile
	// Objects holds each S3 object, with the number of listings that
	// will still miss it (a result that is not there yet).
	Objects map[string]int
	Created []string // "kind name", in order
	Deleted []string
	Fail    Failure
	N       int // the last id handed out
}

// Load reads the state file at path; an empty file is a fresh state.
func Load(path string) (*State, error) {
	s := &State{SGs: map[string]string{}, PGs: map[string]string{}, Params: map[string]map[string]string{},
		Roles: map[string]*Role{}, Profiles: map[string]*Profile{}, Objects: map[string]int{}}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Save writes s to path.
func (s *State) Save(path string) error {
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// Flag returns the value after name in args, or "".
func Flag(args []string, name string) string {
	i := slices.Index(args, name)
	if i < 0 || i+1 >= len(args) {
		return ""
	}
	return args[i+1]
}

// flagList returns the values after name up to the next --flag.
func flagList(args []string, name string) []string {
	i := slices.Index(args, name)
	if i < 0 {
		return nil
	}
	var vs []string
	for _, a := range args[i+1:] {
		if strings.HasPrefix(a, "--") {
			break
		}
		vs = append(vs, a)
	}
	return vs
}

// tagSpecTags reads --tag-specifications' tags of the first resource type.
func tagSpecTags(args []string) map[string]string {
	var specs []struct{ Tags []struct{ Key, Value string } }
	json.Unmarshal([]byte(Flag(args, "--tag-specifications")), &specs)
	tags := map[string]string{}
	if len(specs) > 0 {
		for _, t := range specs[0].Tags {
			tags[t.Key] = t.Value
		}
	}
	return tags
}

// iamTags reads --tags Key=k,Value=v … into a map.
func iamTags(args []string) map[string]string {
	tags := map[string]string{}
	for _, t := range flagList(args, "--tags") {
		k, v, _ := strings.Cut(strings.TrimPrefix(t, "Key="), ",Value=")
		tags[k] = v
	}
	return tags
}

// filterValues reads Name=N,Values=a,b filters into N → values.
func filterValues(args []string, flagName string) map[string][]string {
	m := map[string][]string{}
	for _, f := range flagList(args, flagName) {
		var name string
		for kv := range strings.SplitSeq(f, ",") {
			if v, ok := strings.CutPrefix(kv, "Values="); ok {
				m[name] = append(m[name], v)
			} else if strings.HasPrefix(kv, "Name=") || strings.HasPrefix(kv, "Key=") {
				_, name, _ = strings.Cut(kv, "=")
			} else {
				m[name] = append(m[name], kv)
			}
		}
	}
	return m
}

// Run answers one aws call: args are the command line after "aws". It
// returns the exit status: 0, 254 for an AWS error (the message names its
// code, as the AWS CLI does), 252 for a call it does not know or a bad
// argument, 255 for a broken state file.
func Run(statePath string, args []string, stdout, stderr io.Writer) int {
	s, err := Load(statePath)
	if err != nil {
		fmt.Fprintln(stderr, "fake aws:", err)
		return 255
	}
	// The tool adds --region R --output json to every call.
	if n := len(args); n < 6 || args[n-4] != "--region" || args[n-2] != "--output" || args[n-1] != "json" {
		fmt.Fprintf(stderr, "fake aws: call without --region R --output json: %q\n", args)
		return 252
	}
	args = args[:len(args)-4]
	call := Call{Args: args, Files: map[string]string{}, Modes: map[string]uint32{}}
	for _, a := range args {
		if p, ok := strings.CutPrefix(a, "file://"); ok {
			b, err := os.ReadFile(p)
			if err != nil {
				fmt.Fprintf(stderr, "\nError parsing parameter: Unable to load paramfile %s: %v\n", a, err)
				return 252
			}
			fi, _ := os.Stat(p)
			call.Files[a], call.Modes[a] = string(b), uint32(fi.Mode().Perm())
		}
	}
	s.Calls = append(s.Calls, call)
	out, code, msg := s.answer(call)
	if err := s.Save(statePath); err != nil {
		fmt.Fprintln(stderr, "fake aws:", err)
		return 255
	}
	if code != 0 {
		if !strings.Contains(msg, ") when calling") {
			msg += ") when calling the " + call.Args[1] + " operation: fake"
		}
		fmt.Fprintf(stderr, "\nAn error occurred (%s\n", msg)
		return code
	}
	if out != nil {
		b, _ := json.Marshal(out)
		stdout.Write(append(b, '\n'))
	}
	return 0
}

type obj = map[string]any

// unknown is the answer to a call the fake does not know.
func unknown() (any, int, string) { return nil, 252, "FakeUnknownCall" }

// answer applies one call to the model: its JSON answer, or an exit
// status and an AWS error code.
func (s *State) answer(c Call) (any, int, string) {
	if c.Op() == s.Fail.Op {
		if s.Fail.Times > 0 {
			if s.Fail.Times--; s.Fail.Times == 0 {
				s.Fail.Op = ""
			}
		}
		code := cmp.Or(s.Fail.Code, "UnauthorizedOperation")
		return nil, 254, code + ") when calling the " + c.Args[1] + " operation: " + cmp.Or(s.Fail.Message, "fake")
	}
	switch c.Args[0] {
	case "sts":
		if c.Args[1] == "get-caller-identity" {
			return obj{"Account": "123456789012"}, 0, ""
		}
	case "s3", "s3api":
		return s.answerS3(c)
	case "ssm":
		return s.answerSSM(c)
	case "iam":
		if strings.Contains(c.Args[1], "instance-profile") {
			return s.answerProfile(c)
		}
		return s.answerRole(c)
	case "ec2":
		return s.answerEC2(c)
	}
	return unknown()
}

// newID returns a new resource id: prefix-0001, prefix-0002, …
func (s *State) newID(prefix string) string {
	s.N++
	return fmt.Sprintf("%s-%04d", prefix, s.N)
}

func (s *State) answerS3(c Call) (any, int, string) {
	a := c.Args
	switch c.Op() {
	case "s3 cp":
		src, dst := a[len(a)-2], a[len(a)-1]
		if strings.HasPrefix(dst, "s3://") {
			s.Objects[dst] = 0
			s.Created = append(s.Created, "object "+dst)
			return nil, 0, ""
		}
		if _, ok := s.Objects[src]; !ok {
			return nil, 1, "404"
		}
		os.WriteFile(dst, []byte(`{"components": 101}`+"\n"), 0o644)
		return nil, 0, ""
	case "s3 rm":
		prefix := a[len(a)-1]
		for o := range s.Objects {
			if strings.HasPrefix(o, prefix) {
				delete(s.Objects, o)
				s.Deleted = append(s.Deleted, "object "+o)
			}
		}
		return nil, 0, ""
	case "s3api head-object":
		return obj{"ContentLength": 158 << 20}, 0, ""
	case "s3api list-objects-v2":
		bucket := "s3://" + Flag(a, "--bucket") + "/"
		var cs []obj
		for o, missed := range s.Objects {
			if missed > 0 {
				s.Objects[o]--
				continue
			}
			if key, ok := strings.CutPrefix(o, bucket); ok && strings.HasPrefix(key, Flag(a, "--prefix")) {
				cs = append(cs, obj{"Key": key})
			}
		}
		return obj{"Contents": cs}, 0, ""
	}
	return unknown()
}

func (s *State) answerSSM(c Call) (any, int, string) {
	a := c.Args
	switch c.Args[1] {
	case "get-parameters":
		return obj{"Parameters": []obj{{"Name": Flag(a, "--names"), "Value": "ami-0fake"}}}, 0, ""
	case "put-parameter":
		var in struct {
			Name, Value, Type string
			Tags              []struct{ Key, Value string }
		}
		for _, f := range c.Files {
			json.Unmarshal([]byte(f), &in)
		}
		if in.Type != "SecureString" || in.Name == "" || len(in.Tags) == 0 {
			return nil, 252, "ValidationException"
		}
		s.Params[in.Name] = map[string]string{"Value": in.Value, in.Tags[0].Key: in.Tags[0].Value}
		s.Created = append(s.Created, "parameter "+in.Name)
		return obj{"Version": 1, "Tier": "Standard"}, 0, ""
	case "describe-parameters":
		f := filterValues(a, "--parameter-filters")
		var ps []obj
		for name, p := range s.Params {
			for k, v := range f {
				if t, ok := strings.CutPrefix(k, "tag:"); ok && slices.Contains(v, p[t]) {
					ps = append(ps, obj{"Name": name})
				}
			}
		}
		return obj{"Parameters": ps}, 0, ""
	case "delete-parameter":
		if _, ok := s.Params[Flag(a, "--name")]; !ok {
			return nil, 254, "ParameterNotFound"
		}
		delete(s.Params, Flag(a, "--name"))
		s.Deleted = append(s.Deleted, "parameter "+Flag(a, "--name"))
		return obj{}, 0, ""
	case "wait":
		return nil, 0, ""
	case "send-command":
		return obj{"Command": obj{"CommandId": "cmd-0fake"}}, 0, ""
	case "get-command-invocation":
		return obj{"StandardOutputContent": "sketchcc_stream_updates 4e+06\nsketchcc_updates_read_total 1e+06\n" +
			"sketchcc_worker_connected{worker=\"w1\"} 1\nsketchcc_worker_connected{worker=\"w2\"} 0\nsketchcc_workers_connected 1\nmain-node service: activating\n"}, 0, ""
	}
	return unknown()
}

// answerRole answers the iam calls on roles, and iam wait.
func (s *State) answerRole(c Call) (any, int, string) {
	a := c.Args
	name := Flag(a, "--role-name")
	switch c.Args[1] {
	case "wait":
		return nil, 0, ""
	case "create-role":
		s.Roles[name] = &Role{Tags: iamTags(a)}
		s.Created = append(s.Created, "role "+name)
		return obj{"Role": obj{"RoleName": name}}, 0, ""
	case "put-role-policy", "attach-role-policy", "list-role-tags", "delete-role-policy", "detach-role-policy", "delete-role":
	default:
		return unknown()
	}
	r := s.Roles[name]
	if r == nil {
		return nil, 254, "NoSuchEntity"
	}
	switch c.Args[1] {
	case "put-role-policy":
		r.Policies = append(r.Policies, Flag(a, "--policy-name"))
	case "attach-role-policy":
		r.Attached = append(r.Attached, Flag(a, "--policy-arn"))
	case "list-role-tags":
		return obj{"Tags": tagList(r.Tags)}, 0, ""
	case "delete-role-policy":
		r.Policies = slices.DeleteFunc(r.Policies, func(p string) bool { return p == Flag(a, "--policy-name") })
	case "detach-role-policy":
		r.Attached = slices.DeleteFunc(r.Attached, func(p string) bool { return p == Flag(a, "--policy-arn") })
	case "delete-role":
		for _, p := range s.Profiles {
			if slices.Contains(p.Roles, name) {
				return nil, 254, "DeleteConflict"
			}
		}
		if len(r.Policies)+len(r.Attached) > 0 {
			return nil, 254, "DeleteConflict"
		}
		delete(s.Roles, name)
		s.Deleted = append(s.Deleted, "role "+name)
	}
	return nil, 0, ""
}

// answerProfile answers the iam calls on instance profiles.
func (s *State) answerProfile(c Call) (any, int, string) {
	a := c.Args
	name := Flag(a, "--instance-profile-name")
	if c.Args[1] == "create-instance-profile" {
		s.Profiles[name] = &Profile{Roles: []string{}, Tags: iamTags(a)}
		s.Created = append(s.Created, "instance-profile "+name)
		return obj{}, 0, ""
	}
	p, ok := s.Profiles[name]
	if !ok {
		return nil, 254, "NoSuchEntity"
	}
	switch c.Args[1] {
	case "add-role-to-instance-profile":
		p.Roles = append(p.Roles, Flag(a, "--role-name"))
	case "remove-role-from-instance-profile":
		p.Roles = slices.DeleteFunc(p.Roles, func(r string) bool { return r == Flag(a, "--role-name") })
	case "list-instance-profile-tags":
		return obj{"Tags": tagList(p.Tags)}, 0, ""
	case "delete-instance-profile":
		if len(p.Roles) > 0 {
			return nil, 254, "DeleteConflict"
		}
		delete(s.Profiles, name)
		s.Deleted = append(s.Deleted, "instance-profile "+name)
	default:
		return unknown()
	}
	return nil, 0, ""
}

// tagList returns tags as the AWS CLI lists them: [{Key, Value}, …].
func tagList(tags map[string]string) []obj {
	var ts []obj
	for k, v := range tags {
		ts = append(ts, obj{"Key": k, "Value": v})
	}
	return ts
}

func (s *State) answerEC2(c Call) (any, int, string) {
	a := c.Args
	switch c.Args[1] {
	case "wait":
		return nil, 0, ""
	case "describe-subnets":
		return obj{"Subnets": []obj{{"SubnetId": "subnet-0fake", "VpcId": "vpc-0fake", "AvailabilityZone": "us-east-1a"}}}, 0, ""
	case "run-instances":
		return s.runInstances(c), 0, ""
	case "describe-instances":
		return s.describeInstances(a), 0, ""
	case "terminate-instances":
		for _, want := range flagList(a, "--instance-ids") {
			for _, in := range s.Instances {
				if in.ID == want && in.State != "terminated" {
					in.State = "terminated"
					s.Deleted = append(s.Deleted, "instance "+in.ID)
				}
			}
		}
		return obj{}, 0, ""
	case "create-placement-group":
		s.PGs[Flag(a, "--group-name")] = tagSpecTags(a)[tagKey]
		s.Created = append(s.Created, "placement-group "+Flag(a, "--group-name"))
		return obj{}, 0, ""
	case "create-security-group":
		g := s.newID("sg")
		s.SGs[g] = tagSpecTags(a)[tagKey]
		s.Created = append(s.Created, "security-group "+g)
		return obj{"GroupId": g}, 0, ""
	case "authorize-security-group-ingress":
		if _, ok := s.SGs[Flag(a, "--group-id")]; !ok {
			return nil, 254, "InvalidGroup.NotFound"
		}
		return obj{"Return": true}, 0, ""
	case "describe-security-groups":
		return obj{"SecurityGroups": taggedGroups(s.SGs, "GroupId", a)}, 0, ""
	case "describe-placement-groups":
		return obj{"PlacementGroups": taggedGroups(s.PGs, "GroupName", a)}, 0, ""
	case "delete-security-group", "delete-placement-group":
		for _, in := range s.Instances {
			if in.State != "terminated" {
				return nil, 254, "DependencyViolation"
			}
		}
		if g := Flag(a, "--group-id"); g != "" {
			delete(s.SGs, g)
			s.Deleted = append(s.Deleted, "security-group "+g)
		} else {
			delete(s.PGs, Flag(a, "--group-name"))
			s.Deleted = append(s.Deleted, "placement-group "+Flag(a, "--group-name"))
		}
		return nil, 0, ""
	}
	return unknown()
}

// taggedGroups lists the groups of groups (id or name → run tag) whose run
// tag the --filters of args select, as {key: id or name}.
func taggedGroups(groups map[string]string, key string, args []string) []obj {
	run := filterValues(args, "--filters")["tag:"+tagKey]
	var gs []obj
	for g, r := range groups {
		if slices.Contains(run, r) {
			gs = append(gs, obj{key: g})
		}
	}
	return gs
}

func (s *State) runInstances(c Call) obj {
	var n int
	fmt.Sscan(Flag(c.Args, "--count"), &n)
	var ins []obj
	for range n {
		in := &Instance{ID: s.newID("i"), Type: Flag(c.Args, "--instance-type"), State: "running",
			UserData: c.Files[Flag(c.Args, "--user-data")], Tags: tagSpecTags(c.Args)}
		in.IP = fmt.Sprintf("10.0.0.%d", len(s.Instances)+10)
		s.Instances = append(s.Instances, in)
		s.Created = append(s.Created, "instance "+in.ID)
		ins = append(ins, obj{"InstanceId": in.ID, "PrivateIpAddress": in.IP})
	}
	return obj{"Instances": ins}
}

func (s *State) describeInstances(args []string) obj {
	f := filterValues(args, "--filters")
	var ins []obj
	for _, in := range s.Instances {
		if !slices.Contains(f["tag:"+tagKey], in.Tags[tagKey]) {
			continue
		}
		if st, ok := f["instance-state-name"]; ok && !slices.Contains(st, in.State) {
			continue
		}
		ins = append(ins, obj{"InstanceId": in.ID, "InstanceType": in.Type, "PrivateIpAddress": in.IP,
			"State": obj{"Name": in.State}, "Tags": tagList(in.Tags)})
	}
	return obj{"Reservations": []obj{{"Instances": ins}}}
}
