package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// The Kafka rows, measured on the same pystream-server as the HTTP rows,
// through its Kafka listener:
//
//   - kgo produce: one franz-go client, cfg.clients goroutines each
//     producing one record at a time with ProduceSync, default batching,
//     acks=all, into a topic of each replication factor of -kafka-rf;
//   - bare group commit: logtest.BareCommitter (the log benchmarks'
//     baseline) over as many scratch files as replicas, leader first,
//     fed batches of the size the server wrote in the produce row
//     (records ÷ fsyncs per replica, read from its /metrics), one batch
//     at a time, as one Kafka connection's produces reach the disk: the
//     most the disk allows at that batching;
//   - kgo consume: one client reading the produce row's records back from
//     the earliest offset;
//   - produce-to-consume latency: a paced producer at half the first
//     produce row's rate, and a consumer that reads each record's send
//     time from its value.

// benchKafka measures the Kafka rows against the server whose HTTP API is
// at base and whose broker 1 listens on Kafka port kport.
func benchKafka(cfg config, base string, kport int) ([]result, error) {
	var seeds []string
	for i := range maxRF(cfg) {
		seeds = append(seeds, net.JoinHostPort("127.0.0.1", strconv.Itoa(kport+i)))
	}
	httpc := &http.Client{Timeout: 30 * time.Second}
	var out []result
	var peak float64
	for _, rf := range cfg.kafkaRF {
		name := fmt.Sprintf("kbench-rf%d", rf)
		if err := createTopic(httpc, base, name, cfg.partitions, rf); err != nil {
			return nil, err
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(name), kgo.RequiredAcks(kgo.AllISRAcks()))
		if err != nil {
			return nil, err
		}
		payload := make([]byte, cfg.size)
		for i := range payload {
			payload[i] = 'k'
		}
		syncsBefore, err := fileSyncs(httpc, base)
		if err != nil {
			cl.Close()
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), cfg.deadline+10*time.Second)
		r, err := drive(cfg, fmt.Sprintf("pystream kgo produce rf=%d p=%d", rf, cfg.partitions), func(int) error {
			return cl.ProduceSync(ctx, &kgo.Record{Value: payload}).FirstErr()
		})
		cancel()
		cl.Close()
		if err != nil {
			return nil, fmt.Errorf("kgo produce: %w", err)
		}
		syncsAfter, err := fileSyncs(httpc, base)
		if err != nil {
			return nil, err
		}
		perReplica := (syncsAfter - syncsBefore) / float64(rf)
		batch := max(1, int(math.Round(float64(r.Records)/max(perReplica, 1))))
		r.kind, r.pair = kindKafka, rf
		r.Note = fmt.Sprintf("%.1f records per fsync", float64(r.Records)/max(perReplica, 1))
		out = append(out, r)
		if peak == 0 {
			peak = r.PerSecond
		}

		bare, err := benchBare(cfg, rf, batch, int(r.Records))
		if err != nil {
			return nil, fmt.Errorf("bare group commit: %w", err)
		}
		out = append(out, bare)

		cons, err := benchConsume(cfg, seeds, name, r.Records)
		if err != nil {
			return nil, fmt.Errorf("kgo consume: %w", err)
		}
		cons.pair = rf
		out = append(out, cons)
	}
	if len(cfg.kafkaRF) > 0 && peak > 0 {
		rf := cfg.kafkaRF[0]
		name := fmt.Sprintf("kbench-latency-rf%d", rf)
		if err := createTopic(httpc, base, name, cfg.partitions, rf); err != nil {
			return nil, err
		}
		lat, err := benchLatency(cfg, seeds, name, peak/2)
		if err != nil {
			return nil, fmt.Errorf("produce-to-consume latency: %w", err)
		}
		lat.System = fmt.Sprintf("pystream kgo end-to-end rf=%d p=%d", rf, cfg.partitions)
		out = append(out, lat)
	}
	return out, nil
}

// maxRF is the most brokers any PyStream topic of the run needs.
func maxRF(cfg config) int {
	n := max(cfg.rf, 1)
	for _, rf := range cfg.kafkaRF {
		n = max(n, rf)
	}
	return n
}

func createTopic(c *http.Client, base, name string, partitions, rf int) error {
	body, _ := json.Marshal(map[string]any{"name": name, "partitions": partitions, "replication_factor": rf})
	if err := post(c, base+"/api/topics", "application/json", body); err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	return nil
}

// fileSyncs is the server's count of data fsyncs so far, over every
// replica (pystream_fsync_duration_seconds_count{kind="file"}).
func fileSyncs(c *http.Client, base string) (float64, error) {
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	const series = `pystream_fsync_duration_seconds_count{kind="file"} `
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no fsync count in /metrics")
}

// benchBare runs the bare group-commit loop over rf scratch files, leader
// first, with one committer handing it batches of batch 100-byte records
// (their log frames, concatenated) until records are durable.
func benchBare(cfg config, rf, batch, records int) (result, error) {
	dir, err := os.MkdirTemp("", "peerbench-bare-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	var files []durable.File
	for i := range rf {
		// One directory per replica, as brokers keep their logs.
		sub := filepath.Join(dir, fmt.Sprintf("broker-%d", i+1))
		if err := os.Mkdir(sub, 0o755); err != nil {
			return result{}, err
		}
		f, err := durable.OS.OpenFile(filepath.Join(sub, "bare.bin"), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return result{}, err
		}
		defer f.Close()
		files = append(files, f)
	}
	g, err := logtest.NewBareCommitter(true, files...)
	if err != nil {
		return result{}, err
	}
	var frame []byte
	for range batch {
		frame = log.AppendFrame(frame, log.Record{Payload: make([]byte, cfg.size)})
	}
	one := cfg
	one.clients = 1
	one.records = max(1, records/batch)
	done := make(chan error, 1)
	r, err := drive(one, fmt.Sprintf("bare group commit rf=%d batch=%d", rf, batch), func(int) error {
		return g.Commit(frame, done)
	})
	g.Close()
	if err != nil {
		return result{}, err
	}
	// One op was one batch: count records.
	r.Records *= int64(batch)
	r.PerSecond *= float64(batch)
	r.kind, r.pair = kindBare, rf
	return r, nil
}

// benchConsume reads want records of topic back from the earliest offset
// with one kgo client and reports the rate.
func benchConsume(cfg config, seeds []string, topic string, want int64) (result, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return result{}, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.deadline)
	defer cancel()
	start := time.Now()
	var got int64
	for got < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		if err := fs.Err0(); err != nil {
			return result{}, err
		}
		got += int64(fs.NumRecords())
	}
	elapsed := time.Since(start)
	r := result{System: "pystream kgo consume " + topic, Clients: 1, Records: got, Seconds: elapsed.Seconds(),
		PerSecond: float64(got) / elapsed.Seconds(), kind: kindConsume}
	if got < want {
		r.Note = "stopped at the deadline"
	}
	return r, nil
}

// benchLatency produces at rate records/s (async, default batching) for
// at most 10 s or cfg.records records, while one consumer reads them; each
// value starts with its send time, so the consumer measures each record's
// produce-to-consume latency.
func benchLatency(cfg config, seeds []string, topic string, rate float64) (result, error) {
	n := min(cfg.records, max(1, int(rate*10)))
	cons, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return result{}, err
	}
	defer cons.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return result{}, err
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.deadline+10*time.Second)
	defer cancel()

	latencies := make([]time.Duration, 0, n)
	consumed := make(chan error, 1)
	go func() {
		for len(latencies) < n {
			fs := cons.PollFetches(ctx)
			if ctx.Err() != nil {
				consumed <- ctx.Err()
				return
			}
			if err := fs.Err0(); err != nil {
				consumed <- err
				return
			}
			now := time.Now().UnixNano()
			fs.EachRecord(func(r *kgo.Record) {
				if len(r.Value) >= 8 {
					latencies = append(latencies, time.Duration(now-int64(binary.BigEndian.Uint64(r.Value))))
				}
			})
		}
		consumed <- nil
	}()

	var prodErr error
	var mu sync.Mutex
	start := time.Now()
	for i := range n {
		if d := time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))); d > 0 {
			time.Sleep(d)
		}
		v := make([]byte, max(cfg.size, 8))
		binary.BigEndian.PutUint64(v, uint64(time.Now().UnixNano()))
		prod.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				prodErr = cmpOr(prodErr, err)
				mu.Unlock()
			}
		})
	}
	if err := prod.Flush(ctx); err != nil {
		return result{}, err
	}
	elapsed := time.Since(start)
	if err := <-consumed; err != nil {
		return result{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	if prodErr != nil {
		return result{}, prodErr
	}
	slices.Sort(latencies)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var sum time.Duration
	for _, d := range latencies {
		sum += d
	}
	return result{Clients: 1, Records: int64(len(latencies)), Seconds: elapsed.Seconds(),
		PerSecond: float64(len(latencies)) / elapsed.Seconds(),
		AvgMillis: ms(sum / time.Duration(len(latencies))), P50Millis: ms(latencies[len(latencies)/2]),
		P99Millis: ms(latencies[len(latencies)*99/100]), MaxMillis: ms(latencies[len(latencies)-1]),
		Note: fmt.Sprintf("paced at %.0f records/s, half the first kgo produce row", rate), kind: kindLatency}, nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// kafkaPorts finds n consecutive free ports of 127.0.0.1, for broker 1..n's
// Kafka listeners.
func kafkaPorts(n int) (int, error) {
	for range 20 {
		base, err := freePort()
		if err != nil {
			return 0, err
		}
		if base+n-1 > 65535 {
			continue
		}
		ok := true
		for i := 1; i < n && ok; i++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i)))
			if err != nil {
				ok = false
				continue
			}
			l.Close()
		}
		if ok {
			return base, nil
		}
	}
	return 0, errors.New("no run of free ports for the Kafka listeners")
}
