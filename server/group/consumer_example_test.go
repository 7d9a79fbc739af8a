package group_test

import (
	"context"
	"fmt"

	"github.com/pystream/pystream/server/group"
)

// Two members share a topic of four partitions: the second is assigned
// its half once the first has released it.
func ExampleConsumerCoordinator_Heartbeat() {
	c := group.NewConsumerCoordinator(group.ConsumerConfig{
		Topics: func(names []string) map[string]int32 { return map[string]int32{"orders": 4} },
	})
	ctx := context.Background()
	join := group.Heartbeat{MemberEpoch: 0, Topics: []string{"orders"}}
	a, _ := c.Heartbeat(ctx, "billing", join)
	fmt.Println("first:", a.MemberEpoch, a.Partitions)

	b, _ := c.Heartbeat(ctx, "billing", join)
	fmt.Println("second joins:", b.MemberEpoch, b.Partitions)

	// The first still owns everything: it is told to release 2 and 3,
	// commits them, and says so in its next heartbeat.
	a, _ = c.Heartbeat(ctx, "billing", group.Heartbeat{MemberID: a.MemberID, MemberEpoch: a.MemberEpoch, Owned: a.Partitions})
	fmt.Println("first keeps:", a.MemberEpoch, a.Partitions)
	a, _ = c.Heartbeat(ctx, "billing", group.Heartbeat{MemberID: a.MemberID, MemberEpoch: a.MemberEpoch, Owned: a.Partitions})

	b, _ = c.Heartbeat(ctx, "billing", group.Heartbeat{MemberID: b.MemberID, MemberEpoch: b.MemberEpoch})
	fmt.Println("second:", b.MemberEpoch, b.Partitions)
	// Output:
	// first: 1 [{orders [0 1 2 3]}]
	// second joins: 2 []
	// first keeps: 2 [{orders [0 1]}]
	// second: 2 [{orders [2 3]}]
}
