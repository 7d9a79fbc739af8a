package explorer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// register adds a stream and starts the poller if it is the first. The
// first stream of a stopped poller reads the state itself, so that its
// first message has it. It returns the channel that ends the stream.
func (e *Explorer) register(c *client) (ending <-chan struct{}, err error) {
	e.mu.Lock()
	switch {
	case e.closed:
		e.mu.Unlock()
		return nil, ErrShuttingDown
	case len(e.clients) >= e.cfg.MaxClients:
		e.mu.Unlock()
		return nil, fmt.Errorf("%w: %d, the most this server serves", ErrTooManyClients, e.cfg.MaxClients)
	}
	e.clients[c] = struct{}{}
	ending = e.ending
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
	return ending, nil
}

// unregister removes a stream; the poller stops on its next tick when no
// stream is left.
func (e *Explorer) unregister(c *client) {
	e.mu.Lock()
	delete(e.clients, c)
	e.mu.Unlock()
}

// poller polls every Interval until no stream is left.
func (e *Explorer) poller() {
	t := time.NewTicker(e.cfg.Interval)
	defer t.Stop()
	for range t.C {
		e.mu.Lock()
		if len(e.clients) == 0 {
			e.polling = false
			close(e.pollDone)
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()
		e.poll()
	}
}

// poll reads the state and the journal's end, and wakes every stream when
// either changed. A failed read is logged and leaves the last one.
func (e *Explorer) poll() {
	var encoded []byte
	st, err := e.src.State()
	if err == nil {
		encoded, err = json.Marshal(st)
	}
	if err != nil {
		e.log.Warn("explorer: reading the cluster's state failed", "err", err)
	}
	end, jerr := e.src.JournalEnd()
	if jerr != nil {
		e.log.Warn("explorer: reading the journal's end failed", "err", jerr)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
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

// snapshot is the state as last polled, its version and the journal's
// end.
func (e *Explorer) snapshot() (state []byte, version, journalEnd uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state, e.version, e.journalEnd
}
