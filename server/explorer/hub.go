package explorer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// register adds a stream and starts the poller if it is the first. The
// first stream of a stopped poller reads the state itself, so that its
// first message has it.
func (e *Explorer) register(c *client) error {
	e.mu.Lock()
	switch {
	case e.closed || c.srv != nil && e.ended[c.srv]:
		e.mu.Unlock()
		return ErrShuttingDown
	case len(e.clients) >= e.cfg.MaxClients:
		e.mu.Unlock()
		return fmt.Errorf("%w: %d, the most this server serves", ErrTooManyClients, e.cfg.MaxClients)
	case e.held[c.principal] >= e.cfg.MaxPerPrincipal:
		e.mu.Unlock()
		return fmt.Errorf("%w: %s holds %d, the most one principal may", ErrTooManyForPrincipal, c.principal, e.cfg.MaxPerPrincipal)
	}
	e.clients[c] = struct{}{}
	e.held[c.principal]++
	start := !e.polling
	if start {
		e.polling = true
		e.pollDone = make(chan struct{})
	}
	e.mu.Unlock()
	if start {
		e.poll() // before the first message; the poller goes on from here
		go e.poller()
	}
	return nil
}

// unregister removes a stream; the poller stops on its next tick when no
// stream is left.
func (e *Explorer) unregister(c *client) {
	e.mu.Lock()
	if _, ok := e.clients[c]; ok {
		delete(e.clients, c)
		if e.held[c.principal]--; e.held[c.principal] <= 0 {
			delete(e.held, c.principal)
		}
	}
	e.mu.Unlock()
}

// poller polls Interval after its last poll, or as soon as Advanced
// wakes it but never within MinGap of the last poll, until no stream is
// left or the explorer closes.
func (e *Explorer) poller() {
	last := time.Now() // register polled
	due := last.Add(e.cfg.Interval)
	t := time.NewTimer(e.cfg.Interval)
	defer t.Stop()
	for {
		quit := false
		select {
		case <-e.quit:
			quit = true
		case <-t.C:
		case <-e.cfg.Advanced:
			if soonest := last.Add(e.cfg.MinGap); time.Now().Before(soonest) {
				// Too soon after the last poll: poll at soonest instead,
				// unless the timer is due before.
				if soonest.Before(due) {
					due = soonest
					t.Reset(time.Until(due))
				}
				continue
			}
		}
		e.mu.Lock()
		if quit || len(e.clients) == 0 {
			e.polling = false
			close(e.pollDone)
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()
		e.poll()
		last = time.Now()
		due = last.Add(e.cfg.Interval)
		t.Reset(e.cfg.Interval)
	}
}

// poll reads the state and the journal's end, and wakes every stream when
// either changed. A failed read leaves the last one; it is logged when it
// starts failing or fails differently, and when it works again — not
// every Interval while it keeps failing.
func (e *Explorer) poll() {
	var encoded []byte
	st, err := e.src.State()
	if err == nil {
		encoded, err = json.Marshal(st)
	}
	end, jerr := e.src.JournalEnd()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reportLocked("reading the cluster's state", &e.stateErr, err)
	e.reportLocked("reading the journal's end", &e.journalErr, jerr)
	changed := false
	if err == nil && !bytes.Equal(encoded, e.state) {
		e.state, e.version, changed = encoded, e.version+1, true
	}
	if jerr == nil && end != e.journalEnd {
		e.journalEnd, changed = end, true
	}
	if !changed {
		return
	}
	for c := range e.clients {
		select {
		case c.changed <- struct{}{}:
		default: // already woken: the changes coalesce
		}
	}
}

// reportLocked logs a read's failure when it differs from the last one
// logged (*last), and its recovery. e.mu must be held.
func (e *Explorer) reportLocked(what string, last *string, err error) {
	switch {
	case err != nil && err.Error() != *last:
		*last = err.Error()
		e.log.Warn("explorer: "+what+" failed; the streams keep the last one read until it works again", "err", err)
	case err == nil && *last != "":
		*last = ""
		e.log.Info("explorer: " + what + " works again")
	}
}

// snapshot is the state as last polled, its version and the journal's
// end.
func (e *Explorer) snapshot() (state []byte, version, journalEnd uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state, e.version, e.journalEnd
}
