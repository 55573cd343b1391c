package fakeaws

// EC2, per region: three zones with a default subnet each, instances whose
// state follows the clock, groups whose tags are kept as given.

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
)

// waiterPolls is how many times the AWS CLI's EC2 waiters poll before
// they give up (every 15 s, 40 times).
const waiterPolls = 40

// Zones returns the availability zones of region, each with one default
// subnet.
func Zones(region string) []string { return []string{region + "a", region + "b", region + "c"} }

// SubnetOf returns the id of zone's default subnet.
func SubnetOf(zone string) string { return "subnet-0" + strings.ReplaceAll(zone, "-", "") }

func vpcOf(region string) string { return "vpc-0" + strings.ReplaceAll(region, "-", "") }

func (r *Region) instance(id string) *Instance {
	for _, in := range r.Instances {
		if in.ID == id {
			return in
		}
	}
	return nil
}

// tick moves every instance of every region to its state at the clock.
func (s *State) tick() {
	for _, r := range s.Regions {
		for _, in := range r.Instances {
			switch {
			case in.State == "pending" && s.Clock > in.Started:
				in.State = "running"
			case in.State == "shutting-down" && s.Clock >= in.Terminated+s.Lag.Shutdown:
				in.State = "terminated"
			}
		}
	}
}

// holdsGroup reports whether in's network interface still holds its
// security group: until Lag.ENI calls after it terminated.
func (s *State) holdsGroup(in *Instance) bool {
	return in.State != "terminated" || s.Clock < in.Terminated+s.Lag.Shutdown+s.Lag.ENI
}

func (s *State) answerEC2(c Call) (any, *apiError) {
	s.tick()
	a := c.Args
	r := s.Region(c.Region)
	switch c.Args[1] {
	case "wait":
		return s.wait(c)
	case "describe-subnets":
		return describeSubnets(c)
	case "run-instances":
		return s.runInstances(c)
	case "describe-instances":
		return s.describeInstances(c)
	case "terminate-instances":
		return s.terminate(c)
	case "create-placement-group":
		name := Flag(a, "--group-name")
		if _, ok := r.PGs[name]; ok {
			return nil, awsErr("InvalidPlacementGroup.Duplicate", "The placement group '%s' already exists.", name)
		}
		r.PGs[name] = tagSpec(a, "placement-group")
		s.Created = append(s.Created, "placement-group "+name)
		return obj{"PlacementGroup": obj{"GroupName": name, "State": "available", "Strategy": Flag(a, "--strategy")}}, nil
	case "create-security-group":
		if v := Flag(a, "--vpc-id"); v != vpcOf(c.Region) {
			return nil, awsErr("InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", v)
		}
		g := s.newID("sg")
		r.SGs[g] = tagSpec(a, "security-group")
		s.Created = append(s.Created, "security-group "+g)
		return obj{"GroupId": g}, nil
	case "authorize-security-group-ingress":
		return s.authorize(c)
	case "describe-security-groups":
		return obj{"SecurityGroups": taggedGroups(r.SGs, "GroupId", a)}, nil
	case "describe-placement-groups":
		return obj{"PlacementGroups": taggedGroups(r.PGs, "GroupName", a)}, nil
	case "delete-security-group":
		g := Flag(a, "--group-id")
		if _, ok := r.SGs[g]; !ok {
			return nil, awsErr("InvalidGroup.NotFound", "The security group '%s' does not exist", g)
		}
		for _, in := range r.Instances {
			if in.SG == g && s.holdsGroup(in) {
				return nil, awsErr("DependencyViolation", "resource %s has a dependent object", g)
			}
		}
		delete(r.SGs, g)
		s.Deleted = append(s.Deleted, "security-group "+g)
		return nil, nil
	case "delete-placement-group":
		name := Flag(a, "--group-name")
		if _, ok := r.PGs[name]; !ok {
			return nil, awsErr("InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown.", name)
		}
		for _, in := range r.Instances {
			if in.PG == name && in.State != "terminated" {
				return nil, awsErr("InvalidPlacementGroup.InUse", "The placement group '%s' is in use and may not be deleted.", name)
			}
		}
		delete(r.PGs, name)
		s.Deleted = append(s.Deleted, "placement-group "+name)
		return nil, nil
	}
	return unknown()
}

func describeSubnets(c Call) (any, *apiError) {
	var subnets []obj
	for _, z := range Zones(c.Region) {
		subnets = append(subnets, obj{"SubnetId": SubnetOf(z), "VpcId": vpcOf(c.Region), "AvailabilityZone": z, "DefaultForAz": true})
	}
	if want := flagList(c.Args, "--subnet-ids"); len(want) > 0 {
		var picked []obj
		for _, id := range want {
			i := slices.IndexFunc(subnets, func(s obj) bool { return s["SubnetId"] == id })
			if i < 0 {
				return nil, awsErr("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", id)
			}
			picked = append(picked, subnets[i])
		}
		subnets = picked
	}
	return obj{"Subnets": subnets}, nil
}

// wait models ec2 wait instance-running and instance-terminated: it
// polls, one clock step each, until every instance is in the state.
func (s *State) wait(c Call) (any, *apiError) {
	r := s.Region(c.Region)
	want, name := "running", "InstanceRunning"
	if c.Args[2] == "instance-terminated" {
		want, name = "terminated", "InstanceTerminated"
	}
	ids := flagList(c.Args, "--instance-ids")
	for range waiterPolls {
		done := true
		for _, id := range ids {
			in := r.instance(id)
			if in == nil {
				return nil, waiterErr(name, "An error occurred (InvalidInstanceID.NotFound): The instance ID '"+id+"' does not exist")
			}
			if want == "running" && in.State != "pending" && in.State != "running" {
				return nil, waiterErr(name, "Waiter encountered a terminal failure state: For expression \"Reservations[].Instances[].State.Name\" we matched expected path: \""+in.State+"\" at least once")
			}
			done = done && in.State == want
		}
		if done {
			return nil, nil
		}
		s.Clock++
		s.tick()
	}
	return nil, waiterErr(name, "Max attempts exceeded")
}

// tagSpec reads the tags --tag-specifications gives resource type rt.
func tagSpec(args []string, rt string) map[string]string {
	var specs []struct {
		ResourceType string
		Tags         []struct{ Key, Value string }
	}
	json.Unmarshal([]byte(Flag(args, "--tag-specifications")), &specs)
	tags := map[string]string{}
	for _, sp := range specs {
		if sp.ResourceType == rt {
			for _, t := range sp.Tags {
				tags[t.Key] = t.Value
			}
		}
	}
	return tags
}

// taggedGroups lists the groups (id or name → tags) whose run tag the
// --filters of args select, as {key: id or name, Tags: …}.
func taggedGroups(groups map[string]map[string]string, key string, args []string) []obj {
	run := filterValues(args, "--filters")["tag:"+tagKey]
	gs := []obj{}
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		if slices.Contains(run, groups[g][tagKey]) {
			gs = append(gs, obj{key: g, "Tags": tagList(groups[g])})
		}
	}
	return gs
}

// authorize checks the group and each address range's family.
func (s *State) authorize(c Call) (any, *apiError) {
	g := Flag(c.Args, "--group-id")
	if _, ok := s.Region(c.Region).SGs[g]; !ok {
		return nil, awsErr("InvalidGroup.NotFound", "The security group '%s' does not exist", g)
	}
	var perms []struct {
		IpRanges   []struct{ CidrIp string }
		Ipv6Ranges []struct{ CidrIpv6 string }
	}
	if err := json.Unmarshal([]byte(Flag(c.Args, "--ip-permissions")), &perms); err != nil {
		return nil, &apiError{status: 252, message: "Error parsing parameter '--ip-permissions': " + err.Error()}
	}
	for _, p := range perms {
		for _, r := range p.IpRanges {
			if pf, err := netip.ParsePrefix(r.CidrIp); err != nil || !pf.Addr().Is4() {
				return nil, awsErr("InvalidParameterValue", "CIDR block %s is malformed", r.CidrIp)
			}
		}
		for _, r := range p.Ipv6Ranges {
			if pf, err := netip.ParsePrefix(r.CidrIpv6); err != nil || !pf.Addr().Is6() {
				return nil, awsErr("InvalidParameterValue", "CIDR block %s is malformed", r.CidrIpv6)
			}
		}
	}
	return obj{"Return": true}, nil
}

// runInstances checks the subnet, groups, profile and the zone's capacity,
// then starts the instances (pending until the next call).
func (s *State) runInstances(c Call) (any, *apiError) {
	a := c.Args
	r := s.Region(c.Region)
	subnet := Flag(a, "--subnet-id")
	zi := slices.IndexFunc(Zones(c.Region), func(z string) bool { return SubnetOf(z) == subnet })
	if zi < 0 {
		return nil, awsErr("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", subnet)
	}
	zone := Zones(c.Region)[zi]
	sg := Flag(a, "--security-group-ids")
	if _, ok := r.SGs[sg]; !ok {
		return nil, awsErr("InvalidGroup.NotFound", "The security group '%s' does not exist in VPC '%s'", sg, vpcOf(c.Region))
	}
	var pl struct{ GroupName string }
	json.Unmarshal([]byte(Flag(a, "--placement")), &pl)
	if _, ok := r.PGs[pl.GroupName]; pl.GroupName != "" && !ok {
		return nil, awsErr("InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown.", pl.GroupName)
	}
	var prof struct{ Name string }
	json.Unmarshal([]byte(Flag(a, "--iam-instance-profile")), &prof)
	if _, ok := s.Profiles[prof.Name]; prof.Name != "" && !ok {
		return nil, awsErr("InvalidParameterValue", "Value (%s) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name", prof.Name)
	}
	typ := Flag(a, "--instance-type")
	if slices.Contains(s.NoCapacity, zone) || slices.Contains(s.NoCapacity, zone+"/"+typ) {
		return nil, awsErr("InsufficientInstanceCapacity", "We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). Our system will be working on provisioning additional capacity.", typ, zone)
	}
	for _, in := range r.Instances {
		if pl.GroupName != "" && in.PG == pl.GroupName && in.State != "terminated" && in.Zone != zone {
			return nil, awsErr("InvalidPlacementGroup.InUse", "The placement group '%s' is in use in another availability zone: %s", pl.GroupName, in.Zone)
		}
	}
	spot := strings.Contains(Flag(a, "--instance-market-options"), `"spot"`)
	var n int
	fmt.Sscan(Flag(a, "--count"), &n)
	var ins []obj
	for range n {
		in := &Instance{ID: s.newID("i"), Type: typ, State: "pending", Zone: zone, SG: sg, PG: pl.GroupName,
			UserData: c.Files[Flag(a, "--user-data")], Tags: tagSpec(a, "instance"), Started: s.Clock}
		in.IP = fmt.Sprintf("10.0.0.%d", len(r.Instances)+10)
		out := obj{"InstanceId": in.ID, "InstanceType": typ, "PrivateIpAddress": in.IP, "State": obj{"Name": "pending"},
			"Placement": obj{"AvailabilityZone": zone, "GroupName": pl.GroupName}}
		if spot {
			in.SpotRequest = s.newID("sir")
			r.Spot[in.SpotRequest] = tagSpec(a, "spot-instances-request")
			out["SpotInstanceRequestId"], out["InstanceLifecycle"] = in.SpotRequest, "spot"
		}
		r.Instances = append(r.Instances, in)
		s.Created = append(s.Created, "instance "+in.ID)
		ins = append(ins, out)
	}
	return obj{"Instances": ins, "ReservationId": s.newID("r"), "OwnerId": Account}, nil
}

func (s *State) describeInstances(c Call) (any, *apiError) {
	r := s.Region(c.Region)
	for _, id := range flagList(c.Args, "--instance-ids") {
		if r.instance(id) == nil {
			return nil, awsErr("InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", id)
		}
	}
	f := filterValues(c.Args, "--filters")
	ids := flagList(c.Args, "--instance-ids")
	ins := []obj{}
	for _, in := range r.Instances {
		if run, ok := f["tag:"+tagKey]; ok && !slices.Contains(run, in.Tags[tagKey]) {
			continue
		}
		if st, ok := f["instance-state-name"]; ok && !slices.Contains(st, in.State) {
			continue
		}
		if len(ids) > 0 && !slices.Contains(ids, in.ID) {
			continue
		}
		ins = append(ins, obj{"InstanceId": in.ID, "InstanceType": in.Type, "PrivateIpAddress": in.IP,
			"State": obj{"Name": in.State}, "Tags": tagList(in.Tags), "Placement": obj{"AvailabilityZone": in.Zone}})
	}
	if len(ins) == 0 {
		return obj{"Reservations": []obj{}}, nil
	}
	return obj{"Reservations": []obj{{"Instances": ins}}}, nil
}

func (s *State) terminate(c Call) (any, *apiError) {
	r := s.Region(c.Region)
	var changes []obj
	for _, id := range flagList(c.Args, "--instance-ids") {
		if r.instance(id) == nil {
			return nil, awsErr("InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", id)
		}
	}
	for _, id := range flagList(c.Args, "--instance-ids") {
		in := r.instance(id)
		prev := in.State
		if in.State != "terminated" && in.State != "shutting-down" {
			in.State, in.Terminated = "shutting-down", s.Clock
			s.Deleted = append(s.Deleted, "instance "+in.ID)
		}
		changes = append(changes, obj{"InstanceId": id, "CurrentState": obj{"Name": in.State}, "PreviousState": obj{"Name": prev}})
	}
	return obj{"TerminatingInstances": changes}, nil
}
