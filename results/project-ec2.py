#!/usr/bin/env python3
"""Projects the cluster's throughput on EC2 from figures measured here.

throughput(N) = min(main cores x main rate per core,
                    N x worker cores x worker rate per core,
                    main NIC / main bytes per update (the larger direction),
                    N x worker NIC / worker bytes per update (the larger direction),
                    stream read rate)

Measured inputs (from results/bench-parallel.sh's table, or main-node
--json): main CPU ns per stream update, worker CPU ns per stream update,
bytes per update out and back. Instance figures: the published
specification (AWS, "Compute optimized instances - Network and EBS
specifications" and "- Instance specs", docs.aws.amazon.com/ec2/latest/
instancetypes/co.html): vCPUs, network bandwidth (baseline for the
"up to" sizes), EBS bandwidth. Cores are physical cores (vCPUs / 2),
since this machine's per-core figures are one thread per core.

Usage: results/project-ec2.py MAIN_NS WORKER_NS BYTES_OUT BYTES_BACK [SOURCE] > table.md
  MAIN_NS, WORKER_NS: the table's "main CPU ns/upd" and "worker CPU ns/upd"
  (kron15, 8 readers; the mean of its runs); BYTES_OUT, BYTES_BACK: its
  "B/upd out / back"; SOURCE: where they come from, for the table's header.
"""
import re
import sys

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip())
    sys.exit(0)
if len(sys.argv) < 5:
    print(__doc__.strip(), file=sys.stderr)
    sys.exit(2)
try:
    main_ns, worker_ns, out_b, back_b = (float(x) for x in sys.argv[1:5])
except ValueError as e:
    sys.exit(f"project-ec2: {e}\n\n{__doc__.strip()}")
source = sys.argv[5] if len(sys.argv) > 5 else "results/bench-parallel.sh"


def machine(source):
    """The CPU the figures were measured on: from the "- machine:" line of
    the table SOURCE starts with, else this machine's, as results/lib.sh's
    cpu_name names it."""
    try:
        with open(source.split(",")[0].strip()) as f:
            for line in f:
                m = re.match(r"- machine: (.*\(family [^)]*\))", line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    info = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            info.setdefault(k.strip(), v.strip())
    return f"{info.get('model name', '?')} (family {info.get('cpu family', '?')}, model {info.get('model', '?')})"

# name: (vCPUs, network Gbps used, EBS Gbps)
mains = {"c5n.9xlarge": (36, 50, 9.5), "c5n.18xlarge": (72, 100, 19)}
workers = {"c5.4xlarge": (16, 4.981), "c6i.4xlarge": (16, 6.25)}
# Landscape (Tench et al., ALENEX'25), kron17, c5n.18xlarge main,
# c5.4xlarge workers: 332 M/s at 40 workers; early runs about 1.7 M/s
# per 16-core worker machine added (issue 10's text).
landscape = {40: "332 M/s (published)"}
ns = [4, 8, 16, 40, 64]

print(f"# EC2 projection from measured per-update costs")
print()
print(f"- measured here ({source}): main CPU {main_ns:.1f} ns/update, worker CPU {worker_ns:.1f} ns/update (all workers),")
print(f"  wire {out_b:.2f} B/update out, {back_b:.2f} B/update back")
print("- instances (AWS published specs, docs.aws.amazon.com/ec2/latest/instancetypes/co.html): c5n.9xlarge 36 vCPU, 50 Gbps,")
print("  EBS 9.5 Gbps; c5n.18xlarge 72 vCPU, 100 Gbps, EBS 19 Gbps; c5.4xlarge 16 vCPU, up to 10 Gbps (4.981 baseline);")
print("  c6i.4xlarge 16 vCPU, up to 12.5 Gbps (6.25 baseline); cores = vCPUs / 2; network per direction")
print("- stream read: from the page cache it costs CPU counted in the main rate; from EBS it is EBS Gbps / 9 B per update")
print(f"- per-core rates are those of the machine measured ({machine(source)}); EC2's Skylake/Ice Lake cores may be")
print("  slower or faster per core, and the CPU terms move by that factor; the NIC terms do not")
print()
print("| main | workers | N | main CPU | worker CPU | main NIC | worker NIC | EBS stream | projected | binding term | Landscape |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
wire = max(out_b, back_b)
for mname, (mv, mnic, mebs) in mains.items():
    for wname, (wv, wnic) in workers.items():
        for n in ns:
            terms = {
                "main CPU": mv / 2 * 1e9 / main_ns,
                "worker CPU": n * wv / 2 * 1e9 / worker_ns,
                "main NIC": mnic * 1e9 / 8 / wire,
                "worker NIC": n * wnic * 1e9 / 8 / wire,
            }
            ebs = mebs * 1e9 / 8 / 9
            bind = min(terms, key=terms.get)
            cells = " | ".join(f"{terms[k]/1e6:,.0f} M" for k in ("main CPU", "worker CPU", "main NIC", "worker NIC"))
            ls = landscape.get(n, "") if (mname, wname) == ("c5n.18xlarge", "c5.4xlarge") else ""
            if not ls and (mname, wname) == ("c5n.18xlarge", "c5.4xlarge"):
                ls = f"~{1.7*n*16/16:.0f} M/s (linear early runs)" if n <= 16 else ""
            print(f"| {mname} | {wname} | {n} | {cells} | {ebs/1e6:,.0f} M | {terms[bind]/1e6:,.0f} M/s | {bind} "
                  f"(from EBS: {min(terms[bind], ebs)/1e6:,.0f} M/s) | {ls} |")
