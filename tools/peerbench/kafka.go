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
// through its Kafka listener, into topics of cfg.kafkaPartitions
// partitions whose leaders are brokers of their own:
//
//   - kgo produce: one franz-go client, cfg.clients goroutines each
//     producing one record at a time with ProduceSync, default batching,
//     acks=all, into a topic of each replication factor of -kafka-rf;
//   - bare group commit: logtest.BareCommitter (the log benchmarks'
//     baseline), one per partition, each over as many scratch files as
//     replicas, leader first, fed batches of the size the server wrote
//     (records ÷ fsyncs per replica, read from its /metrics), one batch at
//     a time per partition, as one Kafka connection's produces reach the
//     disk: the most the disk allows at that batching;
//   - the two are paired: the run is cut into cfg.kafkaSlices slices, and
//     each slice of kgo produce is followed at once by a slice of bare
//     group commit fed that slice's batch size, so that both see the disk
//     as it is within the same second; the ratio is taken slice by slice;
//   - kgo consume: one client reading the produce row's records back from
//     the earliest offset;
//   - produce-to-consume latency: a paced producer at half the first
//     produce row's rate, and a consumer that reads each record's send
//     time from its value.

// The ways kgo may spread records over partitions, as -kafka-partitioner
// names them.
const (
	partitionerRoundRobin = "roundrobin"
	partitionerWorker     = "worker"
	partitionerSticky     = "sticky"
)

// benchKafka measures the Kafka rows against the server whose HTTP API is
// at base and whose broker 1 listens on Kafka port kport.
func benchKafka(cfg config, base string, kport int) ([]result, error) {
	var seeds []string
	for i := range brokerCount(cfg) {
		seeds = append(seeds, net.JoinHostPort("127.0.0.1", strconv.Itoa(kport+i)))
	}
	httpc := &http.Client{Timeout: 30 * time.Second}
	var out []result
	var peak float64
	if cfg.kafkaSpread > 0 {
		for _, rf := range cfg.kafkaRF {
			few, many, err := benchSpread(cfg, pystreamSpread(httpc, base, seeds), rf)
			if err != nil {
				return nil, err
			}
			out = append(out, few, many)
		}
		return out, nil
	}
	for _, rf := range cfg.kafkaRF {
		name := fmt.Sprintf("kbench-rf%d", rf)
		if err := createTopic(httpc, base, name, cfg.kafkaPartitions, rf); err != nil {
			return nil, err
		}
		prod, bare, produced, err := benchPaired(cfg, httpc, base, seeds, name, rf)
		if err != nil {
			return nil, err
		}
		out = append(out, prod, bare)
		if peak == 0 {
			peak = prod.PerSecond
		}
		cons, err := benchConsume(cfg, seeds, name, produced)
		if err != nil {
			return nil, fmt.Errorf("kgo consume: %w", err)
		}
		cons.pair = rf
		out = append(out, cons)
	}
	if len(cfg.kafkaRF) > 0 && peak > 0 {
		rf := cfg.kafkaRF[0]
		name := fmt.Sprintf("kbench-latency-rf%d", rf)
		if err := createTopic(httpc, base, name, cfg.kafkaPartitions, rf); err != nil {
			return nil, err
		}
		lat, err := benchLatency(cfg, seeds, name, peak/2)
		if err != nil {
			return nil, fmt.Errorf("produce-to-consume latency: %w", err)
		}
		lat.System = fmt.Sprintf("pystream kgo end-to-end rf=%d p=%d", rf, cfg.kafkaPartitions)
		out = append(out, lat)
	}
	return out, nil
}

// producerOpts are the options of every kgo producer of the run: acks=all,
// default batching, the partitioner -kafka-partitioner names.
func producerOpts(cfg config, seeds []string, topic string) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks())}
	switch cfg.kafkaPartitioner {
	case partitionerRoundRobin:
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	case partitionerWorker:
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	return opts
}

// benchPaired measures the kgo produce row of topic (replication factor
// rf) and its bare group-commit row in cfg.kafkaSlices alternating
// slices, and returns both rows and how many records were produced into
// topic, a warm-up included.
func benchPaired(cfg config, httpc *http.Client, base string, seeds []string, topic string, rf int) (prod, bare result, produced int64, err error) {
	cl, err := kgo.NewClient(producerOpts(cfg, seeds, topic)...)
	if err != nil {
		return result{}, result{}, 0, err
	}
	defer cl.Close()
	payload := make([]byte, cfg.size)
	for i := range payload {
		payload[i] = 'k'
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*cfg.deadline+10*time.Second)
	defer cancel()
	parts := int32(cfg.kafkaPartitions)
	send := func(w int) error {
		r := &kgo.Record{Value: payload}
		if cfg.kafkaPartitioner == partitionerWorker {
			r.Partition = int32(w) % parts
		}
		return cl.ProduceSync(ctx, r).FirstErr()
	}
	// A warm-up, not measured: kgo learns the topic's leaders and connects
	// to each of them.
	warm := cfg
	warm.records = 4 * cfg.clients
	lat, _, err := load(warm, send)
	if err != nil {
		return result{}, result{}, 0, fmt.Errorf("kgo produce warm-up: %w", err)
	}
	produced = int64(len(lat))

	committers, closeBare, err := openBare(cfg.kafkaPartitions, rf)
	if err != nil {
		return result{}, result{}, 0, fmt.Errorf("bare group commit: %w", err)
	}
	defer closeBare()

	var (
		kgoLat, bareLat    []time.Duration
		kgoDur, bareDur    time.Duration
		bareRecords        int64
		syncs              float64
		ratios             []float64
		minBatch, maxBatch = math.MaxInt, 0
	)
	per := max(1, cfg.records/cfg.kafkaSlices)
	for i := 0; i < cfg.kafkaSlices && kgoDur < cfg.deadline; i++ {
		one := cfg
		one.records = per
		if i == cfg.kafkaSlices-1 {
			one.records = max(1, cfg.records-per*(cfg.kafkaSlices-1))
		}
		before, err := fileSyncs(httpc, base, rf)
		if err != nil {
			return result{}, result{}, 0, err
		}
		lat, d, err := load(one, send)
		if err != nil {
			return result{}, result{}, 0, fmt.Errorf("kgo produce: %w", err)
		}
		after, err := fileSyncs(httpc, base, rf)
		if err != nil {
			return result{}, result{}, 0, err
		}
		perReplica := max(after-before, 1)
		batch := max(1, int(math.Round(float64(len(lat))/perReplica)))
		minBatch, maxBatch = min(minBatch, batch), max(maxBatch, batch)
		blat, bd, n, err := loadBare(cfg, committers, batch, len(lat))
		if err != nil {
			return result{}, result{}, 0, fmt.Errorf("bare group commit: %w", err)
		}
		kgoLat, kgoDur = append(kgoLat, lat...), kgoDur+d
		bareLat, bareDur, bareRecords = append(bareLat, blat...), bareDur+bd, bareRecords+n
		syncs += after - before
		produced += int64(len(lat))
		ratios = append(ratios, (float64(len(lat))/d.Seconds())/(float64(n)/bd.Seconds()))
	}
	records := len(kgoLat)
	prod, err = summarise(fmt.Sprintf("pystream kgo produce rf=%d p=%d", rf, cfg.kafkaPartitions), cfg.clients, cfg.records, kgoLat, kgoDur)
	if err != nil {
		return result{}, result{}, 0, fmt.Errorf("kgo produce: %w", err)
	}
	perFsync := float64(records) / max(syncs, 1)
	prod.kind, prod.pair = kindKafka, rf
	prod.Note = cmpOrString(prod.Note, fmt.Sprintf("%.1f records per fsync per replica, %s partitioner", perFsync, cfg.kafkaPartitioner))
	slices.Sort(ratios)
	prod.PairedMedian, prod.PairedMin, prod.PairedMax, prod.Slices = median(ratios), ratios[0], ratios[len(ratios)-1], len(ratios)

	// The bare row's latencies are per batch; its rate counts records.
	bare, err = summarise(fmt.Sprintf("bare group commit rf=%d p=%d batch=%d", rf, cfg.kafkaPartitions, int(math.Round(perFsync))),
		cfg.kafkaPartitions, len(bareLat), bareLat, bareDur)
	if err != nil {
		return result{}, result{}, 0, fmt.Errorf("bare group commit: %w", err)
	}
	bare.Records = bareRecords
	bare.PerSecond = float64(bareRecords) / bareDur.Seconds()
	bare.kind, bare.pair = kindBare, rf
	bare.Note = fmt.Sprintf("batches of %d-%d records over the slices, latencies per batch", minBatch, maxBatch)
	return prod, bare, produced, nil
}

// median is the middle of sorted, or the mean of its two middles.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func cmpOrString(a, b string) string {
	if a != "" {
		return a + "; " + b
	}
	return b
}

// brokerCount is the number of brokers the server is started with: the
// most replicas any PyStream topic of the run needs, and, when there are
// Kafka rows, at least one broker per partition of their topics, so that
// each partition's leader is a broker of its own (placement gives
// partition p the leader p mod n).
func brokerCount(cfg config) int {
	n := max(cfg.rf, 1)
	if cfg.kafkaSpread > 0 {
		// The spread rows' topics share the brokers, as a topic's
		// partitions do on a server of a few brokers.
		for _, rf := range cfg.kafkaRF {
			n = max(n, rf)
		}
		return max(n, 3)
	}
	for _, rf := range cfg.kafkaRF {
		n = max(n, rf, cfg.kafkaPartitions)
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

// fileSyncs is the server's count of data syncs so far, as syncs per
// replica: its fsyncs of files over every replica
// (pystream_fsync_duration_seconds_count{kind="file"}) divided by rf, plus
// its syncs of the whole file system (kind="filesystem"), each of which
// makes every replica's appends durable at once.
func fileSyncs(c *http.Client, base string, rf int) (float64, error) {
	st, err := syncStats(c, base)
	if err != nil {
		return 0, err
	}
	return st.file/float64(rf) + st.whole, nil
}

// syncCounts are the server's sync counters so far: the counts of fsyncs
// of files and of syncs of the whole file system, and the seconds the
// latter took.
type syncCounts struct {
	file, whole, wholeSeconds float64
}

// syncStats reads the server's sync counters from its /metrics.
func syncStats(c *http.Client, base string) (syncCounts, error) {
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return syncCounts{}, err
	}
	defer resp.Body.Close()
	var st syncCounts
	series := map[string]*float64{
		`pystream_fsync_duration_seconds_count{kind="file"} `:       &st.file,
		`pystream_fsync_duration_seconds_count{kind="filesystem"} `: &st.whole,
		`pystream_fsync_duration_seconds_sum{kind="filesystem"} `:   &st.wholeSeconds,
	}
	found := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		for name, into := range series {
			if v, ok := strings.CutPrefix(sc.Text(), name); ok {
				n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					return syncCounts{}, err
				}
				*into, found = n, true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return syncCounts{}, err
	}
	if !found {
		return syncCounts{}, errors.New("no fsync count in /metrics")
	}
	return st, nil
}

// openBare starts one bare group-commit loop per partition, each over rf
// scratch files, leader first, one directory per broker as brokers keep
// their logs (partition p's replica k on broker (p+k) mod partitions, as
// placement puts it). closeAll stops the loops and removes the files.
func openBare(partitions, rf int) (committers []*logtest.BareCommitter, closeAll func(), err error) {
	dir, err := os.MkdirTemp("", "peerbench-bare-")
	if err != nil {
		return nil, nil, err
	}
	var files []durable.File
	closeAll = func() {
		for _, g := range committers {
			g.Close()
		}
		for _, f := range files {
			f.Close()
		}
		os.RemoveAll(dir)
	}
	brokers := max(partitions, rf)
	for b := range brokers {
		if err := os.Mkdir(filepath.Join(dir, fmt.Sprintf("broker-%d", b+1)), 0o755); err != nil {
			closeAll()
			return nil, nil, err
		}
	}
	for p := range partitions {
		var replicas []durable.File
		for k := range rf {
			name := filepath.Join(dir, fmt.Sprintf("broker-%d", (p+k)%brokers+1), fmt.Sprintf("p%d.bin", p))
			f, err := durable.OS.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			files = append(files, f)
			replicas = append(replicas, f)
		}
		g, err := logtest.NewBareCommitter(true, replicas...)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		committers = append(committers, g)
	}
	return committers, closeAll, nil
}

// loadBare makes at least records records durable through committers, in
// batches of batch records (their log frames, concatenated): one goroutine
// per committer hands it one batch at a time, as one Kafka connection's
// produces reach its partition's disk, taking batches from a shared count
// so that a faster partition takes more. It returns each batch's latency,
// the time taken and the records made durable.
func loadBare(cfg config, committers []*logtest.BareCommitter, batch, records int) ([]time.Duration, time.Duration, int64, error) {
	var frame []byte
	for range batch {
		frame = log.AppendFrame(frame, log.Record{Payload: make([]byte, cfg.size)})
	}
	dones := make([]chan error, len(committers))
	for i := range dones {
		dones[i] = make(chan error, 1)
	}
	one := cfg
	one.clients = len(committers)
	one.records = max(1, (records+batch-1)/batch)
	lat, d, err := load(one, func(w int) error {
		return committers[w].Commit(frame, dones[w])
	})
	if err != nil {
		return nil, 0, 0, err
	}
	return lat, d, int64(len(lat)) * int64(batch), nil
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
	prod, err := kgo.NewClient(producerOpts(cfg, seeds, topic)...)
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
		r := &kgo.Record{Value: v}
		if cfg.kafkaPartitioner == partitionerWorker {
			r.Partition = int32(i % cfg.kafkaPartitions)
		}
		prod.Produce(ctx, r, func(_ *kgo.Record, err error) {
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
