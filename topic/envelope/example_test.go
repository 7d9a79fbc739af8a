package envelope_test

import (
	"fmt"

	"github.com/pystream/pystream/topic/envelope"
)

// A keyed record with a header is stored as an envelope; a plain value is
// stored as itself; both decode to what was written, and an old payload
// reads as a value with no key.
func Example() {
	keyed := envelope.Payload(envelope.Record{
		Key:     []byte("user-123"),
		Headers: []envelope.Header{{Key: "trace", Value: []byte("abc")}},
		Value:   []byte("login"),
	})
	plain := envelope.Payload(envelope.Record{Value: []byte("login")})
	fmt.Printf("keyed: % x\n", keyed[:6])
	fmt.Printf("plain: %q\n", plain)

	r := envelope.Decode(keyed)
	fmt.Printf("key=%s header %s=%s value=%s\n", r.Key, r.Headers[0].Key, r.Headers[0].Value, r.Value)

	old := envelope.Decode([]byte("written long ago"))
	fmt.Printf("old: key=%v value=%s\n", old.Key, old.Value)
	// Output:
	// keyed: ff 50 53 45 01 00
	// plain: "login"
	// key=user-123 header trace=abc value=login
	// old: key=[] value=written long ago
}

// A Kafka producer's record carries its producer id, epoch and sequence;
// ProducerOf reads them back without decoding the rest, and a plain value
// has none.
func ExampleProducerOf() {
	stored := envelope.Payload(envelope.Record{
		Producer:    envelope.Producer{ID: 4000, Epoch: 0, Sequence: 17},
		HasProducer: true,
		Value:       []byte("order-1"),
	})
	p, ok := envelope.ProducerOf(stored)
	fmt.Printf("producer %d epoch %d sequence %d: %v\n", p.ID, p.Epoch, p.Sequence, ok)

	_, ok = envelope.ProducerOf([]byte("order-1"))
	fmt.Println("plain value:", ok)
	// Output:
	// producer 4000 epoch 0 sequence 17: true
	// plain value: false
}
