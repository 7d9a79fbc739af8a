package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// endless is stdin that never ends a line: it counts what it handed out,
// up to a bound that keeps a broken build from running away.
type endless struct {
	prefix []byte
	read   atomic.Int64
	bound  int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read.Load() >= e.bound {
		return 0, io.EOF
	}
	n := 0
	if len(e.prefix) > 0 {
		n = copy(p, e.prefix)
		e.prefix = e.prefix[n:]
	}
	for i := n; i < len(p); i++ {
		p[i] = 'a'
	}
	e.read.Add(int64(len(p)))
	return len(p), nil
}

// TestCLIProduceLineTooLong: a line longer than the largest record (1 MiB)
// stops produce with exit 1 and an error naming the line, after the lines
// before it were acknowledged, and without reading the rest of the line
// into memory (an endless line must not hang it).
func TestCLIProduceLineTooLong(t *testing.T) {
	url := startServer(t, 1)
	ok(t, url, "", "topic", "create", "long", "-p", "1", "-r", "1")

	in := &endless{prefix: []byte("first\n"), bound: 64 << 20}
	cmd := exec.Command(pystreamBin, "produce", "long")
	cmd.Env = append(os.Environ(), "PYSTREAM_SERVER="+url)
	cmd.Stdin = in
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr, "stdout: %s stderr: %s", out.String(), errOut.String())
	require.Equal(t, 1, exitErr.ExitCode())
	require.Equal(t, "partition 0 offset 0\n", out.String())
	require.Contains(t, errOut.String(), "line 2")
	require.Contains(t, errOut.String(), "longer than 1048576 bytes")
	require.Contains(t, errOut.String(), "; line 1 was acknowledged, nothing after it was sent")
	require.Less(t, in.read.Load(), int64(8<<20), "produce read far past the limit")

	r := ok(t, url, "", "consume", "long", "-p", "0", "-e", "-f", `%o %v\n`)
	require.Equal(t, "0 first\n", r.stdout, "nothing of the long line was written")
}

// TestCLIProduceLargeRecords: every line up to the largest record (1 MiB)
// is produced, however the lines fall into requests: a record whose JSON
// (base64) form would not fit a request goes on its own, and a batch never
// grows past the request budget by its last record. An idempotent
// record stores its producer id, epoch and sequence with it (about 26
// bytes of envelope), so a line of exactly the limit goes with
// --idempotent=false (docs/cli.md, produce).
func TestCLIProduceLargeRecords(t *testing.T) {
	url := startServer(t, 1)
	ok(t, url, "", "topic", "create", "large", "-p", "1", "-r", "1")
	sizes := []int{5, 300 << 10, 700 << 10, 900 << 10, 1<<20 - 32, 1 << 20}
	var in strings.Builder
	for i, n := range sizes[:len(sizes)-1] {
		in.WriteString(strings.Repeat(string(rune('a'+i)), n))
		in.WriteByte('\n')
	}
	r := ok(t, url, in.String(), "produce", "large", "-K", "\t")
	last := ok(t, url, strings.Repeat("z", 1<<20)+"\n", "produce", "large", "-K", "\t", "--idempotent=false")
	var want strings.Builder
	for i := range sizes {
		fmt.Fprintf(&want, "partition 0 offset %d\n", i)
	}
	require.Equal(t, want.String(), r.stdout+last.stdout)
	r = ok(t, url, "", "consume", "large", "-p", "0", "-e", "-f", `%o %S\n`)
	want.Reset()
	for i, n := range sizes {
		fmt.Fprintf(&want, "%d %d\n", i, n)
	}
	require.Equal(t, want.String(), r.stdout)
}

// TestCLIProduceRefusedLines: when the server refuses part of what produce
// sent, stdout still has the acknowledged records and the error names, by
// line number, which lines were acknowledged and which were not
// (docs/cli.md, produce). Lines 1-2 go to a live partition, line 3 to one
// whose only replica is stopped; however the lines fall into batches, the
// same lines are acknowledged.
func TestCLIProduceRefusedLines(t *testing.T) {
	url := startServer(t, 2, manualMode)
	ok(t, url, "", "topic", "create", "split", "-p", "2", "-r", "1")
	td := describe(t, url, "split")
	ok(t, url, "", "broker", "stop", strconv.Itoa(td.Partitions[1].Leader))
	live, dead := keyFor(0, 2), keyFor(1, 2)

	r := pys(t, url, live+":a\n"+live+":b\n"+dead+":c\n", "produce", "split", "-K", ":", "--idempotent=false")
	require.Equal(t, 1, r.code, r.stderr)
	require.Equal(t, "partition 0 offset 0\npartition 0 offset 1\n", r.stdout)
	require.True(t, strings.HasSuffix(r.stderr, "[unavailable]; lines 1-2 were acknowledged, line 3 was not\n"), r.stderr)

	// Nothing acknowledged at all: the one line is named.
	r = pys(t, url, dead+":d\n", "produce", "split", "-K", ":", "--idempotent=false")
	require.Equal(t, 1, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.True(t, strings.HasSuffix(r.stderr, "[unavailable]; line 1 was not acknowledged\n"), r.stderr)

	// Idempotent (the default): the unavailable partition's request is
	// sent again until the producer gives up (10 sends, a second apart);
	// a 503 may come after the leader wrote, so its line's fate is
	// unknown, the others acknowledged.
	r = pys(t, url, live+":e\n"+dead+":f\n", "produce", "split", "-K", ":")
	require.Equal(t, 1, r.code, r.stderr)
	require.Equal(t, "partition 0 offset 2\n", r.stdout)
	require.True(t, strings.HasSuffix(r.stderr, "[unavailable]; line 1 was acknowledged; whether line 2 was written is unknown\n"), r.stderr)
}

// docs/cli.md, produce: -p N sends every line to partition N whatever its
// key, in one request per batch; a partition the topic lacks writes
// nothing and exits 1.
func TestCLIProduceToPartition(t *testing.T) {
	url := startServer(t, 2)
	ok(t, url, "", "topic", "create", "orders", "-p", "3", "-r", "1")
	key := keyFor(0, 3) // routes to 0; -p sends it to 2
	r := ok(t, url, key+":a\n"+key+":b\n", "produce", "orders", "-K", ":", "-p", "2")
	require.Equal(t, "partition 2 offset 0\npartition 2 offset 1\n", r.stdout)
	r = pys(t, url, "c\n", "produce", "orders", "-p", "3")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "no partition 3")
	r = ok(t, url, "", "consume", "orders", "-e", "-f", "%p %o %v\n")
	require.Equal(t, "2 0 a\n2 1 b\n", r.stdout)
}

// docs/cli.md, produce and consume: -K stores each line's key and -H
// its headers with the record; consume -f prints them with %k and %h, the
// default JSON output carries them, and `log dump` of the partition shows
// the key decoded.
func TestCLIProduceKeysAndHeaders(t *testing.T) {
	url, dataDir := startServerDir(t, 1)
	ok(t, url, "", "topic", "create", "orders", "-p", "1", "-r", "1")
	ok(t, url, "user-1:login\nno key here\n", "produce", "orders", "-K", ":", "-H", "trace=abc", "-H", "flag")

	r := ok(t, url, "", "consume", "orders", "-e", "-f", `%k|%K|%h|%v\n`)
	require.Equal(t, "user-1|6|trace=abc,flag|login\n|-1|trace=abc,flag|no key here\n", r.stdout)
	r = ok(t, url, "", "consume", "orders", "-e", "-n", "1")
	require.Contains(t, r.stdout, `"key":"user-1","headers":[{"key":"trace","value":"abc"},{"key":"flag"}],"value":"login"`)

	r = ok(t, url, "", "log", "dump", filepath.Join(dataDir, "broker-000001", "topics", "orders", "partition-000000"))
	// produce is idempotent: each record carries its producer's identity.
	require.Regexp(t, `key: "user-1" headers: trace="abc",flag producer_id: \d+ producer_epoch: 0 sequence: 0 value: "login"`, r.stdout)
	require.Regexp(t, `key: null headers: trace="abc",flag producer_id: \d+ producer_epoch: 0 sequence: 1 value: "no key here"`, r.stdout)
}
