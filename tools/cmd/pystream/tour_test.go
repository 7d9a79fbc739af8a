package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/topic"
	"github.com/stretchr/testify/require"
)

// pys runs the binary against the server at url.
func pys(t *testing.T, url, stdin string, args ...string) result {
	t.Helper()
	return runEnv(t, []string{"PYSTREAM_SERVER=" + url}, stdin, args...)
}

// ok runs the binary and requires exit 0.
func ok(t *testing.T, url, stdin string, args ...string) result {
	t.Helper()
	r := pys(t, url, stdin, args...)
	require.Equal(t, 0, r.code, "pystream %v\nstdout: %s\nstderr: %s", args, r.stdout, r.stderr)
	return r
}

// describe returns topic describe --json.
func describe(t *testing.T, url, name string) apiclient.TopicDetail {
	t.Helper()
	var td apiclient.TopicDetail
	require.NoError(t, json.Unmarshal([]byte(ok(t, url, "", "topic", "describe", name, "--json").stdout), &td))
	return td
}

// committed returns the committed offset of id on topic/p from offsets
// describe --json, nil when none.
func committed(t *testing.T, url, id, topicName string, p int) *uint64 {
	t.Helper()
	var out struct {
		Offsets []struct {
			Topic     string  `json:"topic"`
			Partition int     `json:"partition"`
			Current   *uint64 `json:"current_offset"`
		} `json:"offsets"`
	}
	require.NoError(t, json.Unmarshal([]byte(ok(t, url, "", "offsets", "describe", id, topicName, "--json").stdout), &out))
	for _, o := range out.Offsets {
		if o.Topic == topicName && o.Partition == p {
			return o.Current
		}
	}
	t.Fatalf("no row for %s/%d", topicName, p)
	return nil
}

// keyFor returns a key that routes to partition p of n (phase 2's hash).
func keyFor(p, n int) string {
	for i := 0; ; i++ {
		k := fmt.Sprintf("key-%d", i)
		if topic.PartitionForKey([]byte(k), n) == p {
			return k
		}
	}
}

var landedLine = regexp.MustCompile(`^partition (\d+) offset (\d+)$`)

// TestCLITour runs the whole CLI tour of docs/cli.md through the binary against a
// real server: create, produce from stdin with keys, consume with a format,
// commit, describe offsets, stop a leader, fail over, recover, reset
// offsets.
func TestCLITour(t *testing.T) {
	// The break-and-heal tour is the manual mode of phase 5: no controller
	// failover, recovery or leader move (README.md § Five-minute tour).
	url := startServer(t, 3, "PYSTREAM_FAILOVER_AFTER=0")

	// Topics: create, the same again is fine, other settings conflict.
	r := ok(t, url, "", "topic", "create", "orders", "-p", "3", "-r", "2")
	require.Equal(t, "created topic orders (3 partitions, replication factor 2)\n", r.stdout)
	r = ok(t, url, "", "topic", "create", "orders", "-p", "3", "-r", "2")
	require.Contains(t, r.stdout, "already exists")
	r = pys(t, url, "", "topic", "create", "orders", "-p", "2", "-r", "2")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "[conflict]")
	r = ok(t, url, "", "topic", "list")
	require.Regexp(t, `(?m)^orders\s+3\s+2$`, r.stdout)

	// Produce keyed lines with -K: each lands on its key's partition, in
	// order, offsets dense per partition.
	var lines []string
	want := map[int][]string{}
	for i := range 12 {
		key := fmt.Sprintf("user-%d", i%4)
		val := fmt.Sprintf("event %d: a:b", i) // the value keeps later colons
		lines = append(lines, key+":"+val)
		p := topic.PartitionForKey([]byte(key), 3)
		want[p] = append(want[p], "["+key+"] "+val)
	}
	r = ok(t, url, strings.Join(lines, "\n")+"\n", "produce", "orders", "-K", ":")
	next := map[int]int{}
	for i, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		m := landedLine.FindStringSubmatch(line)
		require.NotNil(t, m, line)
		p, _ := strconv.Atoi(m[1])
		off, _ := strconv.Atoi(m[2])
		require.Equal(t, topic.PartitionForKey([]byte(fmt.Sprintf("user-%d", i%4)), 3), p, "routed by key")
		require.Equal(t, next[p], off, "dense offsets")
		next[p]++
	}

	// Consume each partition with a format and -e: every key and value,
	// in order.
	for p := range 3 {
		r = ok(t, url, "", "consume", "orders", "-p", strconv.Itoa(p), "-e", "-f", `%t/%p@%o [%k] %v\n`)
		var expect strings.Builder
		for i, kv := range want[p] {
			fmt.Fprintf(&expect, "orders/%d@%d %s\n", p, i, kv)
		}
		require.Equal(t, expect.String(), r.stdout)
	}
	// Without -p: every partition, %p naming each record's; within a
	// partition the records keep their order.
	r = ok(t, url, "", "consume", "orders", "-e", "-f", `%p@%o [%k] %v\n`)
	got := map[int][]string{}
	for _, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		var p, off int
		at, val, _ := strings.Cut(line, " ")
		_, err := fmt.Sscanf(at, "%d@%d", &p, &off)
		require.NoError(t, err, line)
		require.Equal(t, len(got[p]), off, "in order: %s", line)
		got[p] = append(got[p], val)
	}
	require.Equal(t, want, got)

	p0 := topic.PartitionForKey([]byte("user-0"), 3)
	ps := strconv.Itoa(p0)

	// Default output: one JSON object per line; -o -1 is the last record.
	r = ok(t, url, "", "consume", "orders", "-p", ps, "-e", "-o", "-1")
	var rec struct {
		Topic     string `json:"topic"`
		Partition int    `json:"partition"`
		Offset    uint64 `json:"offset"`
		Timestamp int64  `json:"timestamp"`
		Key       string `json:"key"`
		Value     string `json:"value"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rec))
	require.Equal(t, uint64(len(want[p0])-1), rec.Offset)
	require.Equal(t, want[p0][len(want[p0])-1], "["+rec.Key+"] "+rec.Value)
	require.Positive(t, rec.Timestamp)

	// --commit-as: read one and commit it, then resume after it.
	r = ok(t, url, "", "consume", "orders", "-p", ps, "-e", "-n", "1", "--commit-as", "c1", "-f", `[%k] %v\n`)
	require.Equal(t, want[p0][0]+"\n", r.stdout)
	require.Equal(t, uint64(1), *committed(t, url, "c1", "orders", p0))
	r = ok(t, url, "", "offsets", "describe", "c1")
	require.Regexp(t, `(?m)^TOPIC\s+PARTITION\s+CURRENT-OFFSET\s+LOG-START-OFFSET\s+LOG-END-OFFSET\s+LAG$`, r.stdout)
	require.Regexp(t, fmt.Sprintf(`(?m)^orders\s+%d\s+1\s+0\s+%d\s+%d$`, p0, len(want[p0]), len(want[p0])-1), r.stdout)
	r = ok(t, url, "", "consume", "orders", "-p", ps, "-e", "--commit-as", "c1", "-f", `[%k] %v\n`)
	require.Equal(t, strings.Join(want[p0][1:], "\n")+"\n", r.stdout)
	require.Equal(t, uint64(len(want[p0])), *committed(t, url, "c1", "orders", p0))

	// Offsets reset: the plan changes nothing; --execute applies it.
	r = ok(t, url, "", "offsets", "reset", "c1", "orders:"+ps, "--to-earliest")
	require.Regexp(t, fmt.Sprintf(`(?m)^orders\s+%d\s+%d\s+0$`, p0, len(want[p0])), r.stdout)
	require.Contains(t, r.stderr, "--execute")
	require.Equal(t, uint64(len(want[p0])), *committed(t, url, "c1", "orders", p0))
	ok(t, url, "", "offsets", "reset", "c1", "orders:"+ps, "--to-earliest", "--execute")
	require.Equal(t, uint64(0), *committed(t, url, "c1", "orders", p0))
	r = pys(t, url, "", "offsets", "reset", "c1", "orders:"+ps, "--to-offset", "999", "--execute")
	require.Equal(t, 1, r.code)
	require.Equal(t, uint64(0), *committed(t, url, "c1", "orders", p0))

	// Stop the leader of p0: producing there fails (exit 1, the server's
	// code), fail over, producing works, the old leader comes back and is
	// recovered into the active set.
	td := describe(t, url, "orders")
	leader := td.Partitions[p0].Leader
	ok(t, url, "", "broker", "stop", strconv.Itoa(leader))
	key := keyFor(p0, 3)
	r = pys(t, url, "x\n", "produce", "orders", "-k", key)
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "[unavailable]")
	r = ok(t, url, "", "partition", "failover", "orders", ps)
	require.Regexp(t, fmt.Sprintf(`^orders/%d: leader %d -> \d+, epoch 1, log end offset %d\n$`, p0, leader, len(want[p0])), r.stdout)
	r = ok(t, url, "after failover\n", "produce", "orders", "-k", key)
	require.Equal(t, fmt.Sprintf("partition %d offset %d\n", p0, len(want[p0])), r.stdout)
	ok(t, url, "", "broker", "start", strconv.Itoa(leader))
	require.NotContains(t, describe(t, url, "orders").Partitions[p0].Active, leader)
	r = ok(t, url, "", "partition", "recover", "orders", ps, strconv.Itoa(leader))
	require.Contains(t, r.stdout, fmt.Sprintf("broker %d recovered", leader))
	td = describe(t, url, "orders")
	require.Contains(t, td.Partitions[p0].Active, leader)
	require.Equal(t, uint64(len(want[p0])+1), td.Partitions[p0].HighWatermark)
	r = ok(t, url, "", "topic", "describe", "orders")
	require.Regexp(t, `(?m)^PARTITION\s+LEADER\s+EPOCH\s+PREFERRED\s+REPLICAS\s+ACTIVE\s+LOG-END\s+LAG\s+HIGH-WATERMARK$`, r.stdout)
	// The failed-over partition: a new leader, epoch 1, the old leader
	// still preferred.
	require.Regexp(t, fmt.Sprintf(`(?m)^%d\s+\d+\s+1\s+%d\s`, p0, leader), r.stdout)
	r = ok(t, url, "", "partition", "catch-up", "orders", ps, strconv.Itoa(leader))
	require.Contains(t, r.stdout, "copied 0")

	// cluster status lists the brokers, all available again; cluster alone
	// is cluster status.
	r = ok(t, url, "", "cluster", "status")
	require.Regexp(t, `(?m)^3\s+available$`, r.stdout)
	require.Equal(t, r.stdout, ok(t, url, "", "cluster").stdout)
	var cl apiclient.ClusterResponse
	require.NoError(t, json.Unmarshal([]byte(ok(t, url, "", "cluster", "status", "--json").stdout), &cl))
	require.Len(t, cl.Brokers, 3)

	// API errors: the server's message, exit 1.
	r = pys(t, url, "", "topic", "describe", "missing")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "[not_found]")
	r = pys(t, url, "", "partition", "failover", "orders", ps)
	require.Equal(t, 1, r.code, "the leader is alive")
	require.Contains(t, r.stderr, "[conflict]")
}

// TestCLIProduceBatching: a large stdin goes in several requests, every
// line acknowledged exactly once with dense offsets, and --json lines say
// where each landed.
func TestCLIProduceBatching(t *testing.T) {
	url := startServer(t, 1)
	ok(t, url, "", "topic", "create", "big", "-p", "1", "-r", "1")
	const n = 1234
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, "record-%d\n", i)
	}
	r := ok(t, url, in.String(), "produce", "big", "--json")
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	i := 0
	for sc.Scan() {
		var got struct {
			Topic     string `json:"topic"`
			Partition int    `json:"partition"`
			Offset    uint64 `json:"offset"`
			Leader    int    `json:"leader"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &got))
		require.Equal(t, "big", got.Topic)
		require.Equal(t, uint64(i), got.Offset)
		require.Equal(t, 1, got.Leader)
		i++
	}
	require.Equal(t, n, i)
	r = ok(t, url, "", "consume", "big", "-p", "0", "-e", "-o", "1000", "-n", "2", "-f", `%o=%v %S\n`)
	require.Equal(t, "1000=record-1000 11\n1001=record-1001 11\n", r.stdout)
	r = ok(t, url, "", "consume", "big", "-p", "0", "-e", "-o", "end")
	require.Empty(t, r.stdout)
}

// TestCLIConsumeFollowInterrupt: without -e consume follows the partition,
// prints records produced after it started, and Ctrl-C (SIGINT) makes it
// exit 0 with its position committed.
func TestCLIConsumeFollowInterrupt(t *testing.T) {
	url := startServer(t, 1)
	ok(t, url, "", "topic", "create", "live", "-p", "1", "-r", "1")
	ok(t, url, "a\nb\n", "produce", "live")

	f := startFollower(t, url, "consume", "live", "-p", "0", "--commit-as", "tail", "-f", `%o %v\n`)
	require.Equal(t, "0 a", f.next(t))
	require.Equal(t, "1 b", f.next(t))
	ok(t, url, "c\n", "produce", "live") // arrives while following
	require.Equal(t, "2 c", f.next(t))
	f.interrupt(t)
	require.Equal(t, uint64(3), *committed(t, url, "tail", "live", 0))

	// Started again with the same id, it resumes after what it printed.
	ok(t, url, "d\n", "produce", "live")
	r := ok(t, url, "", "consume", "live", "-p", "0", "-e", "--commit-as", "tail", "-f", `%o %v\n`)
	require.Equal(t, "3 d\n", r.stdout)

	// Replaying below the committed offset commits nothing (commits only
	// move forward) and says so; it is not an error.
	r = ok(t, url, "", "consume", "live", "-p", "0", "-e", "-o", "start", "-n", "2", "--commit-as", "tail", "-f", `%o\n`)
	require.Equal(t, "0\n1\n", r.stdout)
	require.Contains(t, r.stderr, "below the committed offset 4")
	require.Equal(t, uint64(4), *committed(t, url, "tail", "live", 0))
	// +N skips N records after the committed offset.
	ok(t, url, "e\nf\n", "produce", "live")
	r = ok(t, url, "", "consume", "live", "-p", "0", "-e", "-o", "+1", "--commit-as", "tail", "-f", `%o %v\n`)
	require.Equal(t, "5 f\n", r.stdout)
	require.Equal(t, uint64(6), *committed(t, url, "tail", "live", 0))
}

// TestCLIConsumeAllPartitionsCommit: consume without -p follows every
// partition, commits each partition's own position as --commit-as, and
// with -n and a second run reads every record exactly once (docs/cli.md,
// consume).
func TestCLIConsumeAllPartitionsCommit(t *testing.T) {
	url := startServer(t, 1)
	ok(t, url, "", "topic", "create", "many", "-p", "2", "-r", "1")
	k0, k1 := keyFor(0, 2), keyFor(1, 2)
	ok(t, url, k0+":a\n"+k1+":b\n"+k0+":c\n", "produce", "many", "-K", ":")

	// -n 2 stops inside the round; what it printed is committed, per
	// partition, and the next run prints the rest.
	first := ok(t, url, "", "consume", "many", "-e", "-n", "2", "--commit-as", "both", "-f", `%p:%v\n`).stdout
	second := ok(t, url, "", "consume", "many", "-e", "--commit-as", "both", "-f", `%p:%v\n`).stdout
	lines := strings.Split(strings.TrimSuffix(first+second, "\n"), "\n")
	slices.Sort(lines)
	require.Equal(t, []string{"0:a", "0:c", "1:b"}, lines, "exactly once: %q then %q", first, second)
	require.Equal(t, uint64(2), *committed(t, url, "both", "many", 0))
	require.Equal(t, uint64(1), *committed(t, url, "both", "many", 1))

	// Following without -e: records produced to either partition arrive;
	// Ctrl-C commits both partitions' positions.
	f := startFollower(t, url, "consume", "many", "--commit-as", "both", "-f", `%p:%o %v\n`)
	ok(t, url, k1+":d\n", "produce", "many", "-K", ":")
	require.Equal(t, "1:1 d", f.next(t))
	ok(t, url, k0+":e\n", "produce", "many", "-K", ":")
	require.Equal(t, "0:2 e", f.next(t))
	f.interrupt(t)
	require.Equal(t, uint64(3), *committed(t, url, "both", "many", 0))
	require.Equal(t, uint64(2), *committed(t, url, "both", "many", 1))
}

// TestCLITimestampUnits pins docs/cli.md § Timestamps: every timestamp
// number is nanoseconds, as in the API (produce --json, consume's JSON),
// except consume -f's %T, milliseconds as kcat's, the same instant divided
// by 10^6.
func TestCLITimestampUnits(t *testing.T) {
	url := startServer(t, 1)
	ok(t, url, "", "topic", "create", "ts", "-p", "1", "-r", "1")
	before := time.Now().UnixNano()
	var produced struct {
		Timestamp int64 `json:"timestamp"`
	}
	require.NoError(t, json.Unmarshal([]byte(ok(t, url, "x\n", "produce", "ts", "--json").stdout), &produced))
	after := time.Now().UnixNano()
	require.GreaterOrEqual(t, produced.Timestamp, before, "nanoseconds")
	require.LessOrEqual(t, produced.Timestamp, after, "nanoseconds")

	var consumed struct {
		Timestamp int64 `json:"timestamp"`
	}
	require.NoError(t, json.Unmarshal([]byte(ok(t, url, "", "consume", "ts", "-e").stdout), &consumed))
	require.Equal(t, produced.Timestamp, consumed.Timestamp)

	r := ok(t, url, "", "consume", "ts", "-e", "-f", `%T\n`)
	require.Equal(t, strconv.FormatInt(produced.Timestamp/1e6, 10)+"\n", r.stdout, "milliseconds")
}

// TestCLIBenchServer: bench produce and bench consume against a running
// server print the kafka-producer-perf-test line; --json carries the
// figures and the configuration.
func TestCLIBenchServer(t *testing.T) {
	url := startServer(t, 2)
	r := ok(t, url, "", "bench", "produce", "--records", "300", "--concurrency", "4", "--batch", "5",
		"--partitions", "2", "--rf", "2", "--topic", "perf")
	m := perfLine.FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	require.Equal(t, "300", m[1])
	td := describe(t, url, "perf")
	require.Equal(t, 2, td.PartitionCount)
	require.Equal(t, 2, td.ReplicationFactor)
	require.Equal(t, uint64(300), td.Partitions[0].HighWatermark+td.Partitions[1].HighWatermark)

	r = ok(t, url, "", "bench", "consume", "--topic", "perf", "--concurrency", "2", "--batch", "7")
	m = perfLine.FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	require.Equal(t, "300", m[1], "every record of the topic is read once")

	r = ok(t, url, "", "bench", "consume", "--records", "50", "--record-size", "10", "--json")
	var got struct {
		Benchmark string `json:"benchmark"`
		Config    struct {
			Topic string `json:"topic"`
		} `json:"config"`
		Records int64 `json:"records"`
		Bytes   int64 `json:"bytes"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Equal(t, "consume", got.Benchmark)
	require.Equal(t, int64(50), got.Records)
	require.Equal(t, int64(500), got.Bytes)
	require.True(t, strings.HasPrefix(got.Config.Topic, "bench-"), got.Config.Topic)

	r = ok(t, url, "", "topic", "list", "--json")
	var tl apiclient.TopicsResponse
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &tl))
	require.True(t, slices.ContainsFunc(tl.Topics, func(s apiclient.TopicSummary) bool { return s.Name == got.Config.Topic }))
}

// TestCLIBenchFreshTopic: without --topic, every bench run gets a topic of
// its own, even when another run made one moments ago with other settings
// (a conflict) or the same ones (whose records it would count as its own).
func TestCLIBenchFreshTopic(t *testing.T) {
	url := startServer(t, 1)
	now := time.Now().Unix()
	for s := now - 1; s <= now+5; s++ {
		name := fmt.Sprintf("bench-%d", s)
		ok(t, url, "", "topic", "create", name, "-p", "2")
		ok(t, url, "x\n", "produce", name)
	}
	for _, args := range [][]string{
		{"bench", "produce", "--records", "5", "--json", "--keep"},
		{"bench", "produce", "--records", "5", "--partitions", "2", "--json", "--keep"},
		{"bench", "consume", "--records", "5", "--partitions", "2", "--json"},
	} {
		r := ok(t, url, "", args...)
		var got struct {
			Config struct {
				Topic string `json:"topic"`
			} `json:"config"`
			Records int64 `json:"records"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		require.Equal(t, int64(5), got.Records, args)
		td := describe(t, url, got.Config.Topic)
		var total uint64
		for _, p := range td.Partitions {
			total += p.HighWatermark
		}
		require.Equal(t, uint64(5), total, "%v: a topic of its own", args)
	}
}

// follower is a long-running pystream (consume or journal, following)
// whose stdout is read line by line.
type follower struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *strings.Builder
}

// startFollower starts pystream args against url.
func startFollower(t *testing.T, url string, args ...string) *follower {
	t.Helper()
	f := &follower{cmd: exec.Command(pystreamBin, args...), lines: make(chan string, 64), stderr: &strings.Builder{}}
	f.cmd.Env = append(os.Environ(), "PYSTREAM_SERVER="+url)
	stdout, err := f.cmd.StdoutPipe()
	require.NoError(t, err)
	f.cmd.Stderr = f.stderr
	require.NoError(t, f.cmd.Start())
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f.lines <- sc.Text()
		}
		close(f.lines)
	}()
	return f
}

// next returns the next line, failing the test if none comes within 15 s
// or the process ends first.
func (f *follower) next(t *testing.T) string {
	t.Helper()
	select {
	case line, open := <-f.lines:
		require.True(t, open, "pystream %v exited early: %s", f.cmd.Args[1:], f.stderr.String())
		return line
	case <-time.After(15 * time.Second):
		_ = f.cmd.Process.Kill()
		t.Fatalf("no line within 15s from pystream %v; stderr: %s", f.cmd.Args[1:], f.stderr.String())
		return ""
	}
}

// interrupt sends SIGINT (Ctrl-C), reads stdout to its end and requires
// exit 0.
func (f *follower) interrupt(t *testing.T) {
	t.Helper()
	require.NoError(t, f.cmd.Process.Signal(syscall.SIGINT))
	for range f.lines { // drain until stdout closes
	}
	require.NoError(t, f.cmd.Wait(), "exit 0 on Ctrl-C; stderr: %s", f.stderr.String())
}
