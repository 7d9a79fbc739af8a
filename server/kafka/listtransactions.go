package kafka

import (
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
)

// txnStateNames are the transaction states by Kafka's names, which
// ListTransactions and DescribeTransactions answer and filter by.
var txnStateNames = map[cluster.TxnState]string{
	cluster.TxnEmpty:          "Empty",
	cluster.TxnOngoing:        "Ongoing",
	cluster.TxnPrepareCommit:  "PrepareCommit",
	cluster.TxnPrepareAbort:   "PrepareAbort",
	cluster.TxnCompleteCommit: "CompleteCommit",
	cluster.TxnCompleteAbort:  "CompleteAbort",
}

// txnStateName is st by Kafka's name; a state Kafka has no name for by
// PyStream's.
func txnStateName(st cluster.TxnState) string {
	if n, ok := txnStateNames[st]; ok {
		return n
	}
	return string(st)
}

// listTransactions answers ListTransactions (key 66) v0-v1: every
// transactional id the coordinator knows, with its producer id and
// state, filtered by state names (Kafka's: Ongoing, PrepareCommit, ...;
// a name Kafka does not have is answered back in UnknownStateFilters), by
// producer ids, and from v1 by how long the open transaction has run
// (DurationFilterMillis, -1 for any). As ListGroups, only the coordinator
// lists (every broker of the embedded cluster, the coordinating node in a
// cluster of processes); another node answers an empty list, which an
// admin client asking every broker merges away.
func (s *Server) listTransactions(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.ListTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	if !s.listsGroups(x.broker) {
		return resp // another broker lists them (listsGroups)
	}
	var states []string
	for _, f := range req.StateFilters {
		if slices.Contains(slices.Collect(maps.Values(txnStateNames)), f) {
			states = append(states, f)
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, f)
		}
	}
	if len(req.StateFilters) > 0 && len(states) == 0 {
		return resp // every filter unknown: nothing matches
	}
	txns, err := s.c.Transactions()
	if err != nil {
		resp.ErrorCode = x.code(txnCode(err, kmsg.ListTransactions, req.Version))
		x.noteTxnRefusal("", err)
		return resp
	}
	now := time.Now()
	for _, t := range txns {
		name := txnStateName(t.State)
		switch {
		case len(states) > 0 && !slices.Contains(states, name):
			continue
		case len(req.ProducerIDFilters) > 0 && !slices.Contains(req.ProducerIDFilters, t.ProducerID):
			continue
		case req.Version >= 1 && req.DurationFilterMillis >= 0 &&
			(t.Started.IsZero() || now.Sub(t.Started) < time.Duration(req.DurationFilterMillis)*time.Millisecond):
			continue
		}
		lt := kmsg.NewListTransactionsResponseTransactionState()
		lt.TransactionalID, lt.ProducerID, lt.TransactionState = t.ID, t.ProducerID, name
		resp.TransactionStates = append(resp.TransactionStates, lt)
	}
	return resp
}

func failListTransactions(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.ListTransactionsRequest).ResponseKind().(*kmsg.ListTransactionsResponse)
	resp.ErrorCode = code
	return resp
}
