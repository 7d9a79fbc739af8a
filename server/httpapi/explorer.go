package httpapi

import (
	"net/http"
	"sync"
	"time"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/explorer"
)

// The explorer (server/explorer): the page at /explorer and the events
// stream GET /api/events, built over explorerSource and mounted like every
// other route — the stream behind the read role, the page open as /docs
// is. A server shutting down ends the streams (API.EndStreamsOf).

// explorerSource is the explorer's view of the backend: the state as the
// API's wire shapes, and the journal with its paths made relative.
type explorerSource struct {
	a *API

	// mu guards the fields below.
	mu sync.Mutex
	// consumers are the committed offsets as last listed, at listed: a
	// listing reads a directory per consumer, so it is done at most once
	// per consumersEvery rather than on every poll.
	consumers []apiclient.ConsumerPosition
	listed    time.Time
}

// consumersEvery is how often the explorer lists committed offsets.
const consumersEvery = time.Second

var _ explorer.Source = (*explorerSource)(nil)

// State reads every broker, every partition's status and log start, the
// controller's mode, every committed consumer offset and every consumer
// group with members.
func (x *explorerSource) State() (apiclient.ClusterState, error) {
	a := x.a
	st := apiclient.ClusterState{Mode: a.mode(), Controller: a.controllerStatus(),
		Brokers: a.brokerStatuses(), Topics: []apiclient.TopicState{}}
	hw := map[partKey]uint64{}
	for _, t := range a.data.Topics() {
		ts := apiclient.TopicState{Name: t.Name, PartitionCount: t.PartitionCount, ReplicationFactor: t.ReplicationFactor,
			Partitions: make([]apiclient.PartitionState, 0, t.PartitionCount)}
		for p := range t.PartitionCount {
			ps, err := a.data.Status(t.Name, p)
			if err != nil {
				break // deleted since Topics; the next poll has it gone
			}
			state := apiclient.PartitionState{PartitionStatus: partitionStatus(ps)}
			if start, _, err := a.data.Bounds(t.Name, p); err == nil {
				state.LogStart = start
			}
			ts.Partitions = append(ts.Partitions, state)
			hw[partKey{t.Name, p}] = ps.HighWatermark
		}
		st.Topics = append(st.Topics, ts)
	}
	consumers, err := x.consumerPositions()
	if err != nil {
		return apiclient.ClusterState{}, err
	}
	st.Consumers = consumers
	st.Groups = a.explorerGroups(consumers, hw)
	return st, nil
}

// consumerPositions lists every committed offset, at most once per
// consumersEvery.
func (x *explorerSource) consumerPositions() ([]apiclient.ConsumerPosition, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.consumers != nil && time.Since(x.listed) < consumersEvery {
		return x.consumers, nil
	}
	offsets, err := x.a.data.ListAllOffsets()
	if err != nil {
		return nil, err
	}
	out := make([]apiclient.ConsumerPosition, 0, len(offsets))
	for _, o := range offsets {
		out = append(out, apiclient.ConsumerPosition{ConsumerID: o.ConsumerID, Topic: o.Topic, Partition: o.Partition, Offset: o.Offset})
	}
	x.consumers, x.listed = out, time.Now()
	return out, nil
}

// Journal reads entries as GET /api/journal answers them.
func (x *explorerSource) Journal(since uint64, max int) ([]apiclient.JournalEntry, error) {
	entries, err := x.a.ops.Journal(since, max)
	if err != nil {
		return nil, err
	}
	out := make([]apiclient.JournalEntry, len(entries))
	for i, e := range entries {
		je := journalEntry(e)
		je.Summary, je.Reason, je.Error = x.a.relativePaths(je.Summary), x.a.relativePaths(je.Reason), x.a.relativePaths(je.Error)
		out[i] = je
	}
	return out, nil
}

// JournalEnd is the journal's end.
func (x *explorerSource) JournalEnd() (uint64, error) { return x.a.ops.JournalEnd() }

// openExplorer builds the explorer over the API.
func (a *API) openExplorer() error {
	var advanced chan struct{}
	stop := func() {}
	if a.cfg.Advances != nil {
		advanced = make(chan struct{}, 1)
		stop = a.cfg.Advances.WatchAll(advanced)
	}
	ex, err := explorer.New(explorer.Config{Source: &explorerSource{a: a}, Logger: a.logger, Advanced: advanced,
		Principal: tokenName})
	if err != nil {
		stop()
		return err
	}
	a.explorer, a.stopExplorerWatch = ex, stop
	return nil
}

// handleEvents answers GET /api/events.
func (a *API) handleEvents(w http.ResponseWriter, r *http.Request) {
	stream, err := a.explorer.Open(r)
	if err != nil {
		status, code := explorer.StatusOf(err)
		if status == http.StatusInternalServerError {
			writeAPIError(w, a.opError("open the events stream", err))
			return
		}
		if ra := explorer.RetryAfterOf(err); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		writeError(w, status, code, err.Error())
		return
	}
	stream.Serve(w, r)
}

// handleExplorer answers GET /explorer.
func (a *API) handleExplorer(w http.ResponseWriter, r *http.Request) {
	a.explorer.ServePage(w, r)
}

// handleExplorerFile answers GET /explorer/{file}.
func (a *API) handleExplorerFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if !explorer.HasFile(name) {
		writeAPIError(w, notFound("the explorer has no file %s", quoted(name)))
		return
	}
	a.explorer.ServeFile(w, r)
}
