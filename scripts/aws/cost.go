package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// priceDate is when the table below was last compared with AWS's
// published on-demand prices.
const priceDate = "2026-12-01"

// priceRegion is the region the table's prices are for; other regions
// differ by a few to some tens of percent.
const priceRegion = "us-east-1"

// onDemand is the Linux on-demand price in US dollars per hour in
// priceRegion, from https://aws.amazon.com/ec2/pricing/on-demand/ (c5 and
// c6i are $0.17 per 4 vCPU-hours, c5n and c6in $0.216 and $0.2268).
var onDemand = map[string]float64{
	"c5.2xlarge": 0.34, "c5.4xlarge": 0.68, "c5.9xlarge": 1.53,
	"c6i.2xlarge": 0.34, "c6i.4xlarge": 0.68, "c6i.8xlarge": 1.36,
	"c5n.2xlarge": 0.432, "c5n.4xlarge": 0.864, "c5n.9xlarge": 1.944, "c5n.18xlarge": 3.888,
	"c6in.2xlarge": 0.4536, "c6in.4xlarge": 0.9072, "c6in.8xlarge": 1.8144, "c6in.16xlarge": 3.6288,
}

// EBS gp3 prices in priceRegion (https://aws.amazon.com/ebs/pricing/): per
// GiB-month, per provisioned IOPS-month above 3,000 and per MB/s-month
// above 125; a month is 730 hours in AWS's billing. The main node's
// volume is provisioned at mainIOPS and mainThroughput MB/s so that
// reading the stream keeps up with ingestion.
const (
	gp3PerGiBMonth  = 0.08
	gp3PerIOPSMonth = 0.005
	gp3PerMBpsMonth = 0.04
	mainIOPS        = 16000
	mainThroughput  = 1000
	hoursPerMonth   = 730
)

// publicIPv4PerHour is AWS's price of a public IPv4 address in US dollars
// per hour (https://aws.amazon.com/vpc/pricing/, since 2024-02-01). Every
// instance gets one: in a default VPC it is how the SSM agent and S3 are
// reached without a NAT gateway, which would cost more.
const publicIPv4PerHour = 0.005

// fleet is what a cost estimate needs to know.
type fleet struct {
	mainType, workerType string
	workers              int
	spot                 bool
	mainVolumeGiB        int
	hours                float64
}

func addFleetFlags(fs *pflag.FlagSet, f *fleet) {
	fs.IntVar(&f.workers, "workers", 4, "worker instances")
	fs.StringVar(&f.workerType, "worker-type", "c5.4xlarge", "worker instance type (c5.4xlarge or c6i.4xlarge: 16 vCPU, like Landscape's fleet)")
	fs.StringVar(&f.mainType, "main-type", "c5n.9xlarge", "main node instance type (c5n or c6in: high network bandwidth; 96 GiB keeps a kron17 stream in the page cache)")
	fs.BoolVar(&f.spot, "spot", false, "workers as one-time spot instances (a reclaimed worker's batches go to the others)")
	fs.Float64Var(&f.hours, "hours", 0.5, "expected run length in hours, for the estimate")
}

func (f *fleet) validate() error {
	var bad []string
	if f.workers < 0 || f.workers > 500 {
		bad = append(bad, fmt.Sprintf("--workers=%d, want [0, 500]", f.workers))
	}
	if !(f.hours > 0) {
		bad = append(bad, fmt.Sprintf("--hours=%v, want > 0", f.hours))
	}
	for _, t := range []struct{ flag, typ string }{{"--main-type", f.mainType}, {"--worker-type", f.workerType}} {
		if _, ok := onDemand[t.typ]; !ok {
			bad = append(bad, fmt.Sprintf("%s=%s has no price in the table; known: %s", t.flag, t.typ, strings.Join(knownTypes(), ", ")))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return nil
}

func knownTypes() []string {
	var ts []string
	for t := range onDemand {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// mainVolumePerHour is the price of the main node's gp3 volume of gib GiB
// in US dollars per hour; 0 for no volume.
func mainVolumePerHour(gib int) float64 {
	if gib <= 0 {
		return 0
	}
	return (float64(gib)*gp3PerGiBMonth + (mainIOPS-3000)*gp3PerIOPSMonth +
		(mainThroughput-125)*gp3PerMBpsMonth) / hoursPerMonth
}

// printEstimate writes the estimate and returns the hourly total.
func printEstimate(w io.Writer, f fleet) float64 {
	mainH := onDemand[f.mainType]
	workerH := onDemand[f.workerType] * float64(f.workers)
	ebsH := mainVolumePerHour(f.mainVolumeGiB)
	ipH := publicIPv4PerHour * float64(f.workers+1)
	total := mainH + workerH + ebsH + ipH
	fmt.Fprintf(w, "Cost estimate (on-demand Linux list prices, %s, table dated %s):\n", priceRegion, priceDate)
	fmt.Fprintf(w, "  main node   1 × %-13s $%8.4f/h\n", f.mainType, mainH)
	fmt.Fprintf(w, "  workers   %3d × %-13s $%8.4f/h", f.workers, f.workerType, workerH)
	if f.spot {
		fmt.Fprint(w, "  (spot: usually well below this on-demand bound)")
	}
	fmt.Fprintln(w)
	if f.mainVolumeGiB > 0 {
		fmt.Fprintf(w, "  EBS gp3     %d GiB, %d IOPS, %d MB/s on the main node  $%8.4f/h\n", f.mainVolumeGiB, mainIOPS, mainThroughput, ebsH)
	} else {
		fmt.Fprintln(w, "  EBS gp3     not counted: pass --main-volume-gib (launch sizes it from the stream: its GiB + 16, at least 30)")
	}
	fmt.Fprintf(w, "  public IPv4  %d × $%.3f (one per instance)  $%8.4f/h\n", f.workers+1, publicIPv4PerHour, ipH)
	fmt.Fprintf(w, "  total                           $%8.4f/h, $%.2f for %.2g h (billed per second, 60 s minimum)\n", total, total*f.hours, f.hours)
	fmt.Fprintln(w, "  not counted: S3 storage and requests, spot savings, data transfer out of the region")
	return total
}

func setupCost(fs *pflag.FlagSet) func(context.Context, *env) error {
	var f fleet
	addFleetFlags(fs, &f)
	fs.IntVar(&f.mainVolumeGiB, "main-volume-gib", 0, "EBS volume of the main node in GiB (0: not counted)")
	return func(_ context.Context, e *env) error {
		if err := f.validate(); err != nil {
			return usageErr(err)
		}
		printEstimate(e.stdout, f)
		return nil
	}
}
