package clusternode

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/replication"
)

// Records serves this node's log of a partition (replication.Peer): to a
// follower, up to the log end; to a consumer's read (Committed), only
// below the high watermark and only from the leader.
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
	}
	if req.From >= upto || req.MaxBytes <= 0 {
		return res, nil
	}
	if req.From < res.LogStart && !req.Committed {
		return res, nil // a follower behind the log start: it resets there
	}
	res.Records, err = readFrom(l, req.From, upto)
	if err != nil {
		return replication.RecordsResponse{}, err
	}
	res.Records = capBytes(res.Records, req.MaxBytes)
	return res, nil
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
