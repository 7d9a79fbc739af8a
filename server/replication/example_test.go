package replication_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/pystream/pystream/cluster"
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

// Replicate appends records that follow on from the follower's end, and
// refuses records from further on with the replication core's own
// *cluster.BehindError.
func (f *memFollower) Replicate(_ context.Context, req cluster.ReplicateRequest) (cluster.ReplicateResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	end := uint64(len(f.recs))
	if len(req.Records) > 0 && req.Records[0].Offset != end {
		return cluster.ReplicateResponse{}, &cluster.BehindError{Topic: req.Topic, Partition: req.Partition, End: end, Base: req.Records[0].Offset}
	}
	f.recs = append(f.recs, req.Records...)
	return cluster.ReplicateResponse{End: uint64(len(f.recs))}, nil
}

// errFollowerOnly refuses the rest of the internal API: this node only
// follows.
var errFollowerOnly = errors.New("example: this node only follows")

func (f *memFollower) MaxPayloadSize() int { return 1 << 20 }

func (f *memFollower) Records(context.Context, cluster.RecordsRequest) (cluster.RecordsResponse, error) {
	return cluster.RecordsResponse{}, errFollowerOnly
}

func (f *memFollower) Digests(context.Context, cluster.DigestsRequest) (cluster.DigestsResponse, error) {
	return cluster.DigestsResponse{}, errFollowerOnly
}

func (f *memFollower) Cut(context.Context, cluster.CutRequest) (cluster.CutResponse, error) {
	return cluster.CutResponse{}, errFollowerOnly
}

func (f *memFollower) Produce(context.Context, cluster.ProduceRequest) (cluster.ProduceResponse, error) {
	return cluster.ProduceResponse{}, errFollowerOnly
}

func (f *memFollower) OffsetForTime(context.Context, cluster.OffsetForTimeRequest) (cluster.OffsetForTimeResponse, error) {
	return cluster.OffsetForTimeResponse{}, errFollowerOnly
}

func (f *memFollower) Operate(context.Context, cluster.OperateRequest) (cluster.OperateResponse, error) {
	return cluster.OperateResponse{}, errFollowerOnly
}

func (f *memFollower) Propose(context.Context, []byte) ([]byte, error) {
	return nil, errFollowerOnly
}

func (f *memFollower) Heartbeat(context.Context, replication.Heartbeat) (replication.Observation, error) {
	return replication.Observation{}, errFollowerOnly
}

func (f *memFollower) Membership(context.Context, replication.MembershipRequest) error {
	return errFollowerOnly
}

// A leader replicates two records to a follower on loopback: the follower
// serves NewHandler over HTTP/2 without TLS, the leader calls it with a
// Client. The follower's refusal reaches the leader as the error the
// follower returned.
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

	leader := replication.NewClient(nil, 0)
	defer leader.Close()
	res, err := leader.Replicate(context.Background(), ln.Addr().String(), cluster.ReplicateRequest{
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
	_, err = leader.Replicate(context.Background(), ln.Addr().String(), cluster.ReplicateRequest{
		Topic: "orders", Partition: 0, Epoch: 1, Leader: 1,
		Records: []log.Record{{Offset: 5, Payload: []byte("sixth")}},
	})
	var behind *cluster.BehindError
	if errors.As(err, &behind) {
		fmt.Println("refused:", err)
		fmt.Println("send from", behind.End, "first")
	}
	// Output:
	// follower's end: 2
	// refused: cluster: orders/0 ends at 2, before 5
	// send from 2 first
}
