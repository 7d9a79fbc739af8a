package backend_test

import (
	"fmt"

	"github.com/pystream/pystream/server/backend"
)

// A fetch that waits for new records of orders/0 watches the hub; the
// cluster calls Advanced when the partition's high watermark rises,
// whichever protocol wrote.
func ExampleHub() {
	hub := backend.NewHub()
	woken := make(chan struct{}, 1)
	stop := hub.Watch(woken, backend.Partition{Topic: "orders", Partition: 0})
	defer stop()

	hub.Advanced("orders", 0, 1) // as cluster.Options.Advanced
	<-woken
	fmt.Println("orders/0 advanced: read again")
	// Output: orders/0 advanced: read again
}
