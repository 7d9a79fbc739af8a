package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// The README's `make cluster`, as
// docs/phase-7-processes.md § Running three processes on one machine
// describes it: .ci/cluster starts three nodes that form one
// cluster — every node ready, a topic with replication factor 3 created
// through one and written through another — and an interrupt (Ctrl-C)
// stops all three. The cluster is the secure one
// (docs/security.md § The internal port): the script made the certificates and every node's
// internal port speaks mutual TLS.
func TestMakeClusterScript(t *testing.T) {
	bin, cli := buildBinary(t), buildCLI(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "..", ".ci", "cluster"))
	require.NoError(t, err)
	var httpPorts, internalPorts, kafkaPorts []string
	for range 3 {
		httpPorts = append(httpPorts, fmt.Sprint(freePort(t)))
		internalPorts = append(internalPorts, fmt.Sprint(freePort(t)))
		kafkaPorts = append(kafkaPorts, fmt.Sprint(freePort(t)))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	clusterDir := t.TempDir()
	cmd.Env = append(cmd.Environ(), "BIN="+bin, "CLI="+cli, "CLUSTER_DIR="+clusterDir, "PYSTREAM_FAILOVER_AFTER=1s",
		"CLUSTER_HTTP_PORTS="+strings.Join(httpPorts, " "), "CLUSTER_INTERNAL_PORTS="+strings.Join(internalPorts, " "),
		"CLUSTER_KAFKA_PORTS="+strings.Join(kafkaPorts, " "))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a terminal's Ctrl-C reaches the whole group
	// The output goes to a file, which the failure messages read.
	outPath := filepath.Join(t.TempDir(), "output")
	outFile, err := os.Create(outPath)
	require.NoError(t, err)
	defer outFile.Close()
	cmd.Stdout, cmd.Stderr = outFile, outFile
	output := func() string { b, _ := os.ReadFile(outPath); return string(b) }
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })

	var clients []*apiclient.Client
	for _, p := range httpPorts {
		clients = append(clients, apiclient.New("http://127.0.0.1:"+p))
	}
	for i, c := range clients {
		require.Eventually(t, func() bool {
			rctx, done := context.WithTimeout(ctx, 2*time.Second)
			defer done()
			_, err := c.Ready(rctx)
			return err == nil
		}, 60*time.Second, 50*time.Millisecond, "node %d ready; output:\n%s", i+1, output())
	}
	_, created, err := clients[0].CreateTopic(ctx, "orders", 3, 3)
	require.NoError(t, err)
	require.True(t, created)

	_, err = clients[1].ProduceRaw(ctx, "orders", []byte("k2"), []byte("at once"))
	require.NoError(t, err, "a write through node 2 right after the creation through node 1")
	for n := 1; n <= 3; n++ {
		require.FileExists(t, filepath.Join(clusterDir, "certs", fmt.Sprintf("node-%d.pem", n)))
		require.Contains(t, output(), fmt.Sprintf("node %d | ", n)+"time=", "output:\n%s", output())
	}
	require.Equal(t, 3, strings.Count(output(), "internal port: mutual TLS 1.3"), "every node says its internal port is authenticated; output:\n%s", output())

	// The tour's commit as billing through node 3 (the CLI follows a
	// 421 to the coordinator), read back at once through every node
	// (docs/phase-7-processes.md § Clients reach any node).
	consume := exec.CommandContext(ctx, cli, "--server", "http://127.0.0.1:"+httpPorts[2], "consume", "orders", "-e", "--commit-as", "billing",
		"-f", `%o %v\n`)
	consumed, err := consume.CombinedOutput()
	require.NoError(t, err, "%s", consumed)
	require.Contains(t, string(consumed), "0 at once")
	for i, c := range clients {
		got, err := c.ConsumerOffsets(ctx, "billing")
		require.NoError(t, err)
		require.Len(t, got.Offsets, 1, "node %d: the partition read is committed", i+1)
		require.Equal(t, uint64(1), got.Offsets[0].Offset, "node %d: past the one record read", i+1)
	}

	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGINT))
	// Ctrl-C is how the cluster stops: the script waits for every node,
	// keeps its last lines (the prefixing sed outlives the interrupt) and
	// ends with status 0.
	require.NoError(t, cmd.Wait(), "output:\n%s", output())
	for n := 1; n <= 3; n++ {
		require.Contains(t, output(), fmt.Sprintf("node %d | ", n)+"time=", "output:\n%s", output())
		require.Regexp(t, fmt.Sprintf(`node %d \| .*msg=stopped`, n), output(), "node %d's last line", n)
	}
	require.Contains(t, output(), "three nodes stopped")
	for i, c := range clients {
		rctx, done := context.WithTimeout(ctx, time.Second)
		_, err := c.Health(rctx)
		done()
		require.Error(t, err, "node %d still answers after Ctrl-C", i+1)
	}
}
