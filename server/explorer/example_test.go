package explorer_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/explorer"
)

// oneBroker is a Source with one broker and one journal entry.
type oneBroker struct{}

func (oneBroker) State() (apiclient.ClusterState, error) {
	return apiclient.ClusterState{Mode: apiclient.ModeEmbedded, Brokers: []apiclient.BrokerStatus{{ID: 1, Available: true}}}, nil
}

func (oneBroker) Journal(since uint64, max int) ([]apiclient.JournalEntry, error) {
	if since > 0 {
		return nil, nil
	}
	return []apiclient.JournalEntry{{Offset: 0, Event: "broker-start", Phase: "done", By: "operator", Broker: 1,
		Summary: "broker 1 started"}}, nil
}

func (oneBroker) JournalEnd() (uint64, error) { return 1, nil }

// An explorer serves the events stream over a Source; a client reads the
// first message: the whole state and, from since=0, the journal.
func ExampleNew() {
	ex, err := explorer.New(explorer.Config{Source: oneBroker{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ex.Close()
	srv := httptest.NewServer(ex.Handler())
	defer srv.Close()

	c := apiclient.New(srv.URL)
	since := uint64(0)
	stop := errors.New("seen")
	_, err = c.Events(context.Background(), apiclient.EventsOptions{Since: &since}, func(u apiclient.Update) error {
		fmt.Println("brokers:", len(u.Cluster.Brokers))
		for _, e := range u.Journal {
			fmt.Println("journal:", e.Offset, e.Summary)
		}
		return stop
	})
	fmt.Println(errors.Is(err, stop))
	// Output:
	// brokers: 1
	// journal: 0 broker 1 started
	// true
}
