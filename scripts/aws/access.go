package main

// The run's access: the cluster key in SSM and the instances' IAM role.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
)

// putKey generates the cluster key and stores it as an SSM "SecureString".
// The key is written to a 0600 file in a 0700 directory that the aws
// command reads (--cli-input-json file://…), and removed right after: it
// is never on a command line, in an environment variable or in user-data.
func putKey(ctx context.Context, e *env, n names) error {
	if e.dry {
		_, err := e.aws.run(ctx, "ssm", "put-parameter", "--cli-input-json", "file://<0600 temp file: Name "+n.keyParam()+", Type SecureString, Value <32 random bytes, base64>, Tags "+tagKey+"="+n.run+">")
		return err
	}
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "sketchcc-key")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	input := mustJSON(map[string]any{"Name": n.keyParam(), "Type": "SecureString",
		"Description": "sketchcc cluster key of run " + n.run, "Value": base64.StdEncoding.EncodeToString(key[:]),
		"Tags": []map[string]string{{"Key": tagKey, "Value": n.run}}})
	path := filepath.Join(dir, "put-parameter.json")
	if err := os.WriteFile(path, []byte(input), 0o600); err != nil {
		return err
	}
	_, err = e.aws.run(ctx, "ssm", "put-parameter", "--cli-input-json", "file://"+path)
	return err
}

// createRole creates the instances' role: read the key parameter and the
// run's S3 objects, write its results, and be managed by SSM.
func createRole(ctx context.Context, e *env, n names, account string, src streamSource) error {
	a := e.aws
	trust := mustJSON(map[string]any{"Version": "2012-10-17", "Statement": []map[string]any{{
		"Effect": "Allow", "Principal": map[string]string{"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}}})
	read := []string{"arn:aws:s3:::" + n.bucket + "/" + n.prefix() + "/*"}
	if src.s3URI != "" {
		read = append(read, "arn:aws:s3:::"+src.bucket+"/"+src.key)
	}
	policy := mustJSON(map[string]any{"Version": "2012-10-17", "Statement": []map[string]any{
		{"Effect": "Allow", "Action": "ssm:GetParameter",
			"Resource": "arn:aws:ssm:" + e.region + ":" + account + ":parameter" + n.keyParam()},
		{"Effect": "Allow", "Action": "kms:Decrypt", "Resource": "*",
			"Condition": map[string]any{"StringEquals": map[string]string{"kms:ViaService": "ssm." + e.region + ".amazonaws.com"}}},
		{"Effect": "Allow", "Action": "s3:GetObject", "Resource": read},
		{"Effect": "Allow", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::" + n.bucket + "/" + n.prefix() + "/out/*"},
	}})
	// The role records where the run lives: teardown reads its bucket and
	// refuses to delete anything from another region.
	tags := []string{"--tags", "Key=" + tagKey + ",Value=" + n.run, "Key=" + bucketTag + ",Value=" + n.bucket,
		"Key=" + regionTag + ",Value=" + e.region}
	steps := [][]string{
		append([]string{"iam", "create-role", "--role-name", n.run, "--assume-role-policy-document", trust}, tags...),
		{"iam", "put-role-policy", "--role-name", n.run, "--policy-name", "sketchcc", "--policy-document", policy},
		{"iam", "attach-role-policy", "--role-name", n.run, "--policy-arn", ssmCorePolicy},
		append([]string{"iam", "create-instance-profile", "--instance-profile-name", n.run}, tags...),
		{"iam", "add-role-to-instance-profile", "--instance-profile-name", n.run, "--role-name", n.run},
		{"iam", "wait", "instance-profile-exists", "--instance-profile-name", n.run},
	}
	for _, s := range steps {
		if _, err := a.run(ctx, s...); err != nil {
			return err
		}
	}
	return nil
}
