package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	pscluster "github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/stretchr/testify/require"
)

// manualMode is the server setting under which nothing changes leadership
// on its own (docs/phase-5-failover.md's manual mode).
const manualMode = "PYSTREAM_FAILOVER_AFTER=0"

// TestCLIMoveLeader: partition move-leader hands the leadership to a
// follower and back, the epoch counting each move; topic describe shows the
// epoch and the preferred replica; a refusal is the server's error, exit 1.
func TestCLIMoveLeader(t *testing.T) {
	url := startServer(t, 3, manualMode)
	ok(t, url, "", "topic", "create", "orders", "-p", "1", "-r", "3")
	ok(t, url, "a\nb\n", "produce", "orders")

	r := ok(t, url, "", "partition", "move-leader", "orders", "0", "3")
	require.Equal(t, "orders/0: leader 1 -> 3, epoch 1, log end offset 2, copied 0\n", r.stdout)
	td := describe(t, url, "orders")
	require.Equal(t, 3, td.Partitions[0].Leader)
	require.Equal(t, uint64(1), td.Partitions[0].LeaderEpoch)
	require.Equal(t, 1, td.Partitions[0].Preferred)
	require.Equal(t, []int{1, 2, 3}, td.Partitions[0].Placement)
	r = ok(t, url, "", "topic", "describe", "orders")
	require.Regexp(t, `(?m)^PARTITION\s+LEADER\s+EPOCH\s+PREFERRED\s+REPLICAS\s+`, r.stdout)
	require.Regexp(t, `(?m)^0\s+3\s+1\s+1\s+1,2,3\s+1,2,3\s+2\s`, r.stdout)
	r = ok(t, url, "c\n", "produce", "orders")
	require.Equal(t, "partition 0 offset 2\n", r.stdout)

	// --json prints the API's answer.
	r = ok(t, url, "", "partition", "move-leader", "orders", "0", "1", "--json")
	var mv apiclient.MoveLeaderResponse
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &mv))
	require.Equal(t, apiclient.MoveLeaderResponse{OldLeader: 3, NewLeader: 1, LeaderEpoch: 2, LogEndOffset: 3}, mv)

	r = pys(t, url, "", "partition", "move-leader", "orders", "0", "1")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "partition move-leader orders 0 1: ")
	require.Contains(t, r.stderr, "[conflict]")
	r = pys(t, url, "", "partition", "move-leader", "orders", "0", "7")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "[not_found]")
	require.Equal(t, uint64(2), describe(t, url, "orders").Partitions[0].LeaderEpoch, "refusals change nothing")
}

var journalLineRE = regexp.MustCompile(`^(\d+) (\S+) (operator|controller|startup) (\S+) (\S+) (\S+) broker (\d+): (.+)$`)

// TestCLIClusterJournal: cluster journal prints one line per entry from
// --since on, --json one API object per line, and -f keeps printing what is
// appended after it started until it is interrupted, which exits 0.
func TestCLIClusterJournal(t *testing.T) {
	url := startServer(t, 3, manualMode)
	r := ok(t, url, "", "cluster", "journal")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, 6, r.stdout)
	for i, line := range lines {
		m := journalLineRE.FindStringSubmatch(line)
		require.NotNil(t, m, line)
		summary := "broker " + m[7] + " joined the cluster"
		if i%2 == 0 {
			require.Equal(t, "intent", m[5], line)
			require.Contains(t, m[8], "broker "+m[7]+" joins the cluster: cluster.meta lists brokers")
			summary = m[8]
		}
		require.Equal(t, []string{"broker-start", "-", strconv.Itoa(i/2 + 1), summary}, []string{m[4], m[6], m[7], m[8]}, line)
		require.Equal(t, strconv.Itoa(i), m[1])
		_, err := time.Parse(time.RFC3339Nano, m[2])
		require.NoError(t, err)
	}

	ok(t, url, "", "topic", "create", "orders", "-p", "1", "-r", "2")
	ok(t, url, "", "partition", "move-leader", "orders", "0", "2")
	r = ok(t, url, "", "cluster", "journal", "--since", "6")
	require.Regexp(t, `^6 \S+ operator move-leader intent orders/0 broker 2: orders/0: leader 1 -> 2 \(epoch 1\).*\n`+
		`7 \S+ operator move-leader done orders/0 broker 2: orders/0: leader 2, epoch 1, active \[1 2\]\n$`, r.stdout)
	r = ok(t, url, "", "cluster", "journal", "--since", "7", "--json")
	var e apiclient.JournalEntry
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &e))
	require.Equal(t, uint64(7), e.Offset)
	require.Equal(t, "move-leader", e.Event)
	require.Equal(t, uint64(6), *e.Intent)
	r = ok(t, url, "", "cluster", "journal", "--since", "99")
	require.Empty(t, r.stdout)
	r = pys(t, url, "", "cluster", "journal", "--since", "-1")
	require.Equal(t, 2, r.code, "a negative offset is a usage error")

	// -f: everything so far, then an entry appended while it runs; the
	// interrupt (SIGINT, as Ctrl-C sends) ends it with exit 0.
	f := startFollower(t, url, "cluster", "journal", "-f")
	for i := range 8 {
		require.True(t, strings.HasPrefix(f.next(t), strconv.Itoa(i)+" "), "the entries so far first")
	}
	ok(t, url, "", "broker", "stop", "3")
	require.Regexp(t, `^8 \S+ operator broker-stop done - broker 3: `, f.next(t), "an entry appended after -f started")
	f.interrupt(t)
	require.Empty(t, f.stderr.String())
}

// recoveredLine is partition recover's answer when it cut records.
var recoveredLine = regexp.MustCompile(`^orders/0: broker 1 recovered: common prefix 2, dropped 1 \(offsets 2\.\.3\) kept in (\S+), copied 1\n$`)

// TestCLILogDumpQuarantine: a recovery that cuts a record, staged with the
// CLI alone (followers stop, a write reaches only the leader, the leader
// stops, a follower takes over, the old leader returns and is recovered),
// names its quarantine file relative to the data directory; log dump
// prints the cut record at its own offset, and the journal names the same
// file.
func TestCLILogDumpQuarantine(t *testing.T) {
	url, dataDir := startServerDir(t, 3, manualMode)
	ok(t, url, "", "topic", "create", "orders", "-p", "1", "-r", "3")
	ok(t, url, "a\nb\n", "produce", "orders")
	ok(t, url, "", "broker", "stop", "2")
	ok(t, url, "", "broker", "stop", "3")
	r := pys(t, url, "never acknowledged\n", "produce", "orders", "--idempotent=false") // stored as the plain value
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "[unavailable]")
	ok(t, url, "", "broker", "stop", "1")
	ok(t, url, "", "broker", "start", "2")
	ok(t, url, "", "broker", "start", "3")
	r = ok(t, url, "", "partition", "failover", "orders", "0")
	require.Equal(t, "orders/0: leader 1 -> 2, epoch 1, log end offset 2\n", r.stdout)
	ok(t, url, "c\n", "produce", "orders")
	ok(t, url, "", "broker", "start", "1")
	r = ok(t, url, "", "partition", "recover", "orders", "0", "1")
	m := recoveredLine.FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	quarantine := m[1]
	require.False(t, filepath.IsAbs(quarantine), quarantine)
	require.NotContains(t, r.stdout, dataDir)
	from, to, _, isQuarantine := pscluster.ParseQuarantineName(filepath.Base(quarantine))
	require.True(t, isQuarantine, quarantine)
	require.Equal(t, [2]uint64{2, 3}, [2]uint64{from, to})

	path := filepath.Join(dataDir, quarantine)
	r = run(t, "", "", "log", "dump", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `^offset: 2 position: 0 timestamp: \d+ \(\S+\) size: 18 payload: "never acknowledged"\n$`, r.stdout)
	r = run(t, "", "", "log", "dump", "--json", "--print-data", path)
	require.Equal(t, 0, r.code, r.stderr)
	var rec struct {
		Offset  uint64 `json:"offset"`
		Payload []byte `json:"payload"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rec))
	require.Equal(t, uint64(2), rec.Offset)
	require.Equal(t, "never acknowledged", string(rec.Payload))

	// The same frames under another name are a log from offset 0, which
	// they are not: the dump says so and exits 1.
	other := filepath.Join(t.TempDir(), "cut.bin")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(other, data, 0o644))
	r = run(t, "", "", "log", "dump", other)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "log dump: ")

	// The journal's recover intent names the same file.
	r = ok(t, url, "", "cluster", "journal", "--json")
	found := false
	for _, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		var e apiclient.JournalEntry
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		if e.Event == "recover" && e.Phase == "intent" {
			require.Equal(t, quarantine, e.Quarantine)
			found = true
		}
	}
	require.True(t, found, r.stdout)
	r = ok(t, url, "", "cluster", "journal")
	require.Contains(t, r.stdout, "; cut records kept in "+quarantine+"\n")
}

// docs/cli.md, broker: reopen opens a broker's failed logs again from
// disk; with nothing failed it says so and changes nothing. An unknown
// broker is refused.
func TestCLIBrokerReopen(t *testing.T) {
	url := startServer(t, 3, manualMode)
	r := ok(t, url, "", "broker", "reopen", "2")
	require.Equal(t, "broker 2: nothing had failed\n", r.stdout)
	r = pys(t, url, "", "broker", "reopen", "9")
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "[not_found]")
}
