package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The Kafka ceiling of the spread rows (-kafka-spread N, -kafka-ceiling):
// the same kgo load, written alternately into -kafka-partitions
// partitions and into N, against three brokers of kfake, franz-go's own
// in-memory test cluster, which stores nothing on disk and copies
// nothing between brokers. It runs in a process of its own, this binary
// started again with a hidden first argument, as PyStream's server runs
// in one. Its ratio is what the client, and a Kafka front end that does
// no other work, reach on this machine when the writes spread: the most
// any broker's spread ratio can be here, as the HTTP ceiling is for the
// HTTP rows.

// serveKfakeFlag is the hidden first argument that makes peerbench serve
// the kfake cluster on the ports that follow it, comma-separated.
const serveKfakeFlag = "-serve-kfake"

// kfakeBrokers is the ceiling's number of brokers: the spread rows' three.
const kfakeBrokers = 3

// kfakeArgs reports whether peerbench was started as the ceiling's
// cluster, and on which ports.
func kfakeArgs(args []string) (ports string, ok bool) {
	if len(args) == 3 && args[1] == serveKfakeFlag {
		return args[2], true
	}
	return "", false
}

// serveKfake runs a kfake cluster of kfakeBrokers brokers on 127.0.0.1 at
// ports until it is interrupted or its stdin reaches end of file.
func serveKfake(ports string) error {
	var ps []int
	for f := range strings.SplitSeq(ports, ",") {
		p, err := strconv.Atoi(f)
		if err != nil || p < 1 || p > 65535 {
			return fmt.Errorf("%s %q: ports must be numbers from 1 to 65535, comma-separated", serveKfakeFlag, ports)
		}
		ps = append(ps, p)
	}
	if len(ps) != kfakeBrokers {
		return fmt.Errorf("%s %q: %d ports, one for each of %d brokers", serveKfakeFlag, ports, len(ps), kfakeBrokers)
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(kfakeBrokers), kfake.Ports(ps...), kfake.ListenFn(func(network, addr string) (net.Listener, error) {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		return net.Listen(network, net.JoinHostPort("127.0.0.1", port))
	}))
	if err != nil {
		return fmt.Errorf("start kfake on ports %s: %w", ports, err)
	}
	defer c.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	<-ctx.Done()
	return nil
}

// startKfake starts this binary again as the ceiling's cluster on free
// ports of 127.0.0.1 and waits until every broker accepts connections.
// stop interrupts it, and kills it if it has not exited within
// noopShutdownTimeout.
func startKfake() (seeds []string, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("find peerbench's own binary: %w", err)
	}
	var ports []string
	for len(ports) < kfakeBrokers {
		p, err := freePort()
		if err != nil {
			return nil, nil, fmt.Errorf("find a free port: %w", err)
		}
		if s := strconv.Itoa(p); !slices.Contains(ports, s) {
			ports = append(ports, s)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, exe, serveKfakeFlag, strings.Join(ports, ","))
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = noopShutdownTimeout
	cmd.Stderr = os.Stderr
	// The cluster reads its stdin and exits at end of file, so it cannot
	// outlive peerbench even when peerbench is killed.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("connect to the kfake cluster's stdin: %w", err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("start the kfake cluster: %w", err)
	}
	stop = func() {
		cancel()
		_ = stdin.Close()
		_ = cmd.Wait()
	}
	for _, p := range ports {
		seeds = append(seeds, net.JoinHostPort("127.0.0.1", p))
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, addr := range seeds {
		for {
			nc, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				_ = nc.Close()
				break
			}
			if time.Now().After(deadline) {
				stop()
				return nil, nil, fmt.Errorf("kfake broker at %s: %w", addr, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return seeds, stop, nil
}

// createKafkaTopic creates a topic through the Kafka protocol
// (CreateTopics), for a cluster that has no HTTP API.
func createKafkaTopic(seeds []string, topic string, partitions, rf int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10_000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, int32(partitions), int16(rf)
	req.Topics = append(req.Topics, t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	if len(resp.Topics) != 1 {
		return fmt.Errorf("create topic %s: %d topics in the answer", topic, len(resp.Topics))
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}

// benchKafkaCeiling measures the spread rows against the kfake cluster,
// for the largest of -kafka-rf (kfake keeps one copy whatever the
// factor).
func benchKafkaCeiling(cfg config) ([]result, error) {
	seeds, stop, err := startKfake()
	if err != nil {
		return nil, err
	}
	defer stop()
	target := spreadTarget{name: "kafka-ceiling kfake", seeds: seeds, ceiling: true,
		create: func(topic string, partitions, rf int) error { return createKafkaTopic(seeds, topic, partitions, rf) }}
	few, many, err := benchSpread(cfg, target, slices.Max(cfg.kafkaRF))
	if err != nil {
		return nil, err
	}
	return []result{few, many}, nil
}
