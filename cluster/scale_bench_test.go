package cluster

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pystream/pystream/topic"
)

// scaleAll adds the largest size to BenchmarkScale; so does the
// environment variable PYSTREAM_SCALE_ALL=1.
var scaleAll = flag.Bool("scale-all", false, "BenchmarkScale: also run 10,000 replicas per broker")

// scaleSizes replaces BenchmarkScale's sizes, when given: replicas per
// broker, separated by commas.
var scaleSizes = flag.String("scale-sizes", "", "BenchmarkScale: replicas per broker to run instead of 30,300,3000, comma-separated")

// scaleWorkers is how many partitions BenchmarkScale opens or fails over
// at once: as many as the controller's pass (server/controller,
// statusReaders).
const scaleWorkers = 8

// BenchmarkScale measures the embedded cluster (3 brokers, rf 3, so that
// every broker holds a replica of every partition) at 30, 300 and 3,000
// replicas per broker, and 10,000 with -scale-all or PYSTREAM_SCALE_ALL=1.
// -scale-sizes runs other sizes (-scale-sizes 6000). The partitions are
// spread over topics of at most topic.MaxPartitionCount.
// Each iteration reports:
//
//   - create-s: the creation of every topic, one after another;
//   - heap-B/replica: the live heap (runtime.GC, then HeapAlloc) the open
//     cluster holds per replica log, against the cluster with its brokers
//     and no topic;
//   - fds/replica: the entries of /proc/self/fd per replica log, on Linux;
//   - report-B/replica: the JSON of one broker's replica reports (what a
//     process of cluster mode sends in each heartbeat) per replica;
//   - meta-B: the size of cluster.meta, which every failover rewrites;
//   - close-s: Cluster.Close, every log open;
//   - open-s: OpenWithOptions and StartBroker of the three brokers, which
//     open no replica log (logs open on first use, Broker.replica);
//   - open-all-s: open-s plus a Status of every partition, 8 at a time as
//     the controller's first pass reads them, which opens all three
//     replicas of each;
//   - failover-s: broker 1 stops; every partition it led (a third, the
//     placement rotates leaders) is failed over with Cluster.Failover, 8
//     at a time as the controller acts, until every partition's leader is
//     on an available broker.
//
// The creations keep every log open: the process needs a file limit above
// 3 × the size, and the benchmark raises its soft limit (and its hard one
// if it may) or skips the size, saying why.
//
//	go test -run '^$' -bench BenchmarkScale -benchtime 1x -timeout 30m
//	go test -run '^$' -bench BenchmarkScale -benchtime 1x -timeout 30m -args -scale-all
func BenchmarkScale(b *testing.B) {
	sizes := []int{30, 300, 3000}
	if *scaleAll || os.Getenv("PYSTREAM_SCALE_ALL") == "1" {
		sizes = append(sizes, 10000)
	}
	if *scaleSizes != "" {
		sizes = nil
		for _, f := range strings.Split(*scaleSizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("-scale-sizes %q: want positive numbers separated by commas", *scaleSizes)
			}
			sizes = append(sizes, n)
		}
	}
	for _, size := range sizes {
		b.Run(fmt.Sprintf("replicas=%d", size), func(b *testing.B) {
			if err := raiseFileLimit(3*size + 1024); err != nil {
				b.Skipf("%d replicas per broker: %v", size, err)
			}
			for b.Loop() {
				benchScaleOnce(b, size)
			}
		})
	}
}

// raiseFileLimit makes the soft limit on open files at least want,
// raising the hard limit too when it is lower (which needs privilege).
func raiseFileLimit(want int) error {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return fmt.Errorf("read the open-file limit: %w", err)
	}
	if rl.Cur >= uint64(want) {
		return nil
	}
	next := rl
	next.Cur = uint64(want)
	next.Max = max(rl.Max, uint64(want))
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &next); err != nil {
		return fmt.Errorf("raise the open-file limit from %d (hard %d) to %d: %w", rl.Cur, rl.Max, want, err)
	}
	return nil
}

// scaleTopics splits size partitions into topics of at most
// topic.MaxPartitionCount: their names and partition counts.
func scaleTopics(size int) map[string]int {
	out := map[string]int{}
	for i := 0; size > 0; i++ {
		n := min(size, topic.MaxPartitionCount)
		out[fmt.Sprintf("scale-%03d", i)] = n
		size -= n
	}
	return out
}

// benchScaleOnce runs one iteration of BenchmarkScale at size replicas
// per broker and reports its metrics.
func benchScaleOnce(b *testing.B, size int) {
	root := b.TempDir()
	opts := Options{MaxOpenLogs: -1}
	start := func() *Cluster {
		c, err := OpenWithOptions(root, opts)
		if err != nil {
			b.Fatal(err)
		}
		for id := 1; id <= 3; id++ {
			if _, err := c.StartBroker(id); err != nil {
				b.Fatal(errorsJoinClose(err, c))
			}
		}
		return c
	}
	c := start()
	heap0, fds0 := liveHeap(), openFiles(b)
	topics := scaleTopics(size)
	t0 := time.Now()
	for name, n := range topics {
		if err := c.CreateTopic(name, n, 3); err != nil {
			b.Fatal(errorsJoinClose(err, c))
		}
	}
	create := time.Since(t0)
	replicas := float64(3 * size)
	heap1, fds1 := liveHeap(), openFiles(b)
	report, err := json.Marshal(c.Reports(1))
	if err != nil {
		b.Fatal(errorsJoinClose(err, c))
	}
	meta, err := os.Stat(c.MetaPath())
	if err != nil {
		b.Fatal(errorsJoinClose(err, c))
	}
	t0 = time.Now()
	if err := c.Close(); err != nil {
		b.Fatal(err)
	}
	closing := time.Since(t0)

	t0 = time.Now()
	c = start()
	defer func() { _ = c.Close() }()
	open := time.Since(t0)
	var all, led []scalePart
	for name, tm := range c.Metadata().Topics {
		for _, pm := range tm.Partitions {
			all = append(all, scalePart{name, pm.Partition})
			if pm.Leader == 1 {
				led = append(led, scalePart{name, pm.Partition})
			}
		}
	}
	forEachPartition(b, all, func(w scalePart) error {
		_, err := c.Status(w.name, w.p)
		return err
	})
	openAll := time.Since(t0)

	t0 = time.Now()
	if err := c.StopBroker(1); err != nil {
		b.Fatal(err)
	}
	forEachPartition(b, led, func(w scalePart) error {
		_, err := c.Failover(w.name, w.p)
		return err
	})
	failover := time.Since(t0)
	for name, tm := range c.Metadata().Topics {
		for _, pm := range tm.Partitions {
			if !c.brokerInfo(pm.Leader).Available {
				b.Fatalf("%s/%d: leader %d unavailable after the failovers", name, pm.Partition, pm.Leader)
			}
		}
	}

	b.ReportMetric(create.Seconds(), "create-s")
	b.ReportMetric(float64(heap1-heap0)/replicas, "heap-B/replica")
	if fds0 >= 0 {
		b.ReportMetric(float64(fds1-fds0)/replicas, "fds/replica")
	}
	b.ReportMetric(float64(len(report))/float64(size), "report-B/replica")
	b.ReportMetric(float64(meta.Size()), "meta-B")
	b.ReportMetric(closing.Seconds(), "close-s")
	b.ReportMetric(open.Seconds(), "open-s")
	b.ReportMetric(openAll.Seconds(), "open-all-s")
	b.ReportMetric(float64(len(led)), "failovers")
	b.ReportMetric(failover.Seconds(), "failover-s")
}

// scalePart is one partition of BenchmarkScale's topics.
type scalePart struct {
	name string
	p    int
}

// forEachPartition calls fn for every partition of parts, scaleWorkers at
// a time, and fails b on the first error.
func forEachPartition(b *testing.B, parts []scalePart, fn func(scalePart) error) {
	work := make(chan scalePart)
	errs := make(chan error, scaleWorkers)
	var wg sync.WaitGroup
	for range scaleWorkers {
		wg.Go(func() {
			var first error
			for w := range work {
				if err := fn(w); err != nil && first == nil {
					first = fmt.Errorf("%s/%d: %w", w.name, w.p, err)
				}
			}
			errs <- first
		})
	}
	for _, w := range parts {
		work <- w
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// openFiles counts the process's open descriptors, -1 where
// /proc/self/fd does not list them.
func openFiles(b *testing.B) int {
	if runtime.GOOS != "linux" {
		return -1
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		b.Fatalf("count open files: %v", err)
	}
	return len(entries)
}

// errorsJoinClose closes c after err, keeping both errors.
func errorsJoinClose(err error, c *Cluster) error {
	if cerr := c.Close(); cerr != nil {
		return fmt.Errorf("%w (close: %v)", err, cerr)
	}
	return err
}
