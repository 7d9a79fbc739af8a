package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/topic/envelope"
)

// The modes of a run.
const (
	// ModeCluster runs three pystream-server processes, one broker and
	// one Raft voter each.
	ModeCluster = "cluster"
	// ModeEmbedded runs one pystream-server process with three brokers.
	ModeEmbedded = "embedded"
)

// Options configures a run.
type Options struct {
	// Mode is ModeCluster or ModeEmbedded.
	Mode string
	// Seed chooses every fault; the same seed strikes the same way.
	Seed uint64
	// Duration is how long faults strike; the run takes longer (start,
	// the last heal, the final reads and checks).
	Duration time.Duration
	// FailoverAfter is the cluster's PYSTREAM_FAILOVER_AFTER.
	FailoverAfter time.Duration
	// Out is the evidence directory: history.json, violations.json,
	// table.txt and every node's log. Data directories are kept there
	// too when a violation is found.
	Out string
	// Server and CLI are the pystream-server and pystream binaries.
	Server, CLI string
	// Partitions is the topic's partition count (replication factor 3).
	Partitions int
	// Log receives the run's progress lines.
	Log io.Writer
}

// ErrViolations is Run's error when the checker found a violation.
var ErrViolations = errors.New("chaos: violations found")

// Result is what a run found.
type Result struct {
	History *History
	Report  *Report
	Rows    []Row
}

// Run runs the suite once: it starts the nodes, runs the workload and
// the faults for opts.Duration, heals, reads every partition through
// every node, stops the nodes cleanly, verifies and compares every
// replica, checks the history and keeps the evidence in opts.Out. Its
// error wraps ErrViolations when the checker found any; every process is
// killed and the tmpfs unmounted before it returns.
func Run(ctx context.Context, opts Options) (res *Result, err error) {
	logf := func(format string, args ...any) {
		fmt.Fprintf(opts.Log, "%s chaos: %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
	if opts.Partitions <= 0 {
		opts.Partitions = 3
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	dataRoot := filepath.Join(opts.Out, "data")
	if err := os.RemoveAll(dataRoot); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	nodes, err := NewNodes(opts.Mode, opts.Server, dataRoot, opts.Out, opts.FailoverAfter)
	if err != nil {
		return nil, err
	}
	keepData := false
	diskNode := 1 + rng.IntN(len(nodes.Nodes))
	disk, derr := MountDisk(nodes.Node(diskNode).DataDir, 512)
	if derr != nil {
		logf("disk-full is skipped: %v", derr)
	}
	defer func() {
		nodes.Close()
		if disk != nil {
			if keepData {
				kept := filepath.Join(opts.Out, fmt.Sprintf("data-node-%d-tmpfs", diskNode))
				if out, err := exec.Command("cp", "-a", disk.Dir, kept).CombinedOutput(); err != nil {
					logf("node %d's data could not be kept: %v: %s", diskNode, err, out)
				}
			}
			if uerr := disk.Unmount(); uerr != nil {
				logf("%v", uerr)
			}
		}
		if !keepData {
			_ = os.RemoveAll(dataRoot)
		}
	}()

	h := &History{Seed: opts.Seed, Mode: opts.Mode, Topic: "chaos", Partitions: opts.Partitions, FailoverAfter: opts.FailoverAfter}
	logf("seed %d, mode %s, %v of faults, PYSTREAM_FAILOVER_AFTER=%v, evidence in %s", opts.Seed, opts.Mode, opts.Duration, opts.FailoverAfter, opts.Out)
	for _, n := range nodes.Nodes {
		if err := n.Start(); err != nil {
			return nil, err
		}
	}
	for _, n := range nodes.Nodes {
		if err := n.WaitReady(ctx, 60*time.Second); err != nil {
			return nil, fmt.Errorf("chaos: the cluster did not start (logs in %s): %w", opts.Out, err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, _, err = nodes.Node(1).Client.CreateTopic(cctx, h.Topic, opts.Partitions, 3)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("chaos: create the topic: %w", err)
	}
	if err := WaitHealthy(ctx, nodes, h.Topic, 60*time.Second); err != nil {
		return nil, fmt.Errorf("chaos: the new topic: %w", err)
	}

	h.Start = time.Now()
	wl := &Workload{Nodes: nodes, History: h, Topic: h.Topic, Partitions: opts.Partitions, HTTPProducers: 3, KafkaProducers: 1, Group: "chaos-group", Logf: logf}
	wctx, stopWorkload := context.WithCancel(ctx)
	workloadDone := make(chan struct{})
	go func() {
		defer close(workloadDone)
		wl.Run(wctx)
	}()
	in := &injector{nodes: nodes, history: h, rng: rng, kinds: Kinds(opts.Mode, disk != nil), disk: disk, diskNode: diskNode,
		topic: h.Topic, partitions: opts.Partitions, failoverAfter: opts.FailoverAfter, logf: logf}
	end := time.Now().Add(opts.Duration)
	sleep(ctx, 2*time.Second) // a quiet start: the history has writes before the first fault
	for time.Now().Before(end) && ctx.Err() == nil {
		in.One(ctx)
		sleep(ctx, time.Duration(500+rng.IntN(1500))*time.Millisecond)
	}
	sleep(ctx, 2*time.Second) // a quiet end
	stopWorkload()
	<-workloadDone
	if ctx.Err() != nil {
		return nil, fmt.Errorf("chaos: the run was interrupted: %w", ctx.Err())
	}

	logf("healing: waiting for the cluster to be whole")
	if err := WaitHealthy(ctx, nodes, h.Topic, 120*time.Second); err != nil {
		h.AddProblem("the cluster was not whole after the run: %v", err)
	}
	finalReads(ctx, nodes, h)
	wl.finalCommits(ctx)
	logf("stopping every node with SIGTERM")
	for _, n := range nodes.Nodes {
		if n.Running() {
			if err := n.Stop(60 * time.Second); err != nil {
				h.AddProblem("%v", err)
			}
		}
	}
	finalReplicas(nodes, h, opts.CLI)
	h.End = time.Now()

	report := Check(h)
	res = &Result{History: h, Report: report, Rows: Table(h, report, in.kinds)}
	if err := keep(opts.Out, res); err != nil {
		return res, err
	}
	acked := 0
	for _, c := range h.Commits {
		if c.Kind == CommitAcked {
			acked++
		}
	}
	logf("the group committed %d times", acked)
	logf("%d writes: %d acknowledged, %d unknown (%d of them in the log), %d failed; %d records; %d duplicates of HTTP writes sent again",
		len(h.Writes), report.Acked, report.Unknown, report.UnknownPresent, report.Failed, report.Records, report.Duplicates)
	if len(report.Violations) > 0 {
		keepData = true
		for i, v := range report.Violations {
			if i == 20 {
				logf("... and %d more in %s", len(report.Violations)-20, filepath.Join(opts.Out, "violations.json"))
				break
			}
			logf("VIOLATION %s", v)
		}
		return res, fmt.Errorf("%w: %d (%v); evidence in %s", ErrViolations, len(report.Violations), report.Kinds(), opts.Out)
	}
	return res, nil
}

// keep writes the evidence: history.json, violations.json, table.txt.
func keep(out string, res *Result) error {
	if err := res.History.Save(filepath.Join(out, "history.json")); err != nil {
		return err
	}
	data, err := json.MarshalIndent(res.Report, "", "  ")
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out, "violations.json"), data, 0o644); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	var buf bytes.Buffer
	if err := PrintTable(&buf, res.Rows); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "table.txt"), buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	return nil
}

// finalReads reads every partition from its start to its high watermark
// through every node.
func finalReads(ctx context.Context, nodes *Nodes, h *History) {
	h.FinalHighWatermarks = make([]uint64, h.Partitions)
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	d, err := nodes.Node(1).Client.Topic(rctx, h.Topic)
	cancel()
	if err != nil {
		h.AddProblem("the final high watermarks: %v", err)
		return
	}
	for _, ps := range d.Partitions {
		h.FinalHighWatermarks[ps.Partition] = ps.HighWatermark
	}
	for _, n := range nodes.Nodes {
		for p := range h.Partitions {
			f := FinalLog{Source: fmt.Sprintf("api node %d", n.ID), Partition: p}
			for next, tries := uint64(0), 0; next < h.FinalHighWatermarks[p] && tries < 100000; tries++ {
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				res, err := n.Client.Fetch(rctx, h.Topic, p, next, 5000)
				cancel()
				if err != nil {
					h.AddProblem("the final read of partition %d through node %d at %d: %v", p, n.ID, next, err)
					break
				}
				for _, r := range res.Records {
					f.Entries = append(f.Entries, Entry{Offset: r.Offset, Value: string(r.Value)})
				}
				if res.NextOffset <= next {
					break
				}
				next = res.NextOffset
			}
			h.Final = append(h.Final, f)
		}
	}
}

// finalCommits reads the group's committed offsets back once more.
func (w *Workload) finalCommits(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	desc, err := w.Nodes.Node(1).Client.Group(rctx, w.Group)
	if err != nil {
		w.History.AddProblem("the group's final committed offsets: %v", err)
		return
	}
	for _, o := range desc.Offsets {
		if o.Topic == w.Topic && o.CommittedOffset != nil {
			w.History.AddCommit(Commit{Group: w.Group, Partition: o.Partition, Kind: CommitObserved, Offset: *o.CommittedOffset, At: time.Now()})
		}
	}
}

// replicaDirs lists every replica directory of partition p: one per node
// in cluster mode, one per broker of the embedded server.
func replicaDirs(nodes *Nodes, topic string, p int) map[string]string {
	out := map[string]string{}
	for _, n := range nodes.Nodes {
		if nodes.Mode == ModeEmbedded {
			for b := 1; b <= 3; b++ {
				out[fmt.Sprintf("replica broker %d", b)] = cluster.ReplicaDir(n.DataDir, b, topic, p)
			}
			continue
		}
		out[fmt.Sprintf("replica node %d", n.ID)] = cluster.ReplicaDir(n.DataDir, n.ID, topic, p)
	}
	return out
}

// finalReplicas checks every replica after the clean stop: `pystream log
// verify` accepts it, its records are a final view of the partition, and
// its segment files are byte for byte those of the other replicas.
func finalReplicas(nodes *Nodes, h *History, cli string) {
	for p := range h.Partitions {
		dirs := replicaDirs(nodes, h.Topic, p)
		var firstName string
		var first map[string][]byte
		for _, name := range sortedKeys(dirs) {
			dir := dirs[name]
			if out, err := exec.Command(cli, "log", "verify", dir).CombinedOutput(); err != nil {
				h.AddProblem("pystream log verify %s (%s, partition %d): %v: %s", dir, name, p, err, strings.TrimSpace(string(out)))
			}
			f := FinalLog{Source: name, Partition: p}
			err := segment.ScanDir(dir, log.Options{}, func(_ segment.SegmentInfo, _ int64, rec log.Record) error {
				f.Entries = append(f.Entries, Entry{Offset: rec.Offset, Value: string(envelope.Decode(rec.Payload).Value)})
				return nil
			})
			if err != nil {
				h.AddProblem("reading %s (%s, partition %d): %v", dir, name, p, err)
				continue
			}
			h.Final = append(h.Final, f)
			files, err := segmentFiles(dir)
			if err != nil {
				h.AddProblem("%v", err)
				continue
			}
			if first == nil {
				firstName, first = name, files
				continue
			}
			if diff := compareFiles(first, files); diff != "" {
				h.AddProblem("partition %d: %s and %s differ: %s", p, firstName, name, diff)
			}
		}
	}
}

// segmentFiles reads every segment file (*.log) of a replica directory.
func segmentFiles(dir string) (map[string][]byte, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	out := map[string][]byte{}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("chaos: %w", err)
		}
		out[filepath.Base(name)] = data
	}
	return out, nil
}

// compareFiles says how two replicas' segment files differ, "" when they
// are the same.
func compareFiles(a, b map[string][]byte) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d segment files against %d (%v, %v)", len(a), len(b), sortedKeys(a), sortedKeys(b))
	}
	for _, name := range sortedKeys(a) {
		other, ok := b[name]
		if !ok {
			return "no " + name
		}
		if !bytes.Equal(a[name], other) {
			i := 0
			for i < min(len(a[name]), len(other)) && a[name][i] == other[i] {
				i++
			}
			return fmt.Sprintf("%s: %d bytes against %d, first difference at byte %d", name, len(a[name]), len(other), i)
		}
	}
	return ""
}

// sortedKeys is m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
