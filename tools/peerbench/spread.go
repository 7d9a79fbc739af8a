package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The spread rows (-kafka-spread N): the same kgo load as the produce
// rows, written alternately into a topic of -kafka-partitions partitions
// (3 by default) and into one of N partitions, on the same brokers, slice
// by slice, so that both see the machine as it is within the same second.
// Their ratio is what spreading writes over many partitions costs: with
// one fsync per partition's file, every record pays its own fsync once
// the partitions outnumber the records in flight; through each broker's
// commit journal (PYSTREAM_SHARED_SYNC=journal, the default) or a shared
// sync of the file system (syncfs), the appends in flight share one
// wherever they go.

// kindSpread is a spread row: a kgo produce row into the topic of many
// partitions, paired with its row into the topic of few.
const kindSpread = "spread"

// spreadTarget is the Kafka cluster the spread rows load: PyStream's
// brokers, or the ceiling's (kfake.go).
type spreadTarget struct {
	// name begins the rows' system: "pystream" or "kafka-ceiling kfake".
	name  string
	seeds []string
	// create makes a topic of partitions partitions and replication
	// factor rf.
	create func(topic string, partitions, rf int) error
	// stats reads the server's sync counters; nil for a server that
	// keeps none.
	stats func() (syncCounts, error)
	// ceiling marks the ceiling's rows.
	ceiling bool
}

// pystreamSpread is PyStream's server at base (HTTP) with seeds, its
// brokers' Kafka listeners, as a spread rows' target.
func pystreamSpread(httpc *http.Client, base string, seeds []string) spreadTarget {
	return spreadTarget{name: "pystream", seeds: seeds,
		create: func(topic string, partitions, rf int) error { return createTopic(httpc, base, topic, partitions, rf) },
		stats:  func() (syncCounts, error) { return syncStats(httpc, base) }}
}

// benchSpread measures the spread rows of target for replication factor
// rf: the produce row into few partitions and the one into
// cfg.kafkaSpread, in cfg.kafkaSlices alternating slices each.
func benchSpread(cfg config, target spreadTarget, rf int) (few, many result, err error) {
	names := [2]string{fmt.Sprintf("kspread-rf%d-p%d", rf, cfg.kafkaPartitions), fmt.Sprintf("kspread-rf%d-p%d", rf, cfg.kafkaSpread)}
	parts := [2]int{cfg.kafkaPartitions, cfg.kafkaSpread}
	var clients [2]*kgo.Client
	for i := range names {
		if err := target.create(names[i], parts[i], rf); err != nil {
			return result{}, result{}, err
		}
		cl, err := kgo.NewClient(producerOpts(cfg, target.seeds, names[i])...)
		if err != nil {
			return result{}, result{}, err
		}
		defer cl.Close()
		clients[i] = cl
	}
	payload := make([]byte, cfg.size)
	for i := range payload {
		payload[i] = 'k'
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*cfg.deadline+10*time.Second)
	defer cancel()
	sender := func(i int) func(w int) error {
		n := int32(parts[i])
		return func(w int) error {
			r := &kgo.Record{Value: payload}
			if cfg.kafkaPartitioner == partitionerWorker {
				r.Partition = int32(w) % n
			}
			return clients[i].ProduceSync(ctx, r).FirstErr()
		}
	}
	// A warm-up of each, not measured: kgo learns the leaders of every
	// partition and connects to each broker.
	for i := range clients {
		warm := cfg
		warm.records = max(4*cfg.clients, 2*parts[i])
		if _, _, err := load(warm, sender(i)); err != nil {
			return result{}, result{}, fmt.Errorf("kgo produce warm-up into %s: %w", names[i], err)
		}
	}
	var (
		lat    [2][]time.Duration
		dur    [2]time.Duration
		syncs  [2]float64
		ratios []float64
		// whole and wholeSeconds count the syncs of the whole file
		// system and the time they took.
		whole, wholeSeconds [2]float64
	)
	per := max(1, cfg.records/cfg.kafkaSlices)
	for s := 0; s < cfg.kafkaSlices && dur[0]+dur[1] < cfg.deadline; s++ {
		var rate [2]float64
		for i := range clients {
			one := cfg
			one.records = per
			var before, after syncCounts
			if target.stats != nil {
				if before, err = target.stats(); err != nil {
					return result{}, result{}, err
				}
			}
			l, d, err := load(one, sender(i))
			if err != nil {
				return result{}, result{}, fmt.Errorf("kgo produce into %s: %w", names[i], err)
			}
			if target.stats != nil {
				if after, err = target.stats(); err != nil {
					return result{}, result{}, err
				}
			}
			lat[i], dur[i] = append(lat[i], l...), dur[i]+d
			syncs[i] += (after.file-before.file)/float64(rf) + after.whole - before.whole
			whole[i] += after.whole - before.whole
			wholeSeconds[i] += after.wholeSeconds - before.wholeSeconds
			rate[i] = float64(len(l)) / d.Seconds()
		}
		ratios = append(ratios, rate[1]/rate[0])
	}
	var rows [2]result
	for i := range rows {
		rows[i], err = summarise(fmt.Sprintf("%s kgo produce rf=%d p=%d", target.name, rf, parts[i]), cfg.clients, cfg.records, lat[i], dur[i])
		if err != nil {
			return result{}, result{}, fmt.Errorf("kgo produce into %s: %w", names[i], err)
		}
		rows[i].Note = cfg.kafkaPartitioner + " partitioner"
		if target.stats != nil {
			rows[i].Note = fmt.Sprintf("%.1f records per sync per replica, %s", float64(len(lat[i]))/math.Max(syncs[i], 1), rows[i].Note)
		}
		if whole[i] > 0 {
			rows[i].Note += fmt.Sprintf(", %.0f syncs of the file system a second, %.2f ms each", whole[i]/dur[i].Seconds(), 1000*wholeSeconds[i]/whole[i])
		}
		rows[i].kind, rows[i].pair, rows[i].ceiling = kindSpread, rf, target.ceiling
	}
	slices.Sort(ratios)
	rows[1].PairedMedian, rows[1].PairedMin, rows[1].PairedMax, rows[1].Slices = median(ratios), ratios[0], ratios[len(ratios)-1], len(ratios)
	return rows[0], rows[1], nil
}
