package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/server/apiclient"
)

// These tests run segments and retention as an operator meets them
// (docs/phase-1-log.md § Segments and retention): the real server binary
// on a loopback port, its embedded three-broker cluster, and the real
// pystream CLI for everything a user would type.

// retentionCheckInterval is PYSTREAM_RETENTION_CHECK_INTERVAL in these
// tests, and retentionCheckEvery its setting.
const retentionCheckInterval = 200 * time.Millisecond

var retentionCheckEvery = "PYSTREAM_RETENTION_CHECK_INTERVAL=" + retentionCheckInterval.String()

// sidecarAllowance is the most a sealed segment's sidecar may add to a
// replica's disk use in these tests: a segment of at most 1 KiB has a
// header and one sparse index entry, well under it.
const sidecarAllowance = 128

// replicaDisk is what one replica directory holds on disk.
type replicaDisk struct {
	logBytes, sidecarBytes int64
	segments               int
	// epochsBytes is the size of the leader-epoch history
	// (cluster.EpochsFileName): a line per leader run.
	epochsBytes int64
	// snapshots counts the producer snapshots (cluster.ProducerSnapshotsKept
	// at most); others are the names of files that are none of these.
	snapshots int
	others    []string
}

// diskOf sums the sizes of the files of broker id's replica of a
// partition under the data directory root.
func diskOf(t *testing.T, root string, id int, name string, p int) replicaDisk {
	t.Helper()
	dir := cluster.ReplicaDir(root, id, name, p)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var d replicaDisk
	for _, e := range entries {
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted by a pass while listed
		}
		require.NoError(t, err)
		switch {
		case isSegmentName(e.Name()):
			d.logBytes += info.Size()
			d.segments++
		case isSidecarName(e.Name()):
			d.sidecarBytes += info.Size()
		case isSnapshotName(e.Name()):
			d.snapshots++
		case e.Name() == cluster.EpochsFileName:
			d.epochsBytes += info.Size()
		default:
			d.others = append(d.others, e.Name())
		}
	}
	return d
}

func isSegmentName(name string) bool { _, ok := segment.ParseSegmentFileName(name); return ok }
func isSidecarName(name string) bool { _, ok := segment.ParseSidecarFileName(name); return ok }
func isSnapshotName(name string) bool {
	_, ok := cluster.ParseProducerSnapshotFileName(name)
	return ok
}

// withinBound reports whether d keeps the steady-state bound of the
// issue's Measure section: at most retention.bytes plus one segment of
// segment.bytes, plus a small sidecar per segment.
func (d replicaDisk) withinBound(retentionBytes, segmentBytes int64) (bool, string) {
	limit := retentionBytes + segmentBytes
	why := fmt.Sprintf("%d segment bytes in %d segments (limit %d), %d sidecar bytes, %d producer snapshots, %d bytes of leader-epoch history, other files %v",
		d.logBytes, d.segments, limit, d.sidecarBytes, d.snapshots, d.epochsBytes, d.others)
	return d.logBytes <= limit && d.sidecarBytes <= int64(d.segments)*sidecarAllowance && d.epochsBytes <= epochsAllowance &&
		d.snapshots <= cluster.ProducerSnapshotsKept && len(d.others) == 0, why
}

// epochsAllowance bounds a replica's leader-epoch history in these tests,
// which change leaders a few times at most: about a hundred runs.
const epochsAllowance = 4 << 10

// waitFor is logtest.WaitFor.
var waitFor = logtest.WaitFor

// producedLine is one line of pystream produce's text output.
var producedLine = regexp.MustCompile(`^partition (\d+) offset (\d+)$`)

// parseProduced reads pystream produce's output: the partition and offset
// of every acknowledged line, in stdin's order.
func parseProduced(t *testing.T, out string) [][2]uint64 {
	t.Helper()
	var acks [][2]uint64
	for line := range strings.Lines(out) {
		m := producedLine.FindStringSubmatch(strings.TrimSpace(line))
		require.NotNil(t, m, "produce printed %q", line)
		p, _ := strconv.ParseUint(m[1], 10, 64)
		o, _ := strconv.ParseUint(m[2], 10, 64)
		acks = append(acks, [2]uint64{p, o})
	}
	return acks
}

// readAll fetches a partition from its log start to its high watermark,
// requiring dense offsets, and returns the values by offset with the
// range read.
func readAll(t *testing.T, ctx context.Context, c *apiclient.Client, name string, p int) (values map[uint64]string, logStart, hw uint64) {
	t.Helper()
	first, err := c.PartitionOffsets(ctx, name, p, apiclient.OffsetsEarliest)
	require.NoError(t, err)
	logStart, hw = first.LogStart, first.HighWatermark
	values = map[uint64]string{}
	for next := logStart; next < hw; {
		res, err := c.Fetch(ctx, name, p, next, 1000)
		require.NoError(t, err, "fetch %s/%d at %d", name, p, next)
		require.NotEmpty(t, res.Records, "fetch %s/%d at %d below the high watermark %d", name, p, next, hw)
		for _, r := range res.Records {
			require.Equal(t, next, r.Offset, "%s/%d: offsets are dense", name, p)
			values[r.Offset] = string(r.Value)
			next++
		}
	}
	return values, logStart, hw
}

// docs/design.md § Topic configuration and docs/phase-6-network-api.md §
// Consume, through the CLI and the HTTP API of the real binary: a topic
// created with segment.bytes=1024 and retention.bytes=4096 rolls a segment
// per batch; the retention pass moves the log start up on every replica; a
// fetch below it is 416 offset_out_of_range with log_start and
// high_watermark; pystream consume resets to the log start with a note
// (earliest, the default) or exits 1 naming both numbers (none); offsets by
// time answer within the readable range; the journal names the removed
// segments; topic describe shows the configuration and alter-config changes
// it; and every replica's disk stays within retention.bytes plus one
// segment after a pass.
func TestRetentionEmbeddedThroughTheCLI(t *testing.T) {
	bin, cli := buildBinary(t), buildCLI(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dataDir := filepath.Join(t.TempDir(), "data")
	s := startBinary(t, ctx, bin, dataDir, retentionCheckEvery)
	defer s.stop(t)
	url := s.client.BaseURL()

	out := runCLI(t, ctx, cli, url, "", "topic", "create", "t", "-r", "3",
		"--config", "segment.bytes=1024", "--config", "retention.bytes=4096", "--config", "retention.ms=-1")
	require.Equal(t, 0, out.code, "topic create: %s", out.stderr)

	// One pystream produce per batch of 15 lines (about 750 bytes framed,
	// plain values: not idempotent, whose records carry their producer's
	// identity too): each batch fits a 1 KiB segment and the next one
	// rolls.
	acked := map[uint64]string{}
	produce := func(rounds int) {
		for range rounds {
			var lines strings.Builder
			first := len(acked)
			for i := range 15 {
				fmt.Fprintf(&lines, "record-%05d-padding-to-fifty-bytes-xxxxxxxxxx\n", first+i)
			}
			res := runCLI(t, ctx, cli, url, lines.String(), "produce", "t", "--idempotent=false")
			require.Equal(t, 0, res.code, "produce: %s", res.stderr)
			acks := parseProduced(t, res.stdout)
			require.Len(t, acks, 15)
			for i, a := range acks {
				require.Equal(t, uint64(0), a[0])
				require.NotContains(t, acked, a[1], "offset %d acknowledged twice", a[1])
				acked[a[1]] = fmt.Sprintf("record-%05d-padding-to-fifty-bytes-xxxxxxxxxx", first+i)
			}
		}
	}
	// settled waits until every replica is within the bound and the fetch
	// answer has reported the same log start for several check
	// intervals: a pass deletes segment by segment, and its first
	// deletions may already bring a replica within the bound and its
	// one-segment slack.
	settled := func(retentionBytes int64) (logStart, hw uint64) {
		var seen uint64
		var since time.Time
		waitFor(t, 10*time.Second, "the retention pass bounds every replica", func() (bool, string) {
			res, err := s.client.Fetch(ctx, "t", 0, uint64(len(acked)-1), 1)
			if err != nil {
				return false, err.Error()
			}
			logStart, hw = res.LogStart, res.HighWatermark
			if logStart == 0 {
				return false, "log start still 0"
			}
			if logStart != seen {
				seen, since = logStart, time.Now()
				return false, fmt.Sprintf("log start moved to %d", logStart)
			}
			if time.Since(since) < 3*retentionCheckInterval {
				return false, fmt.Sprintf("log start %d, waiting for passes that delete nothing", logStart)
			}
			for id := 1; id <= 3; id++ {
				if ok, why := diskOf(t, dataDir, id, "t", 0).withinBound(retentionBytes, 1024); !ok {
					return false, fmt.Sprintf("broker %d: %s", id, why)
				}
			}
			return true, ""
		})
		return logStart, hw
	}

	produce(20)
	firstStart, hw := settled(4096)
	require.Equal(t, uint64(len(acked)), hw)
	// Steady state under more load: the bound holds after the next pass.
	produce(10)
	logStart, hw := settled(4096)
	require.Equal(t, uint64(len(acked)), hw)
	require.Greater(t, logStart, firstStart, "more load, a higher log start")
	t.Logf("log start %d, high watermark %d", logStart, hw)

	// A fetch below the log start, over HTTP.
	resp, err := http.Get(fmt.Sprintf("%s/api/topics/t/partitions/0/records?offset=0", url))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusRequestedRangeNotSatisfiable, resp.StatusCode, "%s", body)
	var refusal struct {
		Error struct {
			Code          string  `json:"code"`
			Message       string  `json:"message"`
			LogStart      *uint64 `json:"log_start"`
			HighWatermark *uint64 `json:"high_watermark"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &refusal), "%s", body)
	require.Equal(t, "offset_out_of_range", refusal.Error.Code)
	require.NotNil(t, refusal.Error.LogStart, "%s", body)
	require.NotNil(t, refusal.Error.HighWatermark, "%s", body)
	require.GreaterOrEqual(t, *refusal.Error.LogStart, logStart)
	require.Equal(t, hw, *refusal.Error.HighWatermark)
	require.NotContains(t, refusal.Error.Message, dataDir, "the answer names no path")
	require.NotContains(t, refusal.Error.Message, ".log", "the answer names no file")
	// The same through the Go client of the API: the typed error.
	_, err = s.client.Fetch(ctx, "t", 0, logStart-1, 10)
	var oor *apiclient.OffsetOutOfRangeError
	require.ErrorAs(t, err, &oor)
	require.Equal(t, hw, oor.HighWatermark)
	require.Greater(t, oor.LogStart, logStart-1)

	// Nothing is produced from here on: the log start is final once every
	// replica is within the bound (a pass finds nothing more to delete).
	logStart = *refusal.Error.LogStart

	// pystream consume from 0: a note, then every record from the log start
	// on (--offset-reset earliest is the default).
	res := runCLI(t, ctx, cli, url, "", "consume", "t", "-p", "0", "-o", "0", "-e", "-f", "%o %v\n")
	require.Equal(t, 0, res.code, "consume: %s", res.stderr)
	require.Contains(t, res.stderr, "note")
	require.Contains(t, res.stderr, fmt.Sprintf("below the log start %d", logStart))
	lines := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
	require.Len(t, lines, int(hw-logStart), "one line per record from the log start to the high watermark")
	for i, line := range lines {
		off := logStart + uint64(i)
		require.Equal(t, fmt.Sprintf("%d %s", off, acked[off]), line)
	}
	// --offset-reset none: exit 1 naming the log start and the high
	// watermark, and no record printed.
	res = runCLI(t, ctx, cli, url, "", "consume", "t", "-p", "0", "-o", "0", "-e", "--offset-reset", "none")
	require.Equal(t, 1, res.code, "stdout %q stderr %q", res.stdout, res.stderr)
	require.Empty(t, res.stdout)
	require.Contains(t, res.stderr, strconv.FormatUint(logStart, 10))
	require.Contains(t, res.stderr, strconv.FormatUint(hw, 10))

	// Offsets by time.
	offs := func(at string) *apiclient.PartitionOffsetsResponse {
		t.Helper()
		o, err := s.client.PartitionOffsets(ctx, "t", 0, at)
		require.NoError(t, err, "offsets at %s", at)
		require.Equal(t, logStart, o.LogStart)
		require.Equal(t, hw, o.HighWatermark)
		return o
	}
	require.Equal(t, logStart, offs("earliest").Offset)
	require.Equal(t, hw, offs("latest").Offset)
	require.Equal(t, logStart, offs("0").Offset, "a time before every record: the log start")
	late := offs(strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10))
	require.False(t, late.Found)
	require.Equal(t, hw, late.Offset)
	// A record's own time: the first offset at or after it, which is at or
	// before that record, and the record before the answer is earlier.
	mid := logStart + (hw-logStart)/2
	rec, err := s.client.Fetch(ctx, "t", 0, mid, 1)
	require.NoError(t, err)
	ts := rec.Records[0].TimestampMS
	at := offs(strconv.FormatInt(ts, 10))
	require.True(t, at.Found)
	require.LessOrEqual(t, at.Offset, mid)
	first, err := s.client.Fetch(ctx, "t", 0, at.Offset, 1)
	require.NoError(t, err)
	require.GreaterOrEqual(t, first.Records[0].TimestampMS, ts)
	if at.Offset > logStart {
		before, err := s.client.Fetch(ctx, "t", 0, at.Offset-1, 1)
		require.NoError(t, err)
		require.Less(t, before.Records[0].TimestampMS, ts)
	}

	// The journal, through the CLI: retention entries whose outcome names
	// the segments removed on every broker.
	res = runCLI(t, ctx, cli, url, "", "--json", "cluster", "journal")
	require.Equal(t, 0, res.code, "journal: %s", res.stderr)
	removedBelow := map[int]uint64{} // broker: the highest next of a removed segment
	for line := range strings.Lines(res.stdout) {
		var e apiclient.JournalEntry
		require.NoError(t, json.Unmarshal([]byte(line), &e), "%s", line)
		if e.Event != "retention" || e.Phase != "done" || e.Topic != "t" {
			continue
		}
		require.NotEmpty(t, e.Removed, "a retention outcome names its segments: %s", line)
		for _, r := range e.Removed {
			require.Less(t, r.Base, r.Next)
			removedBelow[r.Broker] = max(removedBelow[r.Broker], r.Next)
		}
	}
	for id := 1; id <= 3; id++ {
		require.Equal(t, logStart, removedBelow[id], "broker %d: the journal's removed segments end at the log start", id)
	}

	// The configuration, shown and changed by the CLI.
	res = runCLI(t, ctx, cli, url, "", "topic", "describe", "t")
	require.Equal(t, 0, res.code, "describe: %s", res.stderr)
	require.Regexp(t, `(?m)^retention\.bytes\s+4096\s+topic\s*$`, res.stdout)
	require.Regexp(t, `(?m)^retention\.ms\s+-1\s+topic\s*$`, res.stdout)
	require.Regexp(t, `(?m)^segment\.bytes\s+1024\s+topic\s*$`, res.stdout)
	require.Regexp(t, `(?m)^segment\.ms\s+\d+\s+default\s*$`, res.stdout)
	res = runCLI(t, ctx, cli, url, "", "topic", "alter-config", "t", "retention.bytes=2048")
	require.Equal(t, 0, res.code, "alter-config: %s", res.stderr)
	require.Regexp(t, `(?m)^retention\.bytes\s+2048\s+topic\s*$`, res.stdout)
	res = runCLI(t, ctx, cli, url, "", "topic", "alter-config", "t", "retention.bytes=lots")
	require.Equal(t, 1, res.code, "a bad value is refused")
	require.Contains(t, res.stderr, "retention.bytes")
	// The next passes keep to the new bound.
	newStart, _ := settled(2048)
	require.Greater(t, newStart, logStart, "a smaller retention.bytes moves the log start up")
}

// log/segment/doc.go (recovery): rolls and deletions are crash-safe. A server killed with SIGKILL in the middle of a load that
// rolls a segment every few records, with retention running, starts again
// with every acknowledged record at or above its log start readable, at
// the offset it was acknowledged with, offsets dense; and pystream log
// verify, the server stopped, finds no damage in the data directory.
func TestRetentionKillDuringLoadKeepsAcknowledged(t *testing.T) {
	bin, cli := buildBinary(t), buildCLI(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	dataDir := filepath.Join(t.TempDir(), "data")
	env := []string{retentionCheckEvery, "PYSTREAM_SEGMENT_BYTES=1024", "PYSTREAM_RETENTION_BYTES=16384"}
	s := startBinary(t, ctx, bin, dataDir, env...)
	url := s.client.BaseURL()
	out := runCLI(t, ctx, cli, url, "", "topic", "create", "load", "-p", "2", "-r", "3")
	require.Equal(t, 0, out.code, "topic create: %s", out.stderr)

	// ack is one acknowledged record.
	type ack struct {
		partition int
		offset    uint64
		value     string
	}
	var (
		mu    sync.Mutex
		acks  []ack
		wg    sync.WaitGroup
		stop  = make(chan struct{})
		start = time.Now()
	)
	// Two pystream produce processes, one per partition, fed a few lines at
	// a time, so that they send many small batches.
	for p := range 2 {
		cmd := exec.CommandContext(ctx, cli, "--server", url, "produce", "load", "-p", strconv.Itoa(p))
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		cmd.WaitDelay = 5 * time.Second
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		var sent []string
		var sentMu sync.Mutex
		wg.Go(func() {
			defer stdin.Close()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				line := fmt.Sprintf("p%d-%06d-some-padding-xxxxxxxxxxxxxxxxxxxx", p, i)
				sentMu.Lock()
				sent = append(sent, line)
				sentMu.Unlock()
				if _, err := io.WriteString(stdin, line+"\n"); err != nil {
					return // the producer has exited
				}
				if i%4 == 3 {
					time.Sleep(2 * time.Millisecond)
				}
			}
		})
		wg.Go(func() {
			lines := bufio.NewScanner(stdout)
			for i := 0; lines.Scan(); i++ {
				m := producedLine.FindStringSubmatch(lines.Text())
				if m == nil {
					t.Errorf("produce printed %q", lines.Text())
					continue
				}
				o, _ := strconv.ParseUint(m[2], 10, 64)
				sentMu.Lock()
				v := sent[i]
				sentMu.Unlock()
				mu.Lock()
				acks = append(acks, ack{partition: p, offset: o, value: v})
				mu.Unlock()
			}
			_ = cmd.Wait() // exits 1 once the server is gone
		})
	}
	// One HTTP producer beside them, one record per request.
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("http-%06d", i)
			rctx, done := context.WithTimeout(ctx, 2*time.Second)
			res, err := s.client.Produce(rctx, "load", []apiclient.ProduceRecord{{Value: []byte(v)}})
			done()
			if err != nil {
				return // the server is gone
			}
			r := res.Records[0]
			mu.Lock()
			acks = append(acks, ack{partition: r.Partition, offset: r.Offset, value: v})
			mu.Unlock()
		}
	})
	// Kill once enough has been acknowledged that many segments rolled and
	// retention deleted some.
	waitFor(t, 20*time.Second, "the load is well under way", func() (bool, string) {
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		return n >= 1500 && time.Since(start) > 1500*time.Millisecond, fmt.Sprintf("%d acknowledged", n)
	})
	s.kill(t)
	close(stop)
	wg.Wait()
	t.Logf("%d records acknowledged before the kill", len(acks))

	s = startBinary(t, ctx, bin, dataDir, env...)
	rctx, done := context.WithTimeout(ctx, 20*time.Second)
	defer done()
	waitFor(t, 20*time.Second, "the restarted server is ready", func() (bool, string) {
		_, err := s.client.Ready(rctx)
		return err == nil, fmt.Sprint(err)
	})
	var values [2]map[uint64]string
	var starts [2]uint64
	for p := range 2 {
		var hw uint64
		values[p], starts[p], hw = readAll(t, rctx, s.client, "load", p)
		t.Logf("partition %d: log start %d, high watermark %d", p, starts[p], hw)
	}
	lost := 0
	for _, a := range acks {
		if a.offset < starts[a.partition] {
			continue // deleted by retention, as it may be
		}
		got, ok := values[a.partition][a.offset]
		if !ok || got != a.value {
			lost++
			if lost <= 5 {
				t.Errorf("load/%d offset %d: acknowledged %q, read %q (present %v)", a.partition, a.offset, a.value, got, ok)
			}
		}
	}
	require.Zero(t, lost, "acknowledged records missing or changed after the restart")
	require.True(t, starts[0] > 0 || starts[1] > 0, "retention deleted segments during the load")
	s.stop(t)

	res := runCLI(t, ctx, cli, "", "", "log", "verify", dataDir)
	require.Equal(t, 0, res.code, "log verify:\n%s%s", res.stdout, res.stderr)
	require.NotContains(t, res.stdout, "DAMAGED")
	require.NotContains(t, res.stdout, "DIVERGED")
}

// log/segment/doc.go (recovery of a legacy log.bin): a data directory written before segments (testdata/datadir-single-file, whose
// README.txt says what it holds) opens with the new binary; the CLI reads
// every record and the committed offset; afterwards log verify finds it
// OK and no replica directory holds a log.bin any more.
func TestRetentionUpgradeSingleFileDataDir(t *testing.T) {
	bin, cli := buildBinary(t), buildCLI(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	src := filepath.Join("..", "..", "testdata", "datadir-single-file")
	dataDir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.CopyFS(dataDir, os.DirFS(src)))

	// What the old files hold, read with the phase-1 reader from the
	// untouched original.
	old := func(id int, name string, p int) []string {
		var out []string
		path := filepath.Join(cluster.ReplicaDir(src, id, name, p), "log.bin")
		require.NoError(t, log.ScanFileFrom(path, 0, log.Options{}, func(_ int64, rec log.Record) error {
			out = append(out, string(rec.Payload))
			return nil
		}))
		return out
	}
	want := map[string][][]string{
		"orders": {old(1, "orders", 0), old(2, "orders", 1)},
		"audit":  {old(1, "audit", 0)},
	}
	require.Len(t, want["orders"][0], 6)
	require.Len(t, want["orders"][1], 2)
	require.Len(t, want["audit"][0], 1)

	s := startBinary(t, ctx, bin, dataDir)
	url := s.client.BaseURL()
	for name, parts := range want {
		for p, values := range parts {
			res := runCLI(t, ctx, cli, url, "", "consume", name, "-p", strconv.Itoa(p), "-o", "start", "-e")
			require.Equal(t, 0, res.code, "consume %s/%d: %s", name, p, res.stderr)
			var got []string
			for i, line := range slicesOfLines(res.stdout) {
				var rec struct {
					Offset uint64 `json:"offset"`
					Value  string `json:"value"`
				}
				require.NoError(t, json.Unmarshal([]byte(line), &rec), "%s", line)
				require.Equal(t, uint64(i), rec.Offset)
				got = append(got, rec.Value)
			}
			require.Equal(t, values, got, "%s/%d", name, p)
		}
	}
	// billing's committed offset 3 survives: consume from it.
	res := runCLI(t, ctx, cli, url, "", "consume", "orders", "-p", "0", "--commit-as", "billing", "-e", "-f", "%o\n")
	require.Equal(t, 0, res.code, "consume: %s", res.stderr)
	require.Equal(t, "3\n4\n5\n", res.stdout)
	// Fetch answers report a log start of 0.
	f, err := s.client.Fetch(ctx, "orders", 0, 0, 10)
	require.NoError(t, err)
	require.Equal(t, uint64(0), f.LogStart)
	require.Equal(t, uint64(6), f.HighWatermark)
	s.stop(t)

	res = runCLI(t, ctx, cli, "", "", "log", "verify", dataDir)
	require.Equal(t, 0, res.code, "log verify:\n%s%s", res.stdout, res.stderr)
	require.NotContains(t, res.stdout, "not yet upgraded")
	var left []string
	require.NoError(t, filepath.WalkDir(dataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dataDir, path)
		if strings.HasPrefix(rel, "broker-") && d.Name() == "log.bin" {
			left = append(left, rel)
		}
		return nil
	}))
	require.Empty(t, left, "replica directories still holding a log.bin")
	for _, dir := range []string{cluster.ReplicaDir(dataDir, 1, "orders", 0), cluster.ReplicaDir(dataDir, 2, "orders", 1)} {
		_, err := os.Stat(filepath.Join(dir, segment.SegmentFileName(0)))
		require.NoError(t, err, "the old log is the first segment")
	}
}

// slicesOfLines splits text into its lines, without their newlines.
func slicesOfLines(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		out = append(out, strings.TrimSuffix(line, "\n"))
	}
	return out
}
