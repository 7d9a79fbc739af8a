package apiclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/pystream/pystream/server/apiclient"
)

// A produce answer tells where each record landed; an error answer decodes
// to an *Error that matches its code's sentinel.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/topics/missing/records" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"code":"not_found","message":"topic missing does not exist"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"records":[{"partition":2,"offset":7,"timestamp":1733131200000000000,"leader":1,"brokers":[1,2]}]}`)
	}))
	defer srv.Close()

	c := apiclient.New(srv.URL)
	ctx := context.Background()
	res, err := c.Produce(ctx, "orders", []apiclient.ProduceRecord{{Key: []byte("user-1"), Value: []byte("hello")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("partition %d offset %d\n", res.Records[0].Partition, res.Records[0].Offset)

	_, err = c.Produce(ctx, "missing", []apiclient.ProduceRecord{{Value: []byte("x")}})
	fmt.Println(errors.Is(err, apiclient.ErrNotFound))
	// Output:
	// partition 2 offset 7
	// true
}

// An idempotent producer: its requests carry its id and each partition's
// sequence numbers, so a request whose answer was lost can be sent again
// and is stored once (the server here loses the first answer).
func ExampleClient_NewProducer() {
	lost := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/producers" {
			_, _ = io.WriteString(w, `{"producer_id":1000,"epoch":0}`)
			return
		}
		var req apiclient.ProduceRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		fmt.Printf("sent: producer %d sequence %d\n", req.Producer.ID, req.Producer.Sequence)
		if !lost {
			lost = true
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"code":"unavailable","message":"orders/0: leader broker 1 is unavailable"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"records":[{"partition":0,"offset":7},{"partition":0,"offset":8}]}`)
	}))
	defer srv.Close()

	ctx := context.Background()
	p, err := apiclient.New(srv.URL).NewProducer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := p.ProduceTo(ctx, "orders", 0, []apiclient.ProduceRecord{{Value: []byte("a")}, {Value: []byte("b")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("offsets %d and %d\n", res.Records[0].Offset, res.Records[1].Offset)
	// Output:
	// sent: producer 1000 sequence 0
	// sent: producer 1000 sequence 0
	// offsets 7 and 8
}
