package client_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/topic"
)

// The produce → fetch → process → commit → restart cycle. The second
// consumer, standing for the same worker after a restart, resumes at the
// committed offset: the record fetched but not committed is delivered
// again (at-least-once).
func Example() {
	dir, err := os.MkdirTemp("", "pystream-client-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	orders, err := topic.Open(filepath.Join(dir, "data"), "orders", 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer orders.Close()
	store, err := client.OpenOffsetStore(filepath.Join(dir, "offsets"))
	if err != nil {
		fmt.Println(err)
		return
	}

	producer := client.NewProducer(orders)
	for _, p := range []string{"apple", "banana", "cherry"} {
		if _, err := producer.Send(nil, []byte(p)); err != nil {
			fmt.Println(err)
			return
		}
	}

	cfg := client.ConsumerConfig{ID: "analytics-worker", Topic: orders, Partition: 0, Offsets: store}
	worker, err := client.NewConsumer(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	recs, _ := worker.Fetch(2)
	for _, r := range recs {
		fmt.Printf("processed offset %d: %s\n", r.Offset, r.Payload)
	}
	if err := worker.Commit(); err != nil {
		fmt.Println(err)
		return
	}
	recs, _ = worker.Fetch(10) // fetched, then the worker "crashes" before committing
	fmt.Printf("fetched offset %d, not committed\n", recs[0].Offset)

	restarted, err := client.NewConsumer(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	committed, ok := restarted.Committed()
	fmt.Println("restart at", restarted.Position(), "committed", committed, ok)
	recs, _ = restarted.Fetch(10)
	for _, r := range recs {
		fmt.Printf("processed offset %d: %s\n", r.Offset, r.Payload)
	}
	if err := restarted.Commit(); err != nil {
		fmt.Println(err)
		return
	}
	committed, _ = restarted.Committed()
	fmt.Println("committed", committed)
	// Output:
	// processed offset 0: apple
	// processed offset 1: banana
	// fetched offset 2, not committed
	// restart at 2 committed 2 true
	// processed offset 2: cherry
	// committed 3
}
