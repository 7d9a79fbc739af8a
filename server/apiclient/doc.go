// Package apiclient is the Go client of the PyStream HTTP API (phase 6),
// and the home of the API's wire types, which the server shares so the two
// cannot drift.
//
// # The contract in brief
//
// Every answer is JSON. Offsets are JSON integers, timestamps are
// nanoseconds since the Unix epoch, byte strings (keys, values) are standard
// base64 — exactly what encoding/json does with a []byte, so the types here
// use []byte and need no custom code. Numbers that may be unknown, such as a
// stopped follower's log end or a consumer's never-committed offset, are
// *uint64 and travel as JSON null.
//
// Every non-2xx answer is an envelope {"error": {"code", "message", ...}}.
// The client turns it into an *Error carrying the status, the code, the
// message and the extras (BrokerIDs, Committed/Requested on an offset
// regression, HighWatermark/Requested on an offset past the high watermark,
// per-record Records on a failed produce). An *Error matches the
// sentinel of its code with errors.Is, so callers branch with
//
//	if errors.Is(err, apiclient.ErrNotFound) { ... }
//
// and never on the message. Transport failures are returned wrapped, so
// errors.Is(err, syscall.ECONNREFUSED) tells "no server there" apart.
//
// # Keys
//
// A ProduceRecord with a nil Key has no key (JSON null): the server spreads
// such records round-robin. A non-nil empty key is a real key and routes by
// its hash (SHA-256) unless the request names a partition (ProduceTo). The
// key and any headers are stored with the record and come back in
// FetchedRecord, whether the record was produced over HTTP or Kafka.
//
// # Idempotent producers
//
// A produce whose answer is lost (a timeout, a dropped connection, a 503)
// may or may not have been written; sent again, a plain produce stores it
// twice. NewProducer asks the server for a producer id (POST
// /api/producers) and returns a *Producer whose ProduceTo numbers each
// partition's records and sends a request that got no answer again with
// the same numbers, a bounded number of times, after the answer's
// Retry-After: the partition's leader stores it once and answers with the
// offsets of the first write. When it cannot know the outcome, the error
// matches ErrProducerOutcomeUnknown and that partition takes no more of
// the producer's requests. Sequence numbers count per partition, so the
// caller picks the partition (topic.PartitionForKey routes a key as the
// server does).
//
// # Concurrency and connections
//
// A *Client is safe for concurrent use by many goroutines. By default it
// sends through its own keep-alive transport sized for many concurrent
// requests to one server; WithHTTPClient replaces it. The client never reads
// environment variables and sets no overall timeout: every method takes a
// context, which bounds and cancels the call.
package apiclient
