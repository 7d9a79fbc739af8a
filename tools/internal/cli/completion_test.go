package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/stretchr/testify/require"
)

// completeWith runs `pystream __complete args...` (what the shell scripts
// call at each Tab) against server and returns stdout: one value per line,
// then cobra's ":directive" line.
func completeWith(t *testing.T, server string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(append([]string{"__complete", "--server", server}, args...), Env{Stdout: &stdout, Stderr: &stderr, Getenv: noEnv})
	require.Equal(t, ExitOK, code, stderr.String())
	return stdout.String()
}

// TestCLICompletionValues: topic names, partitions and broker ids come
// from the server, filtered by what was typed, with a description; nothing
// is offered past the last argument.
func TestCLICompletionValues(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var v any
		switch r.URL.Path {
		case "/api/topics":
			v = apiclient.TopicsResponse{Topics: []apiclient.TopicSummary{
				{Name: "orders", PartitionCount: 2, ReplicationFactor: 1}, {Name: "other", PartitionCount: 1, ReplicationFactor: 1},
				{Name: "payments", PartitionCount: 1, ReplicationFactor: 1}}}
		case "/api/topics/orders":
			v = apiclient.TopicDetail{Name: "orders", PartitionCount: 2, Partitions: []apiclient.PartitionStatus{
				{Partition: 0, Leader: 1, HighWatermark: 5}, {Partition: 1, Leader: 2, HighWatermark: 0}}}
		case "/api/cluster":
			v = apiclient.ClusterResponse{Brokers: []apiclient.BrokerStatus{{ID: 1, Available: true}, {ID: 2, Available: false}}}
		case "/api/cluster/nodes":
			v = apiclient.ClusterNodesResponse{Mode: apiclient.ModeCluster, Controller: 2, Nodes: []apiclient.ClusterNode{
				{ID: 1, Addr: "10.0.0.1:7001", Voter: true}, {ID: 2, Addr: "10.0.0.2:7001", Voter: true, Leader: true},
				{ID: 3, Addr: "10.0.0.3:7001"}}}
		default:
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(v)
	}))
	defer srv.Close()

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"produce", ""}, "orders\t2 partition(s), replication factor 1\nother\t1 partition(s), replication factor 1\npayments\t1 partition(s), replication factor 1\n"},
		{[]string{"consume", "o"}, "orders\t2 partition(s), replication factor 1\nother\t1 partition(s), replication factor 1\n"},
		{[]string{"produce", "orders", ""}, ""},
		{[]string{"consume", "orders", "-p", ""}, "0\tleader 1, high watermark 5\n1\tleader 2, high watermark 0\n"},
		{[]string{"partition", "recover", "orders", "1", ""}, "1\tavailable\n2\tstopped\n"},
		{[]string{"broker", "start", "2"}, "2\tstopped\n"},
		{[]string{"offsets", "describe", ""}, ""},
		{[]string{"offsets", "describe", "billing", "pay"}, "payments\t1 partition(s), replication factor 1\n"},
		{[]string{"partition", "failover", "nope", ""}, ""}, // unknown topic: nothing, no error
		{[]string{"topic", "create", ""}, ""},
		{[]string{"cluster", "remove-node", ""}, "1\t10.0.0.1:7001\n2\t10.0.0.2:7001, controller\n"}, // voters only
		{[]string{"cluster", "add-node", ""}, ""},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want+":4\n", completeWith(t, srv.URL, tt.args...), "%q", tt.args)
	}
}

// TestCLICompletionQuiet: with nothing listening, or a server that does
// not answer, completion offers nothing, prints no error, exits 0, and a
// hung server costs at most completionTimeout per Tab.
func TestCLICompletionQuiet(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-hang
	}))
	defer srv.Close()
	defer close(hang)

	start := time.Now()
	require.Equal(t, ":4\n", completeWith(t, srv.URL, "produce", ""))
	require.Less(t, time.Since(start), completionTimeout+2*time.Second)

	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close()
	var stdout, stderr bytes.Buffer
	require.Equal(t, ExitOK, Run([]string{"__complete", "--server", url, "broker", "stop", ""}, Env{Stdout: &stdout, Stderr: &stderr, Getenv: noEnv}))
	require.Equal(t, ":4\n", stdout.String())
	require.NotContains(t, stderr.String(), "pystream:")
	require.False(t, strings.Contains(stderr.String(), "connect"), stderr.String())
}

// TestCLICompletionTable: every command the completion tables name exists
// (but topic delete, which another branch adds), so a renamed command
// cannot silently lose its completion.
func TestCLICompletionTable(t *testing.T) {
	root := NewRoot(Env{Getenv: noEnv})
	find := func(path string) bool {
		cmd, rest, err := root.Find(strings.Fields(path))
		return err == nil && len(rest) == 0 && cmd != root
	}
	for path := range argCompletions {
		require.True(t, find(path), path)
	}
	for path, flags := range flagCompletions {
		require.True(t, find(path), path)
		cmd, _, _ := root.Find(strings.Fields(path))
		for flag := range flags {
			require.NotNil(t, cmd.Flags().Lookup(flag), "%s --%s", path, flag)
		}
	}
}
