package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/stretchr/testify/require"
)

// groupMemberProcess is one `pystream consume -G` process, its records
// printed one a line into a file, its stderr into another.
type groupMemberProcess struct {
	cmd      *exec.Cmd
	out, err string
}

func startGroupMember(t *testing.T, url string) *groupMemberProcess {
	t.Helper()
	dir := t.TempDir()
	p := &groupMemberProcess{out: filepath.Join(dir, "out"), err: filepath.Join(dir, "err")}
	out, err := os.Create(p.out)
	require.NoError(t, err)
	errOut, err := os.Create(p.err)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = out.Close(), errOut.Close() })
	cmd := exec.Command(pystreamBin, "consume", "-G", "billing", "orders", "-f", `%p:%o:%v\n`)
	cmd.Env = append(os.Environ(), "PYSTREAM_SERVER="+url)
	cmd.Stdout, cmd.Stderr = out, errOut
	require.NoError(t, cmd.Start())
	p.cmd = cmd
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

// stderr is what the process wrote to stderr so far.
func (p *groupMemberProcess) stderr(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(p.err)
	require.NoError(t, err)
	return string(b)
}

// interrupt sends SIGINT (Ctrl-C) or SIGTERM and requires exit status 0:
// the member committed and left.
func (p *groupMemberProcess) interrupt(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig))
	err := p.cmd.Wait()
	var exit *exec.ExitError
	require.False(t, errors.As(err, &exit), "%v: commit, leave, exit 0: %v\n%s", sig, err, p.stderr(t))
}

// printed is one record the process printed.
type printed struct {
	partition int
	offset    uint64
	value     string
}

// printedLines is what the process printed so far, in order.
func (p *groupMemberProcess) printedLines(t *testing.T) []printed {
	t.Helper()
	b, err := os.ReadFile(p.out)
	require.NoError(t, err)
	var out []printed
	for _, line := range strings.Fields(string(b)) {
		var r printed
		_, err := fmt.Sscanf(strings.Replace(line, ":", " ", 2), "%d %d %s", &r.partition, &r.offset, &r.value)
		require.NoError(t, err, line)
		out = append(out, r)
	}
	return out
}

// records is the values the process printed so far.
func (p *groupMemberProcess) records(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, r := range p.printedLines(t) {
		out = append(out, r.value)
	}
	return out
}

// runCLI runs the binary against the server at url and requires exit 0.
func runCLI(t *testing.T, url string, args ...string) string {
	t.Helper()
	res := runEnv(t, []string{"PYSTREAM_SERVER=" + url}, "", args...)
	require.Zero(t, res.code, "%v: %s", args, res.stderr)
	return res.stdout
}

// produceRecords produces n records "<prefix>-<i>" round robin.
func produceRecords(t *testing.T, c *apiclient.Client, prefix string, n int) []string {
	t.Helper()
	var vals []string
	var recs []apiclient.ProduceRecord
	for i := range n {
		vals = append(vals, fmt.Sprintf("%s-%d", prefix, i))
		recs = append(recs, apiclient.ProduceRecord{Value: []byte(vals[i])})
	}
	_, err := c.Produce(context.Background(), "orders", recs)
	require.NoError(t, err)
	return vals
}

// awaitBilling polls group billing until ok accepts it (bounded).
func awaitBilling(t *testing.T, c *apiclient.Client, what string, ok func(*apiclient.GroupDescription) bool) {
	t.Helper()
	var last *apiclient.GroupDescription
	var lastErr error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		d, err := c.Group(context.Background(), "billing")
		if err == nil && ok(d) {
			return
		}
		last, lastErr = d, err
	}
	t.Fatalf("%s: last %+v, %v", what, last, lastErr)
}

// assigned is how many partitions each member holds, ascending.
func assigned(d *apiclient.GroupDescription) []int {
	var n []int
	for _, m := range d.Members {
		k := 0
		for _, tp := range m.Assignment {
			k += len(tp.Partitions)
		}
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// noLag is true once the group committed every partition to its end.
func noLag(d *apiclient.GroupDescription) bool {
	if len(d.Offsets) != 4 {
		return false
	}
	for _, o := range d.Offsets {
		if o.Lag == nil || *o.Lag != 0 {
			return false
		}
	}
	return true
}

// docs/groups.md § Timeouts, with the real binaries: two `pystream consume
// -G` processes split a topic. A third that joins and is interrupted
// (Ctrl-C) commits and leaves: its partitions move at once. Then one is
// killed with SIGKILL (no commit, no leave): its partitions stay with it
// until its session times out, then the other takes them, each from
// exactly the offset the killed member last committed. The survivor,
// stopped (SIGSTOP) past its own session timeout, is forgotten and a new
// member takes every partition; continued, the stopped one reads nothing
// more of what it held — no heartbeat succeeded within its session
// timeout, so it stops reading, as
// docs/groups.md § Restarts and a new coordinator
// tells — and joins again, sharing the partitions. No record
// committed by any of them is missing from what they printed. The group
// commands run against the same server.
func TestCLIConsumeGroupKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server and group members through session timeouts")
	}
	const session = time.Second
	url := startServer(t, 1, "PYSTREAM_KAFKA_PORT=0", "PYSTREAM_GROUP_SESSION_TIMEOUT="+session.String(),
		"PYSTREAM_GROUP_HEARTBEAT_INTERVAL=100ms")
	c := apiclient.New(url)
	ctx := context.Background()
	_, _, err := c.CreateTopic(ctx, "orders", 4, 1)
	require.NoError(t, err)
	want := produceRecords(t, c, "first", 40)

	a := startGroupMember(t, url)
	b := startGroupMember(t, url)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("a printed %v\nb printed %v", a.records(t), b.records(t))
			td, _ := c.Topic(ctx, "orders")
			t.Logf("topic %+v", td.Partitions)
		}
	})
	awaitBilling(t, c, "two members, two partitions each, all read", func(d *apiclient.GroupDescription) bool {
		return slices.Equal(assigned(d), []int{2, 2}) && d.State == "Stable" && noLag(d)
	})
	want = append(want, produceRecords(t, c, "second", 40)...)
	awaitBilling(t, c, "both read the second batch", noLag)

	out := runCLI(t, url, "group", "list")
	require.Contains(t, out, "billing")
	require.Contains(t, out, "consumer")
	out = runCLI(t, url, "group", "describe", "billing")
	require.Contains(t, out, "CURRENT-OFFSET")
	require.Contains(t, out, "state Stable")
	require.Equal(t, 4, strings.Count(out, "billing  orders"), "one row a partition:\n%s", out)

	third := startGroupMember(t, url)
	awaitBilling(t, c, "three members", func(d *apiclient.GroupDescription) bool {
		return slices.Equal(assigned(d), []int{1, 1, 2}) && d.State == "Stable"
	})
	want = append(want, produceRecords(t, c, "shared", 40)...)
	awaitBilling(t, c, "the three read theirs", noLag)
	left := time.Now()
	third.interrupt(t, syscall.SIGINT)
	var before *apiclient.GroupDescription
	awaitBilling(t, c, "the third left", func(d *apiclient.GroupDescription) bool {
		before = d
		return slices.Equal(assigned(d), []int{2, 2}) && d.State == "Stable"
	})
	require.Less(t, time.Since(left), session, "a member that leaves hands over at once, not after its session timeout")

	require.NoError(t, a.cmd.Process.Signal(syscall.SIGKILL))
	_ = a.cmd.Wait()
	killed := time.Now()
	seen := len(b.printedLines(t))
	d, err := c.Group(ctx, "billing")
	require.NoError(t, err)
	require.Equal(t, []int{2, 2}, assigned(d), "the killed member keeps its partitions until its session ends")
	committed := map[int]uint64{} // partition -> the group's offset when a was killed
	for _, o := range d.Offsets {
		committed[o.Partition] = *o.CommittedOffset
	}
	want = append(want, produceRecords(t, c, "third", 40)...)

	awaitBilling(t, c, "the survivor took every partition and read them", func(d *apiclient.GroupDescription) bool {
		return slices.Equal(assigned(d), []int{4}) && noLag(d)
	})
	require.GreaterOrEqual(t, time.Since(killed), session-200*time.Millisecond, "not before the session timeout")
	survivor := d.Members[0].MemberID
	if d, err := c.Group(ctx, "billing"); err == nil && len(d.Members) == 1 {
		survivor = d.Members[0].MemberID
	}
	first := map[int]uint64{} // partition -> the first offset b printed after a was killed
	for _, r := range b.printedLines(t)[seen:] {
		if _, ok := first[r.partition]; !ok {
			first[r.partition] = r.offset
		}
	}
	took := 0
	for _, o := range before.Offsets {
		if o.MemberID == survivor {
			continue
		}
		took++
		require.Equal(t, committed[o.Partition], first[o.Partition], "partition %d resumes at a's last commit", o.Partition)
	}
	require.Equal(t, 2, took)

	require.NoError(t, b.cmd.Process.Signal(syscall.SIGSTOP))
	awaitBilling(t, c, "the stopped member is forgotten", func(d *apiclient.GroupDescription) bool { return len(d.Members) == 0 })
	want = append(want, produceRecords(t, c, "fourth", 40)...)
	fresh := startGroupMember(t, url)
	awaitBilling(t, c, "a new member took every partition and read them", func(d *apiclient.GroupDescription) bool {
		return slices.Equal(assigned(d), []int{4}) && noLag(d)
	})
	seen = len(b.printedLines(t))
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGCONT))
	want = append(want, produceRecords(t, c, "fifth", 40)...)
	awaitBilling(t, c, "it joined again; the two read on", func(d *apiclient.GroupDescription) bool {
		return slices.Equal(assigned(d), []int{2, 2}) && d.State == "Stable" && noLag(d)
	})
	// Resumed, the member learns it was dropped one of two ways, whichever
	// comes first on a loaded machine: its own clock (no heartbeat within
	// the session timeout), or the coordinator's answer to its next
	// heartbeat (no such member).
	if errOut := b.stderr(t); !strings.Contains(errOut, "no heartbeat succeeded within the session timeout") {
		require.Contains(t, errOut, "has no member", "the resumed member says why it joins again")
	}
	for _, r := range b.printedLines(t)[seen:] {
		require.NotContains(t, r.value, "fourth", "read by the new member; the stopped one stopped reading")
	}

	b.interrupt(t, syscall.SIGTERM)
	fresh.interrupt(t, syscall.SIGTERM)
	got := map[string]bool{}
	for _, r := range slices.Concat(a.records(t), b.records(t), third.records(t), fresh.records(t)) {
		got[r] = true
	}
	for _, w := range want {
		require.True(t, got[w], "record %s was committed but printed by no member", w)
	}
	list, err := c.Groups(ctx)
	require.NoError(t, err)
	require.Equal(t, []apiclient.GroupSummary{{Group: "billing", State: "Empty"}}, list.Groups, "the members left")
	require.Contains(t, runCLI(t, url, "group", "list"), "Empty")
	require.Contains(t, runCLI(t, url, "group", "delete", "billing", "--yes"), "deleted group billing")
	_, err = c.Group(ctx, "billing")
	require.ErrorIs(t, err, apiclient.ErrNotFound)
}

// `pystream consume -G g -e` waits for a first assignment rather than
// ending at once with nothing read; when none comes within a session
// timeout and a quarter (another member holds every partition) it says so
// on stderr and exits 1. Assigned partitions with nothing to read end it
// with status 0 and a note that it read nothing, and why.
func TestCLIConsumeGroupExitNothingAssigned(t *testing.T) {
	const session = time.Second
	url := startServer(t, 1, "PYSTREAM_KAFKA_PORT=0", "PYSTREAM_GROUP_SESSION_TIMEOUT="+session.String(),
		"PYSTREAM_GROUP_HEARTBEAT_INTERVAL=100ms")
	c := apiclient.New(url)
	ctx := context.Background()
	_, _, err := c.CreateTopic(ctx, "orders", 2, 1)
	require.NoError(t, err)

	res := runEnv(t, []string{"PYSTREAM_SERVER=" + url}, "", "consume", "-G", "empty", "-e", "orders")
	require.Zero(t, res.code, res.stderr)
	require.Empty(t, res.stdout)
	require.Contains(t, res.stderr, "read no records")

	// A member that holds every partition and keeps heartbeating.
	m, err := c.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberEpoch: 0, Topics: []string{"orders"}})
	require.NoError(t, err)
	require.Len(t, m.Assignment[0].Partitions, 2)
	stop := make(chan struct{})
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			next, err := c.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberID: m.MemberID, MemberEpoch: m.MemberEpoch, Owned: m.Assignment})
			if err != nil {
				t.Error(err)
				return
			}
			m = &apiclient.GroupHeartbeatResponse{MemberID: next.MemberID, MemberEpoch: next.MemberEpoch, Assignment: m.Assignment}
		}
	}()
	start := time.Now()
	res = runEnv(t, []string{"PYSTREAM_SERVER=" + url}, "", "consume", "-G", "billing", "-e", "orders")
	close(stop)
	<-beating
	require.Equal(t, 1, res.code, res.stderr)
	require.Contains(t, res.stderr, "no partitions of orders were assigned to this member within")
	require.GreaterOrEqual(t, time.Since(start), session, "it waited for an assignment")
}
