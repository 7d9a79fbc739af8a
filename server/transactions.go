package server

import (
	"context"
	"time"
)

// The transaction coordinator (cluster.InitTransactions and the rest,
// which the Kafka listener serves) answers requests on its own; what it
// does with no request — finish an end whose markers could not all be
// written, abort a transaction open past its timeout, forget an id idle
// past cluster.TransactionalIDExpiration — is its periodic pass,
// cluster.TickTransactions, which this loop runs where transactions are
// coordinated: in the embedded cluster here, in cluster mode on the node
// that coordinates consumer groups (groupCoordinator), transactions
// living beside the groups' committed offsets.

// TxnTickInterval is how often the transaction coordinator's pass runs.
const TxnTickInterval = time.Second

// txnTickTimeout bounds one pass: a pass whose markers wait on a partition
// leader that does not answer gives up, and the next one tries again.
const txnTickTimeout = 30 * time.Second

// txnLogEvery is how often a pass that keeps failing the same way is
// logged again.
const txnLogEvery = time.Minute

// startTransactions runs the transaction coordinator's pass every
// TxnTickInterval until Close; the server's cluster (or node) is open
// already. In cluster mode a pass runs only while this node coordinates,
// and the first after it started to coordinate waits until its copy of
// the metadata holds every command committed before (a barrier), so that
// it decides on the states the coordinator before it left. A pass that
// fails is logged — once, then at most every txnLogEvery while the error
// stays the same — and tried again at the next tick.
func (s *Server) startTransactions() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(TxnTickInterval)
		defer t.Stop()
		caughtUp := false // in cluster mode: the barrier passed since this node started coordinating
		var lastErr string
		var lastLogged time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if s.node != nil {
				if _, here := s.groupCoordinator(); !here {
					caughtUp = false
					continue
				}
			}
			pass, stop := context.WithTimeout(ctx, txnTickTimeout)
			var err error
			if s.node != nil && !caughtUp {
				if err = s.node.Barrier(pass); err == nil {
					caughtUp = true
				}
			}
			if err == nil {
				err = s.metaCluster().TickTransactions(pass, time.Now())
			}
			stop()
			switch {
			case err == nil:
				lastErr = ""
			case ctx.Err() != nil:
				return
			case err.Error() != lastErr || time.Since(lastLogged) >= txnLogEvery:
				lastErr, lastLogged = err.Error(), time.Now()
				s.logger.Warn("transactions: the coordinator's pass did not finish; it is tried again every second", "err", err)
			}
		}
	}()
	s.stopTransactions = func() {
		cancel()
		<-done
	}
}
