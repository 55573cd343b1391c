package fakeaws

// S3, SSM and IAM. S3 and IAM are global; SSM parameters, commands and
// agent registrations belong to the call's region.

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
)

func (s *State) answerS3(c Call) (any, *apiError) {
	a := c.Args
	switch c.Op() {
	case "s3 cp":
		src, dst := a[len(a)-2], a[len(a)-1]
		if strings.HasPrefix(dst, "s3://") {
			s.Objects[dst] = 0
			s.Created = append(s.Created, "object "+dst)
			return nil, nil
		}
		if missed, ok := s.Objects[src]; !ok || missed > 0 {
			// The high-level s3 commands print this and exit 1.
			return nil, &apiError{status: 1, message: "fatal error: An error occurred (404) when calling the HeadObject operation: Key not found"}
		}
		os.WriteFile(dst, []byte(`{"components": 101}`+"\n"), 0o644)
		return nil, nil
	case "s3 rm":
		prefix := a[len(a)-1]
		for o := range s.Objects {
			if strings.HasPrefix(o, prefix) {
				delete(s.Objects, o)
				s.Deleted = append(s.Deleted, "object "+o)
			}
		}
		return nil, nil
	case "s3api head-object":
		return obj{"ContentLength": 158 << 20}, nil
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
		if len(cs) == 0 {
			// The API leaves Contents out of an empty listing.
			return obj{"KeyCount": 0}, nil
		}
		return obj{"Contents": cs, "KeyCount": len(cs)}, nil
	}
	return unknown()
}

func (s *State) answerSSM(c Call) (any, *apiError) {
	a := c.Args
	r := s.Region(c.Region)
	switch c.Args[1] {
	case "get-parameters":
		return obj{"Parameters": []obj{{"Name": Flag(a, "--names"), "Value": "ami-0fake" + c.Region}}, "InvalidParameters": []string{}}, nil
	case "put-parameter":
		var in struct {
			Name, Value, Type string
			Tags              []struct{ Key, Value string }
		}
		for _, f := range c.Files {
			json.Unmarshal([]byte(f), &in)
		}
		if in.Type != "SecureString" || in.Name == "" || len(in.Tags) == 0 {
			return nil, awsErr("ValidationException", "want a tagged SecureString")
		}
		if _, ok := r.Params[in.Name]; ok {
			return nil, awsErr("ParameterAlreadyExists", "The parameter already exists. To overwrite this value, set the overwrite option in the request to true.")
		}
		p := &Param{Value: in.Value, Tags: map[string]string{}}
		for _, t := range in.Tags {
			p.Tags[t.Key] = t.Value
		}
		r.Params[in.Name] = p
		s.Created = append(s.Created, "parameter "+in.Name)
		return obj{"Version": 1, "Tier": "Standard"}, nil
	case "describe-parameters":
		f := filterValues(a, "--parameter-filters")
		ps := []obj{}
		for _, name := range slices.Sorted(maps.Keys(r.Params)) {
			for k, v := range f {
				if t, ok := strings.CutPrefix(k, "tag:"); ok && slices.Contains(v, r.Params[name].Tags[t]) {
					ps = append(ps, obj{"Name": name, "Type": "SecureString"})
				}
			}
		}
		return obj{"Parameters": ps}, nil
	case "delete-parameter":
		name := Flag(a, "--name")
		if _, ok := r.Params[name]; !ok {
			return nil, awsErr("ParameterNotFound", "")
		}
		delete(r.Params, name)
		s.Deleted = append(s.Deleted, "parameter "+name)
		return nil, nil
	case "describe-instance-information":
		return s.instanceInformation(c)
	case "send-command":
		return s.sendCommand(c)
	case "wait", "get-command-invocation":
		if Flag(a, "--command-id") != "cmd-0fake" {
			return nil, awsErr("InvocationDoesNotExist", "")
		}
		if c.Args[1] == "wait" {
			return nil, nil
		}
		return obj{"Status": "Success", "StandardOutputContent": "sketchcc_stream_updates 4e+06\nsketchcc_updates_read_total 1e+06\n" +
			"sketchcc_worker_connected{worker=\"w1\"} 1\nsketchcc_worker_connected{worker=\"w2\"} 0\nsketchcc_workers_connected 1\nmain-node service: activating\n"}, nil
	}
	return unknown()
}

// registered reports whether in's SSM agent has registered by now.
func (s *State) registered(in *Instance) bool {
	return in.State == "running" && s.Clock >= in.Started+s.Lag.SSM
}

// instanceInformation answers describe-instance-information: the managed
// nodes among the filter's instance ids (an unregistered instance is not
// listed; an id unknown in the region is an error).
func (s *State) instanceInformation(c Call) (any, *apiError) {
	r := s.Region(c.Region)
	list := []obj{}
	for _, id := range filterValues(c.Args, "--filters")["InstanceIds"] {
		in := r.instance(id)
		if in == nil {
			return nil, awsErr("InvalidInstanceId", "Instances [[%s]] not in a valid state for account %s", id, Account)
		}
		if s.registered(in) {
			list = append(list, obj{"InstanceId": id, "PingStatus": "Online", "PlatformType": "Linux", "ResourceType": "EC2Instance"})
		}
	}
	return obj{"InstanceInformationList": list}, nil
}

// sendCommand answers send-command: every target must be a registered
// instance of the region.
func (s *State) sendCommand(c Call) (any, *apiError) {
	r := s.Region(c.Region)
	for _, id := range flagList(c.Args, "--instance-ids") {
		if in := r.instance(id); in == nil || !s.registered(in) {
			return nil, awsErr("InvalidInstanceId", "Instances [[%s]] not in a valid state for account %s", id, Account)
		}
	}
	return obj{"Command": obj{"CommandId": "cmd-0fake", "Status": "Pending"}}, nil
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

// answerRole answers the iam calls on roles, and iam wait.
func (s *State) answerRole(c Call) (any, *apiError) {
	a := c.Args
	name := Flag(a, "--role-name")
	switch c.Args[1] {
	case "wait":
		if _, ok := s.Profiles[Flag(a, "--instance-profile-name")]; !ok {
			return nil, waiterErr("InstanceProfileExists", "Max attempts exceeded")
		}
		return nil, nil
	case "create-role":
		if _, ok := s.Roles[name]; ok {
			return nil, awsErr("EntityAlreadyExists", "Role with name %s already exists.", name)
		}
		s.Roles[name] = &Role{Tags: iamTags(a)}
		s.Created = append(s.Created, "role "+name)
		return obj{"Role": obj{"RoleName": name, "Arn": "arn:aws:iam::" + Account + ":role/" + name}}, nil
	case "put-role-policy", "attach-role-policy", "list-role-tags", "delete-role-policy", "detach-role-policy", "delete-role":
	default:
		return unknown()
	}
	r := s.Roles[name]
	if r == nil {
		return nil, awsErr("NoSuchEntity", "The role with name %s cannot be found.", name)
	}
	switch c.Args[1] {
	case "put-role-policy":
		r.Policies = append(r.Policies, Flag(a, "--policy-name"))
	case "attach-role-policy":
		r.Attached = append(r.Attached, Flag(a, "--policy-arn"))
	case "list-role-tags":
		return obj{"Tags": tagList(r.Tags), "IsTruncated": false}, nil
	case "delete-role-policy":
		r.Policies = slices.DeleteFunc(r.Policies, func(p string) bool { return p == Flag(a, "--policy-name") })
	case "detach-role-policy":
		r.Attached = slices.DeleteFunc(r.Attached, func(p string) bool { return p == Flag(a, "--policy-arn") })
	case "delete-role":
		for _, p := range s.Profiles {
			if slices.Contains(p.Roles, name) {
				return nil, awsErr("DeleteConflict", "Cannot delete entity, must remove roles from instance profile first.")
			}
		}
		if len(r.Policies)+len(r.Attached) > 0 {
			return nil, awsErr("DeleteConflict", "Cannot delete entity, must delete policies first.")
		}
		delete(s.Roles, name)
		s.Deleted = append(s.Deleted, "role "+name)
	}
	return nil, nil
}

// answerProfile answers the iam calls on instance profiles.
func (s *State) answerProfile(c Call) (any, *apiError) {
	a := c.Args
	name := Flag(a, "--instance-profile-name")
	if c.Args[1] == "create-instance-profile" {
		if _, ok := s.Profiles[name]; ok {
			return nil, awsErr("EntityAlreadyExists", "Instance Profile %s already exists.", name)
		}
		s.Profiles[name] = &Profile{Roles: []string{}, Tags: iamTags(a)}
		s.Created = append(s.Created, "instance-profile "+name)
		return obj{"InstanceProfile": obj{"InstanceProfileName": name}}, nil
	}
	p, ok := s.Profiles[name]
	if !ok {
		return nil, awsErr("NoSuchEntity", "Instance Profile %s cannot be found.", name)
	}
	switch c.Args[1] {
	case "add-role-to-instance-profile":
		p.Roles = append(p.Roles, Flag(a, "--role-name"))
	case "remove-role-from-instance-profile":
		p.Roles = slices.DeleteFunc(p.Roles, func(r string) bool { return r == Flag(a, "--role-name") })
	case "list-instance-profile-tags":
		return obj{"Tags": tagList(p.Tags), "IsTruncated": false}, nil
	case "delete-instance-profile":
		if len(p.Roles) > 0 {
			return nil, awsErr("DeleteConflict", "Cannot delete entity, must remove roles from instance profile first.")
		}
		delete(s.Profiles, name)
		s.Deleted = append(s.Deleted, "instance-profile "+name)
	default:
		return unknown()
	}
	return nil, nil
}
