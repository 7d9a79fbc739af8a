package group_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pystream/pystream/server/group"
)

// A consumer joins a new group as JoinGroup v4+ does: the coordinator
// gives it a member id first, then its join with that id completes the
// group's first generation at once (no initial delay). As the leader it
// brings the assignment in its SyncGroup and gets its own part back.
func ExampleClassicCoordinator() {
	reg := group.NewRegistry()
	c := group.NewClassicCoordinator(reg, group.ClassicConfig{})
	defer c.Close()
	ctx := context.Background()

	req := group.JoinRequest{Group: "billing", ClientID: "worker", SessionTimeout: 10 * time.Second,
		ProtocolType: "consumer", Protocols: []group.ProtocolMetadata{{Name: "range"}}, RequireKnownMemberID: true}
	first, err := c.Join(ctx, req)
	fmt.Println(errors.Is(err, group.ErrMemberIDRequired))
	req.MemberID = first.MemberID
	joined, _ := c.Join(ctx, req)
	fmt.Println(joined.Generation, joined.Protocol, joined.LeaderID == joined.MemberID, len(joined.Members))

	synced, _ := c.Sync(ctx, group.SyncRequest{Group: "billing", MemberRef: group.MemberRef{MemberID: joined.MemberID},
		Generation: joined.Generation, Assignments: map[string][]byte{joined.MemberID: []byte("partitions 0-5")}})
	fmt.Println(string(synced.Assignment))
	p, _ := reg.Protocol("billing")
	fmt.Println(c.List()[0].State, p)
	// Output:
	// true
	// 1 range true 1
	// partitions 0-5
	// Stable classic
}
