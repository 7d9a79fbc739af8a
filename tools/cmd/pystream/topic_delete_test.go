package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pscluster "github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/tools/internal/cli"
	"github.com/stretchr/testify/require"
)

// TestCLITopicDelete pins docs/cli.md § `pystream topic delete NAME [--yes]`:
// without a terminal and without --yes the command refuses (usage error,
// nothing deleted);
// with --yes it deletes the topic, its records and its consumer offsets;
// an unknown topic is the server's 404, exit 1.
func TestCLITopicDelete(t *testing.T) {
	url, dataDir := startServerDir(t, 2)
	ok(t, url, "", "topic", "create", "orders", "-p", "2", "-r", "2")
	ok(t, url, "a\nb\nc\n", "produce", "orders")
	ok(t, url, "", "consume", "orders", "-p", "0", "-e", "--commit-as", "billing")

	r := pys(t, url, "", "topic", "delete", "orders")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "pass --yes")
	require.Empty(t, r.stdout)
	describe(t, url, "orders") // still there

	r = ok(t, url, "", "topic", "delete", "orders", "--yes")
	require.Equal(t, "deleted topic orders (2 partitions, replication factor 2; 1 consumer offset removed)\n", r.stdout)
	r = pys(t, url, "", "topic", "describe", "orders")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "[not_found]")
	for id := 1; id <= 2; id++ {
		require.NoDirExists(t, filepath.Join(pscluster.BrokerDir(dataDir, id), "topics", "orders"))
	}

	r = pys(t, url, "", "topic", "delete", "orders", "-y")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "topic delete orders: ")
	require.Contains(t, r.stderr, "[not_found]")

	// Created again: empty, no offset; --json prints the answer.
	ok(t, url, "", "topic", "create", "orders")
	require.Equal(t, uint64(0), describe(t, url, "orders").Partitions[0].HighWatermark)
	require.Nil(t, committed(t, url, "billing", "orders", 0))
	r = ok(t, url, "", "topic", "delete", "orders", "--yes", "--json")
	var got apiclient.DeleteTopicResponse
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Equal(t, apiclient.DeleteTopicResponse{Name: "orders", PartitionCount: 1, ReplicationFactor: 1}, got)
}

// TestCLITopicDeleteAsks: with a terminal on stdin and no --yes, topic
// delete says what the topic holds and asks; only "y" or "yes" deletes.
func TestCLITopicDeleteAsks(t *testing.T) {
	url := startServer(t, 1)
	ok(t, url, "", "topic", "create", "orders", "-p", "2")
	ok(t, url, "a\nb\nc\n", "produce", "orders")
	ask := func(answer string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := cli.Run([]string{"--server", url, "topic", "delete", "orders"}, cli.Env{
			Stdin: strings.NewReader(answer), Stdout: &out, Stderr: &errOut,
			Getenv:     func(string) string { return "" },
			IsTerminal: func(any) bool { return true },
		})
		return code, out.String(), errOut.String()
	}
	for _, answer := range []string{"", "n\n", "no\n", "yes please\n"} {
		code, stdout, stderr := ask(answer)
		require.Equal(t, 1, code, "%q: %s", answer, stderr)
		require.Empty(t, stdout)
		require.Contains(t, stderr, "topic orders: 2 partitions, replication factor 1, 3 records\n")
		require.Contains(t, stderr, "delete topic orders and all its records? [y/N] ")
		require.Contains(t, stderr, "topic left unchanged")
		describe(t, url, "orders")
	}
	code, stdout, stderr := ask("Y\n")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "deleted topic orders (2 partitions, replication factor 1; 0 consumer offsets removed)\n", stdout)
	code, _, stderr = ask("y\n")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "[not_found]", "an unknown topic fails before any question")
	require.NotContains(t, stderr, "[y/N]")
}

// TestCLIBenchProduceDeletesItsTopic: bench produce without --topic
// deletes the topic it made once it is done, unless --keep; a topic named
// with --topic is never deleted. Reference:
// docs/cli.md § `pystream bench produce` and `pystream bench consume`.
func TestCLIBenchProduceDeletesItsTopic(t *testing.T) {
	url := startServer(t, 1)
	benchTopics := func() []string {
		var tl apiclient.TopicsResponse
		require.NoError(t, json.Unmarshal([]byte(ok(t, url, "", "topic", "list", "--json").stdout), &tl))
		var names []string
		for _, s := range tl.Topics {
			names = append(names, s.Name)
		}
		return names
	}

	r := ok(t, url, "", "bench", "produce", "--records", "20", "--batch", "4")
	require.NotNil(t, perfLine.FindStringSubmatch(r.stdout), r.stdout)
	require.Empty(t, r.stderr)
	require.Empty(t, benchTopics(), "the run's own topic is deleted")

	r = ok(t, url, "", "bench", "produce", "--records", "20", "--keep", "--json")
	var got struct {
		Config struct {
			Topic string `json:"topic"`
		} `json:"config"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Equal(t, "bench produce: kept topic "+got.Config.Topic+"\n", r.stderr)
	require.Equal(t, []string{got.Config.Topic}, benchTopics())
	require.Equal(t, uint64(20), describe(t, url, got.Config.Topic).Partitions[0].HighWatermark)

	ok(t, url, "", "bench", "produce", "--records", "20", "--topic", "perf")
	require.Equal(t, []string{got.Config.Topic, "perf"}, benchTopics(), "--topic: kept")
}

// TestCLIBenchProduceInterrupt: Ctrl-C (SIGINT) during bench produce stops
// it, still deletes its topic and exits 1 saying it was interrupted.
func TestCLIBenchProduceInterrupt(t *testing.T) {
	url := startServer(t, 1)
	c := apiclient.New(url)
	cmd := exec.Command(pystreamBin, "--server", url, "bench", "produce", "--records", "100000000", "--batch", "10")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Start())
	// Wait (bounded) until records have been acknowledged.
	deadline := time.Now().Add(15 * time.Second)
	for {
		tl, err := c.Topics(t.Context())
		require.NoError(t, err)
		if len(tl.Topics) == 1 {
			td, err := c.Topic(t.Context(), tl.Topics[0].Name)
			if err == nil && td.Partitions[0].HighWatermark > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("bench produce wrote nothing within 15s: %s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	interruptWantExit1(t, cmd, &errOut, "bench produce: interrupted")
	require.Empty(t, out.String())
	tl, err := c.Topics(t.Context())
	require.NoError(t, err)
	require.Empty(t, tl.Topics, "the run's topic is deleted")
}
