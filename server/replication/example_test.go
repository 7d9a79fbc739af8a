package replication_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/replication"
)

// memFollower is a follower of one partition that keeps its records in
// memory. It is safe for concurrent use.
type memFollower struct {
	// mu guards recs.
	mu   sync.Mutex
	recs []log.Record
}

// Replicate appends records that follow on from the follower's end.
func (f *memFollower) Replicate(_ context.Context, req replication.ReplicateRequest) (replication.ReplicateResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	end := uint64(len(f.recs))
	if len(req.Records) > 0 && req.Records[0].Offset != end {
		e := replication.Errorf(replication.CodeBehind, "log ends at %d", end)
		e.End = end
		return replication.ReplicateResponse{}, e
	}
	f.recs = append(f.recs, req.Records...)
	return replication.ReplicateResponse{End: uint64(len(f.recs))}, nil
}

// The rest of the internal API is refused: this node only follows.
func (f *memFollower) Records(context.Context, replication.RecordsRequest) (replication.RecordsResponse, error) {
	return replication.RecordsResponse{}, replication.Errorf(replication.CodeRefused, "follower only")
}

func (f *memFollower) Produce(context.Context, replication.ProduceRequest) (replication.ProduceResponse, error) {
	return replication.ProduceResponse{}, replication.Errorf(replication.CodeNotLeader, "follower only")
}

func (f *memFollower) Propose(context.Context, []byte) ([]byte, error) {
	return nil, replication.Errorf(replication.CodeNotLeader, "follower only")
}

func (f *memFollower) Heartbeat(context.Context, replication.Heartbeat) error {
	return replication.Errorf(replication.CodeNotLeader, "follower only")
}

func (f *memFollower) CatchUp(context.Context, string, int, int) (replication.CatchUpResponse, error) {
	return replication.CatchUpResponse{}, replication.Errorf(replication.CodeNotLeader, "follower only")
}

func (f *memFollower) Membership(context.Context, replication.MembershipRequest) error {
	return replication.Errorf(replication.CodeNotLeader, "follower only")
}

func (f *memFollower) OffsetForTime(context.Context, replication.OffsetForTimeRequest) (replication.OffsetForTimeResponse, error) {
	return replication.OffsetForTimeResponse{}, replication.Errorf(replication.CodeNotLeader, "follower only")
}

// A leader replicates two records to a follower on loopback: the follower
// serves NewHandler over HTTP/2 without TLS, the leader calls it with a
// Client.
func ExampleClient_Replicate() {
	follower := &memFollower{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: replication.NewHandler(follower, nil), Protocols: &protocols}
	go srv.Serve(ln)
	defer srv.Close()

	leader := replication.NewClient(nil)
	defer leader.Close()
	res, err := leader.Replicate(context.Background(), ln.Addr().String(), replication.ReplicateRequest{
		Topic: "orders", Partition: 0, Epoch: 1, Leader: 1,
		Records: []log.Record{
			{Offset: 0, Timestamp: 1_700_000_000_000_000_000, Payload: []byte("first")},
			{Offset: 1, Timestamp: 1_700_000_000_000_000_001, Payload: []byte("second")},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("follower's end:", res.End)

	// A write from further on is refused with the follower's end.
	_, err = leader.Replicate(context.Background(), ln.Addr().String(), replication.ReplicateRequest{
		Topic: "orders", Partition: 0, Epoch: 1, Leader: 1,
		Records: []log.Record{{Offset: 5, Payload: []byte("sixth")}},
	})
	fmt.Println(replication.CodeOf(err), replication.Temporary(err))
	// Output:
	// follower's end: 2
	// behind false
}
