// Package fakeaws is a fake aws command for the tests of scripts/aws: it
// records every call (its arguments, and the contents and permission bits
// of the file:// arguments it read) in a JSON state file named by
// $SKETCHCC_FAKE_AWS, and keeps a model of the resources the calls create
// and delete, answering in the AWS CLI v2's shapes, error texts and exit
// statuses.
//
// The model follows what a real account does where scripts/aws can go
// wrong:
//   - EC2 and SSM state is per region (the --region of each call); IAM and
//     S3 are global. An id from another region is not found.
//   - Tags are kept and returned as they were given.
//   - Time is the number of calls answered so far (Clock). A terminated
//     instance is shutting-down for Lag.Shutdown calls, then its network
//     interface holds its security group for Lag.ENI more calls
//     ("DependencyViolation"); a new instance's SSM agent registers Lag.SSM
//     calls after launch (until then send-command answers
//     "InvalidInstanceId"). The waiters advance the clock as the real ones
//     poll, and give up after as many polls as the real ones.
//   - NoCapacity makes run-instances fail with "InsufficientInstanceCapacity"
//     in the zones it names ("us-east-1a": for every instance type), or for
//     one type in one zone ("us-east-1a/c5.4xlarge"), as real capacity is
//     per type and zone.
//
// The command is fakeaws/aws; the tests build it once and put it on PATH.
package fakeaws

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// tagKey is scripts/aws's run tag.
const tagKey = "sketchcc-run"

// Account is the account id the fake answers for.
const Account = "123456789012"

// Call is one recorded call.
type Call struct {
	Args   []string          // without --region and --output
	Region string            // the --region of the call
	Files  map[string]string // file:// argument → its contents
	Modes  map[string]uint32 // file:// argument → its permission bits
}

// Op returns "service operation", e.g. "ec2 run-instances".
func (c Call) Op() string { return c.Args[0] + " " + c.Args[1] }

// Instance is an EC2 instance of the model.
type Instance struct {
	ID, Type, IP, Zone, State, UserData string
	SG, PG, SpotRequest                 string
	Tags                                map[string]string
	// Started and Terminated are the clock of its launch and of its
	// terminate-instances call (0: not terminated).
	Started, Terminated int
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

// Param is an SSM parameter of the model.
type Param struct {
	Value string
	Tags  map[string]string
}

// Region is the EC2 and SSM state of one region.
type Region struct {
	Instances []*Instance
	SGs       map[string]map[string]string // security group id → its tags
	PGs       map[string]map[string]string // placement group name → its tags
	Params    map[string]*Param
	Spot      map[string]map[string]string // spot request id → its tags
}

// Lag is how many calls the eventually consistent parts of AWS take.
type Lag struct {
	Shutdown int // from terminate-instances to terminated
	ENI      int // from terminated to the network interface releasing its security group
	SSM      int // from run-instances to the SSM agent's registration
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
	Calls    []Call
	Regions  map[string]*Region
	Roles    map[string]*Role
	Profiles map[string]*Profile
	// Objects holds each S3 object, with the number of listings that
	// will still miss it (a result that is not there yet).
	Objects    map[string]int
	Created    []string // "kind name", in order
	Deleted    []string
	Fail       Failure
	N          int // the last id handed out
	Clock      int // calls answered so far, and the waiters' polls
	Lag        Lag
	NoCapacity []string // "ZONE" without capacity for any type, "ZONE/TYPE" for one
}

// Load reads the state file at path; an empty file is a fresh state.
func Load(path string) (*State, error) {
	s := &State{Regions: map[string]*Region{}, Roles: map[string]*Role{}, Profiles: map[string]*Profile{}, Objects: map[string]int{}}
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

// Region returns the state of region name, empty if nothing was made there.
func (s *State) Region(name string) *Region {
	r := s.Regions[name]
	if r == nil {
		r = &Region{SGs: map[string]map[string]string{}, PGs: map[string]map[string]string{},
			Params: map[string]*Param{}, Spot: map[string]map[string]string{}}
		s.Regions[name] = r
	}
	return r
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

// apiError is a failed call: the exit status and what the AWS CLI prints.
type apiError struct {
	status        int
	code, message string
}

// awsErr is an error the service returned (exit status 254).
func awsErr(code, format string, args ...any) *apiError {
	return &apiError{status: 254, code: code, message: fmt.Sprintf(format, args...)}
}

// waiterErr is a waiter that gave up (exit status 255).
func waiterErr(name, why string) *apiError {
	return &apiError{status: 255, message: "Waiter " + name + " failed: " + why}
}

// unknown is the answer to a call the fake does not model.
func unknown() (any, *apiError) {
	return nil, &apiError{status: 252, message: "fake aws: a call it does not model"}
}

// operationName spells a CLI operation as the API does:
// delete-security-group → "DeleteSecurityGroup".
func operationName(op string) string {
	var b strings.Builder
	for w := range strings.SplitSeq(op, "-") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// Run answers one aws call: args are the command line after "aws". It
// returns the AWS CLI's exit status: 0, 254 for an error the service
// returned, 255 for a waiter that gave up or a broken state file, 252 for
// a call it does not model or a bad argument.
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
	call := Call{Args: args[:len(args)-4], Region: args[len(args)-3], Files: map[string]string{}, Modes: map[string]uint32{}}
	for _, a := range call.Args {
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
	s.Clock++
	out, fail := s.answer(call)
	if err := s.Save(statePath); err != nil {
		fmt.Fprintln(stderr, "fake aws:", err)
		return 255
	}
	if fail != nil {
		if fail.code != "" {
			fmt.Fprintf(stderr, "\nAn error occurred (%s) when calling the %s operation: %s\n", fail.code, operationName(call.Args[1]), fail.message)
		} else {
			fmt.Fprintf(stderr, "\n%s\n", fail.message)
		}
		return fail.status
	}
	if out != nil {
		b, _ := json.Marshal(out)
		stdout.Write(append(b, '\n'))
	}
	return 0
}

type obj = map[string]any

// answer applies one call to the model: its JSON answer, or its failure.
func (s *State) answer(c Call) (any, *apiError) {
	if c.Op() == s.Fail.Op {
		if s.Fail.Times > 0 {
			if s.Fail.Times--; s.Fail.Times == 0 {
				s.Fail.Op = ""
			}
		}
		return nil, awsErr(cmp.Or(s.Fail.Code, "UnauthorizedOperation"), "%s", cmp.Or(s.Fail.Message, "fake"))
	}
	switch c.Args[0] {
	case "sts":
		if c.Args[1] == "get-caller-identity" {
			return obj{"Account": Account, "UserId": "AIDAFAKE", "Arn": "arn:aws:iam::" + Account + ":user/fake"}, nil
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

// tagList returns tags as the AWS CLI lists them: [{Key, Value}, …], in
// key order.
func tagList(tags map[string]string) []obj {
	ts := []obj{}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		ts = append(ts, obj{"Key": k, "Value": tags[k]})
	}
	return ts
}
