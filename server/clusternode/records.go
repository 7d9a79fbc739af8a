package clusternode

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/server/replication"
)

// Records serves this node's log of a partition (replication.Peer): to a
// follower, up to the log end; to a consumer's read (Committed), only
// below the high watermark and only from the leader, and below the log
// start not at all (CodeOffsetOutOfRange, as cluster.Cluster.ReadCommitted
// refuses it).
func (n *Node) Records(ctx context.Context, req replication.RecordsRequest) (replication.RecordsResponse, error) {
	pm, err := n.partitionMeta(req.Topic, req.Partition)
	if err != nil {
		return replication.RecordsResponse{}, &replication.Error{Code: replication.CodeRefused, Reason: refusalName(err), Message: err.Error()}
	}
	if req.Committed && pm.Leader != n.cfg.ID {
		return replication.RecordsResponse{}, &replication.Error{Code: replication.CodeNotLeader, Leader: pm.Leader,
			Message: fmt.Sprintf("%s/%d is led by broker %d", req.Topic, req.Partition, pm.Leader)}
	}
	l, err := n.broker.Replica(req.Topic, req.Partition, false)
	if err != nil {
		return replication.RecordsResponse{}, err
	}
	r := n.replica(req.Topic, req.Partition)
	res := replication.RecordsResponse{LogStart: l.LogStart(), LogEnd: l.NextOffset(), HighWatermark: r.highWatermark()}
	upto := res.LogEnd
	if req.Committed {
		upto = min(upto, res.HighWatermark)
		res.LogStart = min(res.LogStart, res.HighWatermark)
	}
	if req.From >= upto || req.MaxBytes <= 0 {
		return res, nil
	}
	if req.Committed && req.From < res.LogStart {
		return replication.RecordsResponse{}, outOfRangeRefusal(req, res.LogStart, res.HighWatermark)
	}
	if req.From < res.LogStart && !req.Committed {
		return res, nil // a follower behind the log start: it resets there
	}
	res.Records, err = readFrom(l, req.From, upto)
	if req.Committed && errors.Is(err, segment.ErrBeforeLogStart) { // retention ran meanwhile
		return replication.RecordsResponse{}, outOfRangeRefusal(req, l.LogStart(), res.HighWatermark)
	}
	if err != nil {
		return replication.RecordsResponse{}, err
	}
	res.Records = capBytes(res.Records, req.MaxBytes)
	return res, nil
}

// outOfRangeRefusal is a committed read below the log start, as it
// travels to the node that forwarded it.
func outOfRangeRefusal(req replication.RecordsRequest, logStart, hw uint64) *replication.Error {
	return &replication.Error{Code: replication.CodeOffsetOutOfRange, Offset: req.From, LogStart: logStart, HighWatermark: hw,
		Message: fmt.Sprintf("%s/%d: offset %d is below the log start %d", req.Topic, req.Partition, req.From, logStart)}
}

// outOfRange turns a CodeOffsetOutOfRange refusal back into the
// *client.OffsetOutOfRangeError the embedded cluster returns; other errors
// pass unchanged.
func outOfRange(topicName string, partition int, err error) error {
	var re *replication.Error
	if errors.As(err, &re) && re.Code == replication.CodeOffsetOutOfRange {
		return &client.OffsetOutOfRangeError{Topic: topicName, Partition: partition, Offset: re.Offset,
			LogStart: re.LogStart, HighWatermark: re.HighWatermark}
	}
	return err
}

// OffsetForTime searches a partition this node leads by time
// (replication.Peer), never past its high watermark.
func (n *Node) OffsetForTime(ctx context.Context, req replication.OffsetForTimeRequest) (replication.OffsetForTimeResponse, error) {
	pm, err := n.partitionMeta(req.Topic, req.Partition)
	if err != nil {
		return replication.OffsetForTimeResponse{}, &replication.Error{Code: replication.CodeRefused, Reason: refusalName(err), Message: err.Error()}
	}
	if pm.Leader != n.cfg.ID {
		return replication.OffsetForTimeResponse{}, &replication.Error{Code: replication.CodeNotLeader, Leader: pm.Leader,
			Message: fmt.Sprintf("%s/%d is led by broker %d", req.Topic, req.Partition, pm.Leader)}
	}
	l, err := n.broker.Replica(req.Topic, req.Partition, false)
	if err != nil {
		return replication.OffsetForTimeResponse{}, err
	}
	hw := n.replica(req.Topic, req.Partition).highWatermark()
	off, found, err := l.OffsetForTime(req.Timestamp)
	if err != nil {
		return replication.OffsetForTimeResponse{}, fmt.Errorf("clusternode: offset for time in %s/%d: %w", req.Topic, req.Partition, err)
	}
	if !found || off >= hw {
		return replication.OffsetForTimeResponse{Offset: hw}, nil
	}
	// A retention pass may have run since the search: never answer an
	// offset below what is readable now.
	return replication.OffsetForTimeResponse{Offset: max(off, l.LogStart()), Found: true}, nil
}

// capBytes keeps the leading records within max bytes of frames, at least
// one.
func capBytes(recs []log.Record, max int) []log.Record {
	size := 0
	for i, r := range recs {
		size += log.FrameSize(len(r.Payload))
		if size > max && i > 0 {
			return recs[:i]
		}
	}
	return recs
}

func cutPrefix(path, dir string) (string, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	return strings.CutPrefix(path, abs+string(filepath.Separator))
}
