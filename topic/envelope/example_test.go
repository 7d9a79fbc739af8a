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
