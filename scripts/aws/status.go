package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/spf13/pflag"
)

func setupStatus(fs *pflag.FlagSet) func(context.Context, *env) error {
	var run string
	var wait time.Duration
	fs.StringVar(&run, "run", "", "run id printed by launch (required)")
	fs.DurationVar(&wait, "wait", 3*time.Minute, "how long to wait for the main node's SSM agent to register (a minute or two after launch)")
	return func(ctx context.Context, e *env) error {
		if !validRun(run) {
			return usageErr(fmt.Errorf("--run=%q: want the run id printed by launch", run))
		}
		return status(ctx, e, names{run: run}, wait)
	}
}

type instance struct {
	InstanceId, InstanceType, PrivateIpAddress string
	State                                      struct{ Name string }
	Tags                                       []struct{ Key, Value string }
}

func (in instance) tag(k string) string {
	for _, t := range in.Tags {
		if t.Key == k {
			return t.Value
		}
	}
	return ""
}

// status prints the run's instances, then asks the main node, through SSM
// Run Command, for the lines of its metrics endpoint that say which
// workers are connected and how far ingestion is.
func status(ctx context.Context, e *env, n names, wait time.Duration) error {
	a := e.aws
	var di struct {
		Reservations []struct{ Instances []instance }
	}
	if err := a.runJSON(ctx, &di, "ec2", "describe-instances", "--filters", n.tagFilter()); err != nil {
		return err
	}
	mainID := "<main node instance id>"
	if !e.dry {
		mainID = ""
		fmt.Fprintf(e.stdout, "Run %s:\n", n.run)
		for _, r := range di.Reservations {
			for _, in := range r.Instances {
				fmt.Fprintf(e.stdout, "  %-7s %-20s %-13s %-15s %s\n", in.tag("sketchcc-role"), in.InstanceId,
					in.InstanceType, in.PrivateIpAddress, in.State.Name)
				if in.tag("sketchcc-role") == "main" && in.State.Name == "running" {
					mainID = in.InstanceId
				}
			}
		}
		if mainID == "" && len(di.Reservations) == 0 {
			// Nothing here: the run may live in another region.
			if _, region, err := roleTags(ctx, e, &n); err == nil && region != "" && region != e.region {
				return fmt.Errorf("run %s has no instance in %s: it lives in %s (the tag %s of its IAM role):\n  go run ./scripts/aws status --run %s --region %s",
					n.run, e.region, region, regionTag, n.run, region)
			}
		}
		if mainID == "" {
			fmt.Fprintln(e.stdout, "  no running main node: nothing more to ask")
			return nil
		}
	}
	script := fmt.Sprintf("curl -sf localhost:%d/metrics | grep -E '^sketchcc_(workers_connected|worker_connected|updates_read_total|stream_updates) '; "+
		"echo \"main-node service: $(systemctl is-active sketchcc-main.service)\"; "+
		"echo \"stream staged: $(stat -c %%s /data/stream.bin 2>/dev/null || echo 0) bytes\"", mainMetricsPort)
	cmdID, err := sendWhenManaged(ctx, e, mainID, wait, "ssm", "send-command", "--document-name", "AWS-RunShellScript",
		"--instance-ids", mainID, "--comment", "sketchcc status "+n.run,
		"--parameters", mustJSON(map[string][]string{"commands": {script}}))
	if err != nil {
		return err
	}
	if cmdID == "" {
		fmt.Fprintf(e.stdout, "Main node %s: still starting (its SSM agent has not registered after %v; that takes a minute or two after launch).\n"+
			"Try again in a minute:\n  go run ./scripts/aws status --run %s --region %s\n", mainID, wait, n.run, e.region)
		return nil
	}
	if _, err := a.run(ctx, "ssm", "wait", "command-executed", "--command-id", cmdID, "--instance-id", mainID); err != nil {
		return err
	}
	var inv struct{ StandardOutputContent string }
	if err := a.runJSON(ctx, &inv, "ssm", "get-command-invocation", "--command-id", cmdID, "--instance-id", mainID); err != nil {
		return err
	}
	if !e.dry {
		printProgress(e, inv.StandardOutputContent)
	}
	return nil
}

// ssmPoll is the pause between two looks at whether an instance's SSM
// agent has registered.
const ssmPoll = 10 * time.Second

// sendWhenManaged makes the send-command call send once the SSM agent of
// instance id has registered, looking every ssmPoll for at most wait. It
// returns the command's id, or "" if the agent is not there in time.
func sendWhenManaged(ctx context.Context, e *env, id string, wait time.Duration, send ...string) (string, error) {
	if e.dry {
		_, err := e.aws.run(ctx, "ssm", "describe-instance-information", "--filters", "Key=InstanceIds,Values="+id)
		if err == nil {
			_, err = e.aws.run(ctx, send...)
		}
		return "<command id>", err
	}
	for polls := int(wait / ssmPoll); ; polls-- {
		var info struct {
			InstanceInformationList []struct{ InstanceId, PingStatus string }
		}
		err := e.aws.runJSON(ctx, &info, "ssm", "describe-instance-information", "--filters", "Key=InstanceIds,Values="+id)
		if err != nil && awsCode(err) != "InvalidInstanceId" {
			return "", err
		}
		if slices.ContainsFunc(info.InstanceInformationList, func(i struct{ InstanceId, PingStatus string }) bool {
			return i.InstanceId == id && i.PingStatus == "Online"
		}) {
			// Registered, but SSM can still refuse it for a moment.
			var sent struct{ Command struct{ CommandId string } }
			err := e.aws.runJSON(ctx, &sent, send...)
			if err == nil {
				return sent.Command.CommandId, nil
			}
			if awsCode(err) != "InvalidInstanceId" {
				return "", err
			}
		}
		if polls <= 0 {
			return "", nil
		}
		e.log.Info("waiting for the main node's SSM agent to register", "instance", id)
		if err := pause(ctx, ssmPoll); err != nil {
			return "", err
		}
	}
}

// printProgress summarises the main node's metrics lines: workers
// connected and ingestion progress.
func printProgress(e *env, out string) {
	var metricLines, other []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "sketchcc_") {
			metricLines = append(metricLines, l)
		} else if l != "" {
			other = append(other, l)
		}
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(strings.Join(metricLines, "\n") + "\n"))
	switch {
	case len(metricLines) == 0:
		fmt.Fprintln(e.stdout, "Main node: no metrics (staging the stream, or the run is over)")
	case err != nil:
		fmt.Fprintf(e.stdout, "Main node: unreadable metrics (%v):\n  %s\n", err, strings.Join(metricLines, "\n  "))
	default:
		get := func(name string) float64 {
			if f := fams[name]; f != nil && len(f.GetMetric()) > 0 {
				m := f.GetMetric()[0]
				return m.GetUntyped().GetValue() + m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
			return 0
		}
		read, total := get("sketchcc_updates_read_total"), get("sketchcc_stream_updates")
		pct := 0.0
		if total > 0 {
			pct = 100 * read / total
		}
		fmt.Fprintf(e.stdout, "Main node: %.0f of %.0f updates read (%.1f%%), %.0f workers connected\n", read, total, pct, get("sketchcc_workers_connected"))
		if f := fams["sketchcc_worker_connected"]; f != nil {
			for _, m := range f.GetMetric() {
				state := "connected"
				if m.GetUntyped().GetValue()+m.GetGauge().GetValue() == 0 {
					state = "not connected"
				}
				for _, l := range m.GetLabel() {
					if l.GetName() == "worker" {
						fmt.Fprintf(e.stdout, "  member %s: %s\n", l.GetValue(), state)
					}
				}
			}
		}
	}
	for _, l := range other {
		fmt.Fprintln(e.stdout, l)
	}
}

func setupFetch(fs *pflag.FlagSet) func(context.Context, *env) error {
	var run, bucket, dir string
	var wait time.Duration
	fs.StringVar(&run, "run", "", "run id printed by launch (required)")
	fs.StringVar(&bucket, "bucket", "", "S3 bucket given to launch (required)")
	fs.StringVar(&dir, "dir", "results", "directory of the dated result file")
	fs.DurationVar(&wait, "wait", 0, "poll every 30 s for this long until the result is there")
	return func(ctx context.Context, e *env) error {
		if !validRun(run) || bucket == "" {
			return usageErr(fmt.Errorf("give --run (the run id printed by launch) and --bucket"))
		}
		return fetch(ctx, e, names{run: run, bucket: bucket}, dir, wait)
	}
}

// pollEvery is fetch's polling interval; tests set it to zero.
var pollEvery = 30 * time.Second

// fetch copies the main node's --json output to DIR/aws-RUN-DATE.json,
// and its log next to it; a failed run's log is fetched and reported.
func fetch(ctx context.Context, e *env, n names, dir string, wait time.Duration) error {
	a := e.aws
	date := time.Now().UTC().Format("2006-01-02")
	out := filepath.Join(dir, "aws-"+n.run+"-"+date+".json")
	deadline := time.Now().Add(wait)
	for {
		var ls struct{ Contents []struct{ Key string } }
		if err := a.runJSON(ctx, &ls, "s3api", "list-objects-v2", "--bucket", n.bucket, "--prefix", n.prefix()+"/out/"); err != nil {
			return err
		}
		have := map[string]bool{}
		for _, o := range ls.Contents {
			have[strings.TrimPrefix(o.Key, n.prefix()+"/out/")] = true
		}
		switch {
		case e.dry || have["result.json"]:
			if _, err := a.run(ctx, "s3", "cp", "--only-show-errors", n.s3("out/result.json"), out); err != nil {
				return err
			}
			if _, err := a.run(ctx, "s3", "cp", "--only-show-errors", n.s3("out/main-node.log"), strings.TrimSuffix(out, ".json")+".log"); err != nil {
				return err
			}
			if !e.dry {
				fmt.Fprintf(e.stdout, "Wrote %s\n", out)
			}
			return nil
		case have["failed"]:
			log := strings.TrimSuffix(out, ".json") + ".log"
			if _, err := a.run(ctx, "s3", "cp", "--only-show-errors", n.s3("out/main-node.log"), log); err != nil {
				return err
			}
			return fmt.Errorf("the main node of run %s failed; its log is in %s", n.run, log)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no result for run %s yet under s3://%s/%s/out/ (give --wait to poll)", n.run, n.bucket, n.prefix())
		}
		e.log.Info("waiting for the result", "run", n.run)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}
