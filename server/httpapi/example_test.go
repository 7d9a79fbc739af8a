package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/group"
	"github.com/pystream/pystream/server/httpapi"
)

// The API over an embedded cluster of one broker, as the server wires it
// (without the controller loop and the Kafka listener): the backend's
// interfaces and the consumer groups in, an http.Handler out; a topic
// created and listed over HTTP.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "httpapi-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	c, err := cluster.Open(dir)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if _, err := c.StartBroker(1); err != nil {
		panic(err)
	}

	local := &backend.Local{Cluster: c}
	registry := group.NewRegistry()
	consumer := group.NewConsumerCoordinator(group.ConsumerConfig{Registry: registry})
	defer consumer.Close()
	api, err := httpapi.New(httpapi.Config{
		AppName: "pystream", Root: c.Root(), Host: "127.0.0.1", Brokers: httpapi.EmbeddedBrokers(1),
		Groups: httpapi.Groups{Registry: registry, Consumer: consumer},
	}, httpapi.Backend{Data: local, Admin: local, Operator: local})
	if err != nil {
		panic(err)
	}
	defer api.Close()
	srv := httptest.NewServer(api)
	defer srv.Close()

	send := func(method, path, body string) {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s %s: %d\n", method, path, resp.StatusCode)
		if method == http.MethodGet {
			fmt.Printf("%s", out)
		}
	}
	send(http.MethodGet, "/api/health", "")
	send(http.MethodPost, "/api/topics", `{"name":"orders","partitions":1,"replication_factor":1}`)
	send(http.MethodGet, "/api/topics", "")
	// Output:
	// GET /api/health: 200
	// {"status":"ok","service":"pystream"}
	// POST /api/topics: 201
	// GET /api/topics: 200
	// {"topics":[{"name":"orders","partition_count":1,"replication_factor":1}]}
}
