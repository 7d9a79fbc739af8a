package apiclient_test

import (
	"context"
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
