package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// initProducerID answers InitProducerID (key 22) v0-v4 for an idempotent
// producer: a producer id never handed out before in the cluster, at
// epoch 0 (backend.Data.NewProducerID). A producer that asks again —
// after a sequence error, or with its id and epoch (v3+, KIP-360) — gets
// a new id, as a Kafka broker gives an idempotent producer: its records
// are then told apart from the old id's. A transactional id is refused:
// transactions are not served.
func (s *Server) initProducerID(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		s.cfg.Logger.Info("kafka: InitProducerID with a transactional id refused: transactions are not served",
			"transactional_id", *req.TransactionalID, "remote", x.remote)
		resp.ErrorCode = x.code(kerr.InvalidRequest.Code)
		return resp
	}
	id, err := s.c.NewProducerID(x.ctx)
	if err != nil {
		s.cfg.Logger.Warn("kafka: no producer id", "err", err)
		resp.ErrorCode = x.code(kerr.CoordinatorNotAvailable.Code)
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp
}

func failInitProducerID(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.InitProducerIDRequest).ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch, resp.ErrorCode = -1, -1, code
	return resp
}
