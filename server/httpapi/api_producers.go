package httpapi

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/topic/envelope"
)

// This file is the HTTP side of idempotent producers (Kafka's KIP-98,
// docs/kafka.md § Idempotent producers): POST /api/producers hands out a
// producer id, a produce request may carry the producer's id, epoch and
// first sequence number, and the partition leader's refusals are mapped
// to answers. The rule itself is the cluster's (cluster/producers.go),
// applied by the partition's leader to the producer identity each stored
// payload's envelope carries; this file only puts the identity there.

// handleNewProducer answers POST /api/producers: a producer id never
// handed out before in the cluster, at epoch 0. A metadata store that
// cannot reserve ids now is 503 with Retry-After, whatever its cause: the
// client asks again later, and nothing was handed out.
func (a *API) handleNewProducer(w http.ResponseWriter, r *http.Request) {
	id, err := a.data.NewProducerID(r.Context())
	if err != nil {
		e := a.opError("new producer id", err)
		if e.status != http.StatusServiceUnavailable {
			e = &apiError{status: http.StatusServiceUnavailable, cause: e.cause,
				body: ErrorBody{Code: CodeUnavailable, Message: "no producer id can be reserved now: " + e.body.Message + "; try again"}}
		}
		writeAPIError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, apiclient.NewProducerResponse{ProducerID: id, Epoch: 0})
}

// produceProducer is apiclient.ProducerIdentity as the server reads it:
// every field required, and read wide, so that a negative or too large
// number is refused naming its field.
type produceProducer struct {
	ID       *int64 `json:"id"`
	Epoch    *int64 `json:"epoch"`
	Sequence *int64 `json:"sequence"`
}

// identity checks p and returns it as the envelope carries it.
func (p *produceProducer) identity() (envelope.Producer, *apiError) {
	for _, f := range []struct {
		name string
		v    *int64
	}{{"id", p.ID}, {"epoch", p.Epoch}, {"sequence", p.Sequence}} {
		if f.v == nil {
			return envelope.Producer{}, badRequest(`producer.%s is required: {"producer": {"id": N, "epoch": E, "sequence": S}} (POST /api/producers gives the id and epoch)`, f.name)
		}
	}
	return producerIdentity("producer.id", "producer.epoch", "producer.sequence", *p.ID, *p.Epoch, *p.Sequence)
}

// producerIdentity checks an idempotent producer's id (0 and up), epoch
// (0 to 32767) and first sequence number (0 to 2147483647), named as the
// request names them.
func producerIdentity(idName, epochName, seqName string, id, epoch, seq int64) (envelope.Producer, *apiError) {
	switch {
	case id < 0:
		return envelope.Producer{}, badRequest("%s %d: a producer id from 0 (POST /api/producers gives one)", idName, id)
	case epoch < 0 || epoch > math.MaxInt16:
		return envelope.Producer{}, badRequest("%s %d: an epoch from 0 to %d", epochName, epoch, math.MaxInt16)
	case seq < 0 || seq > math.MaxInt32:
		return envelope.Producer{}, badRequest("%s %d: a sequence number from 0 to %d", seqName, seq, math.MaxInt32)
	}
	return envelope.Producer{ID: id, Epoch: int16(epoch), Sequence: int32(seq)}, nil
}

// The query parameters that carry an idempotent producer's identity in
// the application/octet-stream form of a produce request.
const (
	queryProducerID    = "producer_id"
	queryProducerEpoch = "producer_epoch"
	querySequence      = "sequence"
)

// producerQuery reads producer_id, producer_epoch and sequence of an
// application/octet-stream produce request: all three or none.
func producerQuery(q map[string]string) (*envelope.Producer, *apiError) {
	names := []string{queryProducerID, queryProducerEpoch, querySequence}
	var vals [3]int64
	given := 0
	for i, n := range names {
		v, ok := q[n]
		if !ok {
			continue
		}
		given++
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, badRequest("invalid %s %s: a decimal integer", n, quoted(v))
		}
		vals[i] = x
	}
	switch given {
	case 0:
		return nil, nil
	case len(names):
	default:
		return nil, badRequest("an idempotent produce gives %s, %s and %s together", queryProducerID, queryProducerEpoch, querySequence)
	}
	p, ae := producerIdentity(queryProducerID, queryProducerEpoch, querySequence, vals[0], vals[1], vals[2])
	if ae != nil {
		return nil, ae
	}
	return &p, nil
}

// producerAt is the identity of record i of a request whose first
// record is p's: sequence p.Sequence+i, wrapping as Kafka's do.
func producerAt(p envelope.Producer, i int) envelope.Producer {
	return envelope.Producer{ID: p.ID, Epoch: p.Epoch, Sequence: envelope.SequenceAt(p.Sequence, int64(i))}
}

// producerRefusal maps an idempotent producer's request refused by the
// partition's leader (cluster/producers.go) to its answer; false for any
// other error. A refused request wrote nothing. The batch sent again
// before its first write reached every active replica is retriable: 503,
// and the same request is answered with its offsets once it has.
func producerRefusal(err error) (*apiError, bool) {
	var dup *cluster.DuplicateNotCommittedError
	if errors.As(err, &dup) {
		return newAPIError(http.StatusServiceUnavailable, CodeUnavailable,
			"%s/%d: producer %d's records from sequence %d were written before, but not yet by every active replica (high watermark %d); send the same request again",
			dup.Topic, dup.Partition, dup.Producer.ID, dup.Producer.Sequence, dup.HW), true
	}
	status, code := http.StatusConflict, ""
	switch {
	case errors.Is(err, cluster.ErrOutOfOrderSequence):
		code = CodeOutOfOrderSequence
	case errors.Is(err, cluster.ErrDuplicateSequence):
		code = CodeDuplicateSequence
	case errors.Is(err, cluster.ErrInvalidProducerEpoch):
		code = CodeInvalidProducerEpoch
	case errors.Is(err, cluster.ErrUnknownProducer):
		code = CodeUnknownProducer
	case errors.Is(err, cluster.ErrInvalidProducerBatch):
		status, code = http.StatusBadRequest, CodeInvalidProducerBatch
	default:
		return nil, false
	}
	var pe *cluster.ProducerError
	if !errors.As(err, &pe) {
		return newAPIError(status, code, "%s; nothing was written", tidy(err.Error())), true
	}
	return newAPIError(status, code, "%s", producerRefusalMessage(pe)), true
}

// producerRefusalMessage says, in PyStream's terms, why the leader
// refused pe's request and what the producer does about it.
func producerRefusalMessage(pe *cluster.ProducerError) string {
	p := pe.Producer
	who := fmt.Sprintf("%s/%d: producer %d epoch %d sequence %d", pe.Topic, pe.Partition, p.ID, p.Epoch, p.Sequence)
	switch {
	case errors.Is(pe, cluster.ErrOutOfOrderSequence):
		if pe.Expected >= 0 {
			return fmt.Sprintf("%s: out of order, the partition expects sequence %d (a request in between is missing, or a new epoch does not start at 0); nothing was written", who, pe.Expected)
		}
		return who + ": out of order; nothing was written"
	case errors.Is(pe, cluster.ErrDuplicateSequence):
		return who + ": written before, longer ago than the partition keeps offsets: count it written; nothing was written again"
	case errors.Is(pe, cluster.ErrInvalidProducerEpoch):
		return who + ": a newer epoch of this producer id has written to the partition (the producer was fenced); nothing was written"
	case errors.Is(pe, cluster.ErrUnknownProducer):
		return who + ": the partition knows no such producer (it never wrote here, or was silent too long) and the sequence is not 0; nothing was written"
	}
	return who + ": the request's records are not one producer's consecutive sequence numbers; nothing was written"
}
