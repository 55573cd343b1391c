package main

import (
	"encoding/json"
	"fmt"
	"io"

	"sketchcc/cc"
	"sketchcc/distributor"
	"sketchcc/hugepage"
	"sketchcc/ingest"
	"sketchcc/internal/cli"
	"sketchcc/internal/cputime"
	"sketchcc/sketch"
	"sketchcc/stream"
)

// summary is the --json output; field names are a stable interface.
type summary struct {
	Stream               string  `json:"stream"`
	Vertices             uint32  `json:"vertices"`
	Updates              uint64  `json:"updates"`
	Components           int     `json:"components"`
	IngestSeconds        float64 `json:"ingest_seconds"`
	InsertUpdatesPerSec  float64 `json:"insert_updates_per_second"`
	UpdatesPerSecond     float64 `json:"updates_per_second"`
	EndToEndSeconds      float64 `json:"end_to_end_seconds"`
	QuerySeconds         float64 `json:"query_seconds"`
	FlushSeconds         float64 `json:"flush_seconds"`
	CCSeconds            float64 `json:"cc_seconds"`
	BoruvkaRounds        int     `json:"boruvka_rounds"`
	BoruvkaMerges        int     `json:"boruvka_merges"`
	BoruvkaFails         int     `json:"boruvka_fails"`
	SketchBytes          int64   `json:"sketch_bytes"`
	SketchBytesPerVertex int     `json:"sketch_bytes_per_vertex"`
	SketchColumns        int     `json:"sketch_columns"`
	SketchRows           int     `json:"sketch_rows"`
	BatchUpdates         int     `json:"batch_updates"`
	// Batches counts the gutters' batches, full or flushed (queued for
	// the delta workers, local or remote), FlushedBatches those of them a
	// query's flush emitted, and FlushLocalGutters the gutters a query
	// sketched on the main node in place, not queued: when no spare
	// buffer was free at its flush, or the buffered updates Boruvka read.
	Batches              uint64        `json:"batches"`
	FlushedBatches       uint64        `json:"flushed_batches"`
	FlushLocalGutters    uint64        `json:"flush_local_gutters"`
	SketchKernel         string        `json:"sketch_kernel"`          // "avx512", "avx2" or "portable"
	TransparentHugePages string        `json:"transparent_huge_pages"` // the kernel's THP mode
	HugePages            bool          `json:"huge_pages"`             // sketches and gutters advised to use them
	LocalWorkers         int           `json:"local_workers"`
	Readers              int           `json:"readers"`    // --readers
	MainCores            int           `json:"main_cores"` // GOMAXPROCS at the end of the stream (--cores)
	*distributor.Report                // with --listen: "workers", "network_bytes_per_update", …
	Greedy               bool          `json:"greedy"`
	Queries              []queryRecord `json:"queries"`
	PeakRSSBytes         int64         `json:"peak_rss_bytes"`
	// ResumedFrom is the update count a --resume run started at; the
	// rates above count only the updates read since. PrefixCheckSeconds
	// is the time the run took to hash the stream's first ResumedFrom
	// updates against the checkpoint, and StreamUpdatesPerSecond the
	// whole stream's Updates over that time plus EndToEndSeconds: how
	// fast this run answered for the whole stream (the time before the
	// checkpoint, in an earlier run, is not known here).
	ResumedFrom            *uint64 `json:"resumed_from,omitempty"`
	PrefixCheckSeconds     float64 `json:"prefix_check_seconds,omitempty"`
	StreamUpdatesPerSecond float64 `json:"stream_updates_per_second,omitempty"`
	Checkpoints            int     `json:"checkpoints,omitempty"`
	CheckpointSeconds      float64 `json:"checkpoint_seconds,omitempty"` // barriers and writes
	// CheckpointWriteSeconds is the time spent writing checkpoints, and
	// CheckpointBytes the size of the last one.
	CheckpointWriteSeconds float64          `json:"checkpoint_write_seconds,omitempty"`
	CheckpointBytes        int64            `json:"checkpoint_bytes,omitempty"`
	MainCPU                *cputime.Stages  `json:"main_cpu,omitempty"`
	ProcessCPU             *cputime.Usage   `json:"process_cpu,omitempty"`
	DirectIO               bool             `json:"direct_io"`                // the stream file read with O_DIRECT
	KConnectivity          []cli.KRecord    `json:"k_connectivity,omitempty"` // --k-connectivity: every query's answer
	Memory                 cli.MemoryRecord `json:"memory"`                   // --memory-limit's plan and the disk I/O of --sketch-dir
}

func report(w io.Writer, c config, e *ingest.Engine, h stream.Header, run *runResult, cl *distributor.Cluster) error {
	p := e.Params()
	res := run.final
	gst := e.Gutters().Stats()
	s := summary{
		Stream: c.stream, Vertices: h.Vertices, Updates: res.AfterUpdates, Components: res.Components,
		IngestSeconds:       run.Ingest.Seconds(),
		InsertUpdatesPerSec: float64(res.AfterUpdates-run.in.from) / run.Ingest.Seconds(),
		UpdatesPerSecond:    float64(res.AfterUpdates-run.in.from) / run.EndToEnd.Seconds(),
		EndToEndSeconds:     run.EndToEnd.Seconds(),
		QuerySeconds:        (res.Flush + res.CC).Seconds(),
		FlushSeconds:        res.Flush.Seconds(),
		CCSeconds:           res.CC.Seconds(),
		BoruvkaRounds:       res.Boruvka.Rounds, BoruvkaMerges: res.Boruvka.Merges, BoruvkaFails: res.Boruvka.Fails,
		SketchBytes: e.SketchBytes(), SketchBytesPerVertex: p.BytesPerVertex(),
		SketchColumns: p.Columns(), SketchRows: p.Rows(),
		BatchUpdates: e.BatchUpdates(), LocalWorkers: e.Config().Workers,
		Batches: gst.Batches, FlushedBatches: gst.FlushedBatches, FlushLocalGutters: gst.LocalBatches,
		Readers: e.Config().Readers, MainCores: run.cores,
		SketchKernel: sketch.Kernel(), TransparentHugePages: hugepage.Setting(), HugePages: e.HugePages(),
		Report:       cl.Report(res.AfterUpdates),
		Greedy:       !c.noGreedy,
		Queries:      run.queries,
		PeakRSSBytes: cli.PeakRSS(),
		Checkpoints:  run.Checkpoints, CheckpointSeconds: run.Checkpointing.Seconds(),
		PrefixCheckSeconds:     run.in.checked.Seconds(),
		CheckpointWriteSeconds: run.taker.Writing.Seconds(), CheckpointBytes: run.taker.Bytes,
		MainCPU: run.cpu, KConnectivity: c.kconn.Records,
		ProcessCPU: cputime.ProcessUsage(res.AfterUpdates - run.in.from), DirectIO: run.in.direct, Memory: c.mem.Record(e),
	}
	if run.in.res0 != nil {
		s.ResumedFrom = &run.in.from
		s.StreamUpdatesPerSecond = float64(res.AfterUpdates) / (run.in.checked + run.EndToEnd).Seconds()
	}
	if c.json {
		return json.NewEncoder(w).Encode(s)
	}
	resumed, since, whole := resumedLines(s)
	_, err := fmt.Fprintf(w, `stream        %s
vertices      %d
updates       %d
components    %d
%singestion     %.3f s end to end, %s updates/s%s (insertion %.3f s + final flush %.3f s%s)
%squery         %s
sketch        %s (%d set(s), %d bytes per vertex, %d columns × %d rows + 1 buckets)
hot path      %s sketch kernel, huge pages %s (kernel setting: %s), %s on %s
peak RSS      %s
%s`, s.Stream, s.Vertices, s.Updates, s.Components, resumed,
		s.EndToEndSeconds, cli.HumanCount(s.UpdatesPerSecond), since, s.IngestSeconds, s.FlushSeconds, midQueries(run.queries),
		whole, queryLine(res),
		ingest.FormatBytes(s.SketchBytes), p.Sets(), s.SketchBytesPerVertex, s.SketchColumns, s.SketchRows,
		s.SketchKernel, map[bool]string{false: "off", true: "on"}[s.HugePages], s.TransparentHugePages, cli.Count(s.Readers, "reader"), cli.Count(s.MainCores, "core"),
		ingest.FormatBytes(s.PeakRSSBytes), c.kconn.Summary())
	if err != nil || len(run.queries) < 2 && (len(run.queries) == 0 || len(run.queries[0].Points) == 0) {
		return err
	}
	fmt.Fprintf(w, "\n%14s %11s%s %7s %9s %9s %9s  %s\n", "after updates", "components", c.kconn.Columns(false, 0), "greedy", "flush s", "cc s", "total s", "point queries connected")
	for _, q := range run.queries {
		conn := 0
		for _, pa := range q.Points {
			if pa.Connected {
				conn++
			}
		}
		pts := "-"
		if len(q.Points) > 0 {
			pts = fmt.Sprintf("%d of %d", conn, len(q.Points))
		}
		_, err = fmt.Fprintf(w, "%14d %11d%s %7v %9.4f %9.4f %9.4f  %s\n", q.AfterUpdates, q.Components, c.kconn.Columns(true, q.AfterUpdates), q.Greedy,
			q.FlushSeconds, q.CCSeconds, q.TotalSeconds, pts)
	}
	return err
}

// resumedLines returns the text summary's parts for a resumed run (""
// otherwise): the "resumed" line, what the ingestion rate covers, and the
// "whole stream" line with the rate this run answered the stream at.
func resumedLines(s summary) (resumed, since, whole string) {
	if s.ResumedFrom == nil {
		return "", "", ""
	}
	from := *s.ResumedFrom
	resumed = fmt.Sprintf("resumed       from update %d (the stream up to there checked against the checkpoint in %.3f s)\n",
		from, s.PrefixCheckSeconds)
	since = fmt.Sprintf(" over the %d updates since", s.Updates-from)
	whole = fmt.Sprintf("whole stream  %d updates answered in %.3f s with the prefix check, %s updates/s\n",
		s.Updates, s.PrefixCheckSeconds+s.EndToEndSeconds, cli.HumanCount(s.StreamUpdatesPerSecond))
	return resumed, since, whole
}

// queryLine describes how the final answer was computed.
func queryLine(res *cc.Result) string {
	if res.Greedy {
		return fmt.Sprintf("answered from the greedy DSU in %.4f s (no flush needed)", res.CC.Seconds())
	}
	return fmt.Sprintf("Boruvka %.4f s after the flush: %d rounds, %d merges, %d failed samples (retried in later rounds)",
		res.CC.Seconds(), res.Boruvka.Rounds, res.Boruvka.Merges, res.Boruvka.Fails)
}

// midQueries is the summary's share of the mid-stream queries, all but
// the last of queries: " + K mid-stream queries S s", or "" when there
// were none.
func midQueries(queries []queryRecord) string {
	if len(queries) < 2 {
		return ""
	}
	var sec float64
	for _, q := range queries[:len(queries)-1] {
		sec += q.TotalSeconds
	}
	return fmt.Sprintf(" + %d mid-stream queries %.3f s", len(queries)-1, sec)
}

// writeOutputs writes the --labels and --forest files, their names
// followed by suffix.
func writeOutputs(c config, res *cc.Result, suffix string) error {
	return cli.WriteComponents(c.labels, c.forest, suffix, res.Labels, res.Forest.Edges)
}
