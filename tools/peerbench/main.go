// Command peerbench measures PyStream's durable HTTP produce path against a
// peer measured on the same machine in the same run: NATS JetStream with
// sync_interval always, which fsyncs every message before acknowledging it.
// Beside them it measures the HTTP ceiling of the machine: the same load
// generators against a Go HTTP server that answers without doing any work.
//
// It lives in its own module so that no PyStream module depends on
// nats-server. Every load loop is bounded by a record count and a deadline,
// and everything listens on 127.0.0.1 only.
//
//	cd tools/peerbench && GOWORK=off go run . -clients 64 -records 20000
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

type config struct {
	clients    int
	records    int
	size       int
	deadline   time.Duration
	server     string
	partitions int
	rf         int
	only       string
	asJSON     bool
	client     string
	ceiling    bool
	kafkaRF    []int

	kafkaPartitions  int    // partitions of the Kafka rows' topics
	kafkaSpread      int    // partitions of the spread rows' wide topic; 0: no spread rows
	kafkaSlices      int    // paired slices of each kgo produce row and its bare row
	kafkaCeiling     bool   // the spread rows' ceiling against kfake too
	kafkaPartitioner string // how kgo picks a record's partition
}

// The systems peerbench measures, as -only names them.
const (
	kindNATS     = "nats"
	kindPyStream = "pystream"
	kindCeiling  = "ceiling"
	kindKafka    = "kafka" // as -only names it: the Kafka rows only
	kindBare     = "bare"
	kindConsume  = "consume"
	kindLatency  = "latency"
)

// result is one system's figures.
type result struct {
	System    string  `json:"system"`
	Clients   int     `json:"clients"`
	Records   int64   `json:"records"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"records_per_sec"`
	AvgMillis float64 `json:"avg_ms"`
	P50Millis float64 `json:"p50_ms"`
	P99Millis float64 `json:"p99_ms"`
	MaxMillis float64 `json:"max_ms"`
	Note      string  `json:"note,omitempty"`

	// A kgo produce row's ratio to its bare group-commit row, slice by
	// slice: the median, least and greatest over its paired slices.
	PairedMedian float64 `json:"paired_ratio_median,omitempty"`
	PairedMin    float64 `json:"paired_ratio_min,omitempty"`
	PairedMax    float64 `json:"paired_ratio_max,omitempty"`
	Slices       int     `json:"paired_slices,omitempty"`

	kind string // kindNATS, kindPyStream, kindCeiling, kindKafka, ...
	load string // the HTTP load generator, "net/http" or "raw-http"
	pair int    // a Kafka row's replication factor, shared with its bare row
	// ceiling marks a spread row of the Kafka ceiling (kfake.go).
	ceiling bool
}

func main() {
	if ports, ok := kfakeArgs(os.Args); ok {
		if err := serveKfake(ports); err != nil {
			fmt.Fprintln(os.Stderr, "peerbench: kfake cluster:", err)
			os.Exit(1)
		}
		return
	}
	if addr, ok := noopArgs(os.Args); ok {
		if err := serveNoop(addr); err != nil {
			fmt.Fprintln(os.Stderr, "peerbench: do-nothing server:", err)
			os.Exit(1)
		}
		return
	}
	var cfg config
	flag.IntVar(&cfg.clients, "clients", 64, "concurrent publishers / HTTP clients")
	flag.IntVar(&cfg.records, "records", 20000, "records each system is sent (the loop stops there or at -deadline)")
	flag.IntVar(&cfg.size, "size", 100, "payload bytes per record")
	flag.DurationVar(&cfg.deadline, "deadline", 60*time.Second, "upper bound on each system's run")
	flag.StringVar(&cfg.server, "pystream-server", "", "path to a built pystream-server binary (default: build ../../server/cmd/pystream-server)")
	flag.IntVar(&cfg.partitions, "partitions", 1, "partitions of the PyStream topic")
	flag.IntVar(&cfg.rf, "rf", 1, "replication factor of the PyStream topic")
	flag.StringVar(&cfg.only, "only", "", "run only one system: nats, pystream (HTTP and Kafka rows), kafka (PyStream's Kafka rows) or ceiling (the do-nothing HTTP server)")
	kafkaRF := flag.String("kafka-rf", "1,3", "replication factors of the Kafka rows (kgo produce, bare group commit, kgo consume), comma-separated; empty: no Kafka rows")
	flag.IntVar(&cfg.kafkaPartitions, "kafka-partitions", 3, "partitions of the Kafka rows' topics; the server gets at least as many brokers, so each partition's leader is a broker of its own")
	flag.IntVar(&cfg.kafkaSpread, "kafka-spread", 0, "instead of the Kafka rows, the spread rows: kgo produce into -kafka-partitions partitions and into this many, alternating slice by slice on 3 brokers (or -kafka-rf's largest), with their ratio; 0: none")
	flag.IntVar(&cfg.kafkaSlices, "kafka-slices", 10, "slices each kgo produce row is cut into, each followed by a slice of its bare group-commit row fed the batch size the server wrote in it")
	flag.StringVar(&cfg.kafkaPartitioner, "kafka-partitioner", partitionerRoundRobin, "how kgo spreads the records over partitions: roundrobin (record by record), worker (goroutine i produces to partition i mod N) or sticky (kgo's default: one partition until 64 KiB are produced)")
	flag.BoolVar(&cfg.asJSON, "json", false, "print results as JSON")
	flag.StringVar(&cfg.client, "client", "both", "HTTP load generator for PyStream and the ceiling: nethttp (Go's http.Client), raw (one keep-alive HTTP/1.1 connection per client, like wrk), or both")
	flag.BoolVar(&cfg.ceiling, "ceiling", true, "when both systems run, also measure the HTTP ceiling: the same load generators against a do-nothing HTTP server")
	flag.BoolVar(&cfg.kafkaCeiling, "kafka-ceiling", true, "with -kafka-spread, also measure the spread rows' ceiling: the same kgo load against kfake, franz-go's in-memory test cluster, in a process of its own")
	flag.Parse()
	for _, f := range strings.Split(*kafkaRF, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		rf, err := strconv.Atoi(f)
		if err != nil || rf < 1 || rf > 64 {
			fmt.Fprintln(os.Stderr, "peerbench: -kafka-rf must be replication factors from 1 to 64, comma-separated")
			os.Exit(2)
		}
		cfg.kafkaRF = append(cfg.kafkaRF, rf)
	}
	if cfg.kafkaPartitions < 1 || cfg.kafkaPartitions > 64 || cfg.kafkaSlices < 1 || cfg.kafkaSpread < 0 || cfg.kafkaSpread > 1024 {
		fmt.Fprintln(os.Stderr, "peerbench: -kafka-partitions must be from 1 to 64, -kafka-slices >= 1, -kafka-spread from 0 to 1024")
		os.Exit(2)
	}
	switch cfg.kafkaPartitioner {
	case partitionerRoundRobin, partitionerWorker, partitionerSticky:
	default:
		fmt.Fprintln(os.Stderr, "peerbench: -kafka-partitioner must be roundrobin, worker or sticky")
		os.Exit(2)
	}
	if cfg.clients < 1 || cfg.records < 1 || cfg.size < 0 {
		fmt.Fprintln(os.Stderr, "peerbench: -clients and -records must be >= 1, -size >= 0")
		os.Exit(2)
	}
	switch cfg.client {
	case "nethttp", "raw", "both":
	default:
		fmt.Fprintln(os.Stderr, "peerbench: -client must be nethttp, raw or both")
		os.Exit(2)
	}
	switch cfg.only {
	case "", kindNATS, kindPyStream, kindCeiling, kindKafka:
	default:
		fmt.Fprintln(os.Stderr, "peerbench: -only must be nats, pystream, kafka or ceiling")
		os.Exit(2)
	}
	var results []result
	if cfg.only == "" || cfg.only == "nats" {
		r, err := benchNATS(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "peerbench: nats:", err)
			os.Exit(1)
		}
		results = append(results, r)
	}
	if cfg.only == "" || cfg.only == kindPyStream || cfg.only == kindKafka {
		rs, err := benchPyStream(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "peerbench: pystream:", err)
			os.Exit(1)
		}
		results = append(results, rs...)
	}
	if cfg.kafkaSpread > 0 && cfg.kafkaCeiling && len(cfg.kafkaRF) > 0 && (cfg.only == "" || cfg.only == kindPyStream || cfg.only == kindKafka) {
		rs, err := benchKafkaCeiling(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "peerbench: kafka ceiling:", err)
			os.Exit(1)
		}
		results = append(results, rs...)
	}
	if (cfg.only == "" && cfg.ceiling) || cfg.only == kindCeiling {
		rs, err := benchCeiling(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "peerbench: http ceiling:", err)
			os.Exit(1)
		}
		results = append(results, rs...)
	}
	if cfg.asJSON {
		_ = json.NewEncoder(os.Stdout).Encode(results)
		return
	}
	for _, r := range results {
		fmt.Printf("%-40s %3d clients  %7d records in %6.2fs  %10.0f records/s  avg %.2f ms  p50 %.2f ms  p99 %.2f ms  max %.2f ms",
			r.System, r.Clients, r.Records, r.Seconds, r.PerSecond, r.AvgMillis, r.P50Millis, r.P99Millis, r.MaxMillis)
		if r.Note != "" {
			fmt.Printf("  (%s)", r.Note)
		}
		fmt.Println()
	}
	printRatios(results)
}

// printRatios prints every row's rate over NATS's, when NATS ran, each
// PyStream HTTP row's rate over the ceiling's measured with the same load
// generator, when the ceiling ran, and each kgo produce row's rate over
// its bare group-commit row's.
func printRatios(results []result) {
	var nats *result
	ceilings := make(map[string]result)
	for i, r := range results {
		switch r.kind {
		case kindNATS:
			nats = &results[i]
		case kindCeiling:
			ceilings[r.load] = r
		}
	}
	if nats != nil && nats.PerSecond > 0 {
		for _, r := range results {
			if r.kind != kindNATS && r.kind != kindLatency {
				fmt.Printf("ratio %s / nats: %.1fx\n", r.System, r.PerSecond/nats.PerSecond)
			}
		}
	}
	for _, r := range results {
		if c, ok := ceilings[r.load]; ok && r.kind == kindPyStream && c.PerSecond > 0 {
			fmt.Printf("ratio %s / %s: %.2fx\n", r.System, c.System, r.PerSecond/c.PerSecond)
		}
	}
	var ceiling *result
	for i, r := range results {
		if r.kind == kindSpread && r.Slices > 0 && r.ceiling {
			ceiling = &results[i]
		}
	}
	for i, r := range results {
		if r.kind == kindSpread && r.Slices > 0 && i > 0 {
			few := results[i-1]
			fmt.Printf("ratio %s / %s: %.2fx over the run; per slice median %.2fx (%.2f-%.2f over %d paired slices)\n",
				r.System, few.System, r.PerSecond/few.PerSecond, r.PairedMedian, r.PairedMin, r.PairedMax, r.Slices)
			if ceiling != nil && !r.ceiling && ceiling.PairedMedian > 0 {
				fmt.Printf("ratio of the medians, %s's over %s's: %.2fx\n", r.System, ceiling.System, r.PairedMedian/ceiling.PairedMedian)
			}
		}
	}
	for _, r := range results {
		if r.kind != kindKafka {
			continue
		}
		for _, b := range results {
			if b.kind == kindBare && b.pair == r.pair && b.PerSecond > 0 {
				fmt.Printf("ratio %s / %s: %.2fx over the run; per slice median %.2fx (%.2f-%.2f over %d paired slices)\n",
					r.System, b.System, r.PerSecond/b.PerSecond, r.PairedMedian, r.PairedMin, r.PairedMax, r.Slices)
			}
		}
	}
}

// drive runs send from cfg.clients goroutines until cfg.records calls have
// been made or the deadline passes, and summarises the latencies.
func drive(cfg config, name string, send func(worker int) error) (result, error) {
	latency, elapsed, err := load(cfg, send)
	if err != nil {
		return result{}, err
	}
	return summarise(name, cfg.clients, cfg.records, latency, elapsed)
}

// load runs send from cfg.clients goroutines until cfg.records calls have
// been made or the deadline passes, and returns each call's latency and
// the time the whole load took.
func load(cfg config, send func(worker int) error) ([]time.Duration, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.deadline)
	defer cancel()
	var (
		issued  atomic.Int64
		failed  atomic.Value
		wg      sync.WaitGroup
		latMu   sync.Mutex
		latency = make([]time.Duration, 0, cfg.records)
	)
	start := time.Now()
	for w := 0; w < cfg.clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, cfg.records/cfg.clients+1)
			for ctx.Err() == nil && issued.Add(1) <= int64(cfg.records) {
				t0 := time.Now()
				if err := send(w); err != nil {
					failed.CompareAndSwap(nil, err)
					cancel()
					break
				}
				local = append(local, time.Since(t0))
			}
			latMu.Lock()
			latency = append(latency, local...)
			latMu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		return nil, 0, err
	}
	return latency, elapsed, nil
}

// summarise makes the row of a load of clients goroutines that wanted
// records calls and made len(latency) of them in elapsed. It sorts latency.
func summarise(name string, clients, records int, latency []time.Duration, elapsed time.Duration) (result, error) {
	r := result{System: name, Clients: clients, Records: int64(len(latency)), Seconds: elapsed.Seconds()}
	if len(latency) == 0 {
		return r, errors.New("no record was sent before the deadline")
	}
	slices.Sort(latency)
	var sum time.Duration
	for _, d := range latency {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	r.PerSecond = float64(len(latency)) / elapsed.Seconds()
	r.AvgMillis = ms(sum / time.Duration(len(latency)))
	r.P50Millis = ms(latency[len(latency)/2])
	r.P99Millis = ms(latency[len(latency)*99/100])
	r.MaxMillis = ms(latency[len(latency)-1])
	if len(latency) < records {
		r.Note = "stopped at the deadline"
	}
	return r, nil
}

func benchNATS(cfg config) (result, error) {
	dir, err := os.MkdirTemp("", "peerbench-nats-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	opts := &natsserver.Options{
		Host:       "127.0.0.1",
		Port:       natsserver.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   dir,
		SyncAlways: true, // sync_interval: always — fsync before every ack
		NoLog:      true,
		NoSigs:     true,
	}
	ns, err := natsserver.NewServer(opts)
	if err != nil {
		return result{}, err
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		return result{}, errors.New("nats-server did not start")
	}
	setup, err := nats.Connect(ns.ClientURL())
	if err != nil {
		return result{}, err
	}
	defer setup.Close()
	js, err := jetstream.New(setup)
	if err != nil {
		return result{}, err
	}
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BENCH", Subjects: []string{"bench"}, Storage: jetstream.FileStorage}); err != nil {
		return result{}, err
	}
	pubs := make([]jetstream.JetStream, cfg.clients)
	for i := range pubs {
		nc, err := nats.Connect(ns.ClientURL())
		if err != nil {
			return result{}, err
		}
		defer nc.Close()
		if pubs[i], err = jetstream.New(nc); err != nil {
			return result{}, err
		}
	}
	payload := bytes.Repeat([]byte("n"), cfg.size)
	r, err := drive(cfg, "nats-jetstream sync=always", func(w int) error {
		_, err := pubs[w].Publish(ctx, "bench", payload)
		return err
	})
	r.kind = kindNATS
	return r, err
}

func benchPyStream(cfg config) ([]result, error) {
	dir, err := os.MkdirTemp("", "peerbench-pystream-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := cfg.server
	if bin == "" {
		bin = filepath.Join(dir, "pystream-server")
		build := exec.Command("go", "build", "-o", bin, "./cmd/pystream-server")
		build.Dir = filepath.Join("..", "..", "server")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("build pystream-server: %w", err)
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	brokers := brokerCount(cfg)
	kport, err := kafkaPorts(brokers)
	if err != nil {
		return nil, err
	}
	srv := exec.Command(bin)
	srv.Env = append(os.Environ(),
		"PYSTREAM_HOST=127.0.0.1",
		"PYSTREAM_PORT="+strconv.Itoa(port),
		"PYSTREAM_DATA_DIR="+filepath.Join(dir, "data"),
		"PYSTREAM_BROKERS="+strconv.Itoa(brokers),
		"PYSTREAM_KAFKA_PORT="+strconv.Itoa(kport),
		"PYSTREAM_LOG_LEVEL=ERROR",
	)
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: cfg.clients * 2, MaxConnsPerHost: cfg.clients * 2},
	}
	if err := waitHealthy(client, base, 15*time.Second); err != nil {
		return nil, err
	}
	var rs []result
	if cfg.only != kindKafka {
		body, _ := json.Marshal(map[string]any{"name": "bench", "partitions": cfg.partitions, "replication_factor": cfg.rf})
		if err := post(client, base+"/api/topics", "application/json", body); err != nil {
			return nil, fmt.Errorf("create topic: %w", err)
		}
		rs, err = benchHTTP(cfg, fmt.Sprintf("127.0.0.1:%d", port), func(load string) string {
			return fmt.Sprintf("pystream %s rf=%d p=%d", load, cfg.rf, cfg.partitions)
		})
		if err != nil {
			return nil, err
		}
		for i := range rs {
			rs[i].kind = kindPyStream
		}
	}
	if len(cfg.kafkaRF) > 0 {
		ks, err := benchKafka(cfg, base, kport)
		if err != nil {
			return nil, fmt.Errorf("kafka: %w", err)
		}
		rs = append(rs, ks...)
	}
	return rs, nil
}

// benchHTTP loads the HTTP server at addr with the load generators chosen by
// -client, in turn, each sending one record per POST to the topic bench.
// name gives a row's system from its load generator, "net/http" or
// "raw-http". PyStream and the ceiling are measured by this one function, so
// that their rows differ only in the server.
func benchHTTP(cfg config, addr string, name func(load string) string) ([]result, error) {
	payload := bytes.Repeat([]byte("p"), cfg.size)
	var out []result
	if cfg.client == "nethttp" || cfg.client == "both" {
		r, err := driveNetHTTP(cfg, addr, name("net/http"), payload)
		if err != nil {
			return nil, fmt.Errorf("net/http load: %w", err)
		}
		out = append(out, r)
	}
	if cfg.client == "raw" || cfg.client == "both" {
		r, err := driveRaw(cfg, addr, name("raw-http"), payload)
		if err != nil {
			return nil, fmt.Errorf("raw-http load: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}

// producePath is where both load generators send their records.
const producePath = "/api/topics/bench/records"

// driveNetHTTP sends payload to addr from cfg.clients goroutines sharing one
// Go http.Client, and closes its connections when done.
func driveNetHTTP(cfg config, addr, name string, payload []byte) (result, error) {
	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: cfg.clients * 2, MaxConnsPerHost: cfg.clients * 2},
	}
	defer client.CloseIdleConnections()
	url := "http://" + addr + producePath
	r, err := drive(cfg, name, func(int) error {
		return post(client, url, "application/octet-stream", payload)
	})
	r.load = "net/http"
	return r, err
}

// driveRaw sends payload to addr over cfg.clients raw keep-alive
// connections, one per goroutine, and closes them when done.
func driveRaw(cfg config, addr, name string, payload []byte) (result, error) {
	conns := make([]*rawConn, cfg.clients)
	for i := range conns {
		c, err := dialRaw(addr)
		if err != nil {
			return result{}, fmt.Errorf("connect to %s: %w", addr, err)
		}
		defer c.Close()
		conns[i] = c
	}
	r, err := drive(cfg, name, func(w int) error {
		return conns[w].post(producePath, payload)
	})
	r.load = "raw-http"
	return r, err
}

func post(client *http.Client, url, contentType string, body []byte) error {
	resp, err := client.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s: %s", url, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

func waitHealthy(client *http.Client, base string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		resp, err := client.Get(base + "/api/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("server at %s not healthy within %s", base, within)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
