package httpapi

import (
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/topic"
	"github.com/pystream/pystream/topic/envelope"
)

// produceBody is the JSON produce body as the server reads it: the wire
// shape of apiclient.ProduceRequest, with Value a pointer so that a record
// without a value (or with "value": null) is refused instead of being
// stored as an empty record by mistake.
type produceBody struct {
	Records  []produceRecord  `json:"records"`
	Producer *produceProducer `json:"producer"`
}

type produceRecord struct {
	Key     []byte          `json:"key"`
	Value   *[]byte         `json:"value"`
	Headers []produceHeader `json:"headers"`
}

// produceHeader is apiclient.RecordHeader as the server reads it: Key a
// pointer so that a header without one is refused; a missing or null value
// is a null header value.
type produceHeader struct {
	Key   *string `json:"key"`
	Value []byte  `json:"value"`
}

// storedRecord is what a produced record becomes: routed by its key (or
// the request's partition), stored as envelope.Payload, so that its key
// and headers come back with it and a plain value is stored as itself
// (topic/envelope/doc.go § Payload: what to store); an idempotent
// producer's record carries the producer's identity in its envelope, for
// the partition's leader to check (docs/kafka.md § Idempotent producers).
func storedRecord(rec envelope.Record) topic.Message {
	return topic.Message{Key: rec.Key, Payload: envelope.Payload(rec)}
}

// handleProduce answers POST /api/topics/{topic}/records. A JSON body
// carries 1..N records (value, optional key and headers); an
// application/octet-stream body is one record's value with the key in the
// query (key=<text> or key_b64=<base64>). partition=N sends every record
// to partition N; without it the records are routed exactly as the
// cluster producer routes them (a key by SHA-256, no key round robin) and
// written per partition with one leader append and one append per
// follower, each with one fsync, however many records the partition gets.
func (a *API) handleProduce(w http.ResponseWriter, r *http.Request) {
	name, ae := nameParam(r, "topic", "topic")
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	mt, ae := mediaType(r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	var (
		msgs      []topic.Message
		partition *int
		// idempotent is set when the request is an idempotent
		// producer's.
		idempotent bool
	)
	switch mt {
	case mediaOctetStream:
		var msg topic.Message
		msg, partition, idempotent, ae = a.readRawRecord(w, r)
		if ae != nil {
			writeAPIError(w, ae)
			return
		}
		msgs = []topic.Message{msg}
	case mediaJSON:
		q, ae := queryParams(r, "partition")
		if ae != nil {
			writeAPIError(w, badRequest("%s (key, key_b64, producer_id, producer_epoch and sequence are for the application/octet-stream form; a JSON body carries its keys and its producer)", ae.body.Message))
			return
		}
		if partition, ae = partitionQuery(q); ae != nil {
			writeAPIError(w, ae)
			return
		}
		if msgs, idempotent, ae = a.readJSONRecords(w, r); ae != nil {
			writeAPIError(w, ae)
			return
		}
	default:
		writeAPIError(w, newAPIError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
			"Content-Type %s is not accepted here; send %s (records) or %s (one record's value)", mt, mediaJSON, mediaOctetStream))
		return
	}
	if idempotent && partition == nil {
		// The leader of one partition checks a producer's sequence
		// numbers, which count per partition: the client routes.
		writeAPIError(w, badRequest("an idempotent producer's request needs the partition query parameter: sequence numbers count per partition, so the client routes its records (partition=N)"))
		return
	}
	// Unknown topic or partition: 404 before the write, so it carries no
	// records.
	info, err := a.data.Topic(name)
	if err != nil {
		writeAPIError(w, classify(err))
		return
	}
	if ae := a.checkProduceSize(name, msgs); ae != nil {
		writeAPIError(w, ae)
		return
	}
	if partition != nil && *partition >= info.PartitionCount {
		writeAPIError(w, newAPIError(http.StatusNotFound, CodeNotFound,
			"topic %q has %d partition(s), no partition %d", name, info.PartitionCount, *partition))
		return
	}

	results, err := a.send(name, partition, msgs)
	if err != nil {
		e := a.withUnavailable(classify(err))
		e.body.Records = recordOutcomes(len(msgs), results, err)
		writeAPIError(w, e)
		return
	}
	if len(results) == 1 {
		writeJSONBytes(w, http.StatusOK, encodeOneResult(results[0]))
		return
	}
	out := apiclient.ProduceResponse{Records: make([]apiclient.ProduceResult, len(results))}
	for i, res := range results {
		out.Records[i] = produceResult(res)
	}
	writeJSON(w, http.StatusOK, out)
}

// checkProduceSize is the one rule of a produce request's size once its
// body is read (the body itself is capped by PYSTREAM_MAX_REQUEST_BYTES,
// limitBody), checked before anything is written so that a too large
// request leaves no record half written: 413 when the records come to
// more stored bytes, all together, than the topic's max.message.bytes
// (the largest batch a Kafka producer may send it), or when one record's
// stored payload is above the limit the cluster's logs enforce
// (MaxPayloadSize, a ceiling whatever max.message.bytes allows). A
// record's size is its stored payload's: the value, and its key and
// headers when it has them.
func (a *API) checkProduceSize(name string, msgs []topic.Message) *apiError {
	limit := a.data.MaxPayloadSize()
	total := 0
	for i, m := range msgs {
		if len(m.Payload) > limit {
			return newAPIError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
				"records[%d]: %d bytes to store (the value, with its key and headers), larger than the maximum record size of %d bytes", i, len(m.Payload), limit)
		}
		total += len(m.Payload)
	}
	cfg, err := a.admin.TopicConfig(name)
	if err != nil {
		return classify(err)
	}
	if int64(total) > cfg.MaxMessageBytes {
		return newAPIError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
			"the request's records come to %d bytes to store (values, with their keys and headers), more than topic %s's %s of %d bytes; send fewer records per request",
			total, quoted(name), topic.MaxMessageBytesKey, cfg.MaxMessageBytes)
	}
	return nil
}

// send writes msgs through the cluster producer — to one partition when
// partition is set, routed by key otherwise — and records the metrics.
// For a partially failed batch, results holds every record's partition and
// the acknowledged records' placements (see acknowledged).
func (a *API) send(name string, partition *int, msgs []topic.Message) ([]cluster.SendResult, error) {
	start := time.Now()
	results, err := a.data.Send(name, partition, msgs)
	elapsed := time.Since(start)
	acked, bytes := 0, 0
	for i, res := range results {
		if acknowledged(res, err) {
			acked++
			bytes += len(msgs[i].Payload)
		}
	}
	a.metrics.observeAppend(acked, bytes, elapsed)
	if err != nil {
		a.countReplicationFailures(err)
		// A failed write may have left a follower behind or found a
		// leader gone: the controller looks now, not at its next tick.
		a.ops.Wake()
	}
	return results, err
}

// countReplicationFailures counts every partition write that a follower
// refused.
func (a *API) countReplicationFailures(err error) {
	var batch *topic.BatchError
	if errors.As(err, &batch) {
		for _, perr := range batch.Partitions {
			if errors.Is(perr, cluster.ErrReplicationFailed) {
				a.metrics.replicationFailures.Inc()
			}
		}
		return
	}
	if errors.Is(err, cluster.ErrReplicationFailed) {
		a.metrics.replicationFailures.Inc()
	}
}

// acknowledged reports whether the record whose result is res was
// acknowledged by a send that returned err: every record was when err is
// nil; after a partial batch failure, those of the partitions the
// *topic.BatchError does not name; after any other error, none.
func acknowledged(res cluster.SendResult, err error) bool {
	if err == nil {
		return true
	}
	var batch *topic.BatchError
	return errors.As(err, &batch) && !batch.Failed(res.Partition)
}

// recordOutcomes says, for each of the n records of a failed send, where it
// landed or why it was not acknowledged. After a partial batch failure
// every result carries its partition, so a refused record gets its own
// partition's error; after any other error no record was acknowledged and
// each gets the request's error.
func recordOutcomes(n int, results []cluster.SendResult, err error) []apiclient.ProduceResult {
	out := make([]apiclient.ProduceResult, n)
	var batch *topic.BatchError
	if !errors.As(err, &batch) || len(results) != n {
		e := classify(err)
		for i := range out {
			out[i] = recordError(e)
		}
		return out
	}
	for i, res := range results {
		if perr, failed := batch.Partitions[res.Partition]; failed {
			out[i] = recordError(classify(perr))
		} else {
			out[i] = produceResult(res)
		}
	}
	return out
}

// recordError is the outcome of a record that was not acknowledged for the
// reason e.
func recordError(e *apiError) apiclient.ProduceResult {
	return apiclient.ProduceResult{Error: &apiclient.RecordError{Code: e.body.Code, Message: e.body.Message}}
}

// unixMillis turns a record timestamp (nanoseconds since the Unix epoch)
// into whole milliseconds, rounded down: the timestamp_ms of the answers,
// which a client that reads JSON numbers as doubles gets exactly.
func unixMillis(ns int64) int64 { return time.Unix(0, ns).UnixMilli() }

func produceResult(res cluster.SendResult) apiclient.ProduceResult {
	return apiclient.ProduceResult{Partition: res.Partition, Offset: res.Offset, Timestamp: res.Timestamp, TimestampMS: unixMillis(res.Timestamp),
		Leader: res.LeaderBrokerID, Brokers: res.Brokers}
}

// readJSONRecords reads a JSON produce body; idempotent is set when it
// carries a producer.
func (a *API) readJSONRecords(w http.ResponseWriter, r *http.Request) (msgs []topic.Message, idempotent bool, ae *apiError) {
	var body produceBody
	if ae := a.readJSONChecked(w, r, &body, a.checkRecordCount); ae != nil {
		return nil, false, ae
	}
	if body.Records == nil {
		return nil, false, badRequest(`records is required: an array of at least one record, {"records":[{"value":"aGVsbG8="}]}`)
	}
	if len(body.Records) == 0 {
		return nil, false, badRequest("records must hold at least one record")
	}
	if len(body.Records) > a.maxRecords { // countItems counted them already; never trust one scan alone
		return nil, false, tooManyRecords(a.maxRecords)
	}
	var prod envelope.Producer
	if body.Producer != nil {
		if prod, ae = body.Producer.identity(); ae != nil {
			return nil, false, ae
		}
	}
	msgs = make([]topic.Message, len(body.Records))
	for i, rec := range body.Records {
		if rec.Value == nil {
			return nil, false, badRequest(`records[%d].value is required %s; "" is an empty value`, i, base64Hint)
		}
		var headers []envelope.Header
		for j, h := range rec.Headers {
			if h.Key == nil {
				return nil, false, badRequest(`records[%d].headers[%d].key is required: a string, "" allowed`, i, j)
			}
			headers = append(headers, envelope.Header{Key: *h.Key, Value: h.Value})
		}
		env := envelope.Record{Key: rec.Key, Headers: headers, Value: *rec.Value}
		if body.Producer != nil {
			env.Producer, env.HasProducer = producerAt(prod, i), true
		}
		msgs[i] = storedRecord(env)
	}
	return msgs, body.Producer != nil, nil
}

// readRawRecord reads an application/octet-stream produce request: the body
// is the value, the key comes from key=<text> (its UTF-8 bytes) or
// key_b64=<standard base64>; neither means no key. An idempotent
// producer's identity comes from producer_id, producer_epoch and
// sequence; idempotent is set when it does.
func (a *API) readRawRecord(w http.ResponseWriter, r *http.Request) (topic.Message, *int, bool, *apiError) {
	var msg topic.Message
	q, ae := queryParams(r, "key", "key_b64", "partition", queryProducerID, queryProducerEpoch, querySequence)
	if ae != nil {
		return msg, nil, false, ae
	}
	partition, ae := partitionQuery(q)
	if ae != nil {
		return msg, nil, false, ae
	}
	prod, ae := producerQuery(q)
	if ae != nil {
		return msg, nil, false, ae
	}
	text, hasText := q["key"]
	b64, hasB64 := q["key_b64"]
	switch {
	case hasText && hasB64:
		return msg, nil, false, badRequest("give the key as key or as key_b64, not both")
	case hasText:
		msg.Key = []byte(text)
	case hasB64:
		key, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil {
			return msg, nil, false, badRequest("key_b64: not valid base64 %s", base64Hint)
		}
		msg.Key = key
	}
	if ae := a.limitBody(w, r); ae != nil {
		return msg, nil, false, ae
	}
	value, err := readBody(r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return msg, nil, false, a.tooLarge()
		}
		return msg, nil, false, badRequest("cannot read the request body: %v", err)
	}
	rec := envelope.Record{Key: msg.Key, Value: value}
	if prod != nil {
		rec.Producer, rec.HasProducer = *prod, true
	}
	return storedRecord(rec), partition, prod != nil, nil
}

// partitionQuery reads the optional partition=N of a produce request: the
// partition every record goes to, whatever its key.
func partitionQuery(q map[string]string) (*int, *apiError) {
	v, ok := q["partition"]
	if !ok {
		return nil, nil
	}
	n, ok := parseIndex(v, 0)
	if !ok {
		return nil, badRequest("invalid partition %s: a decimal integer from 0", quoted(v))
	}
	return &n, nil
}

// checkRecordCount refuses a JSON produce body of more than s.maxRecords
// records before it is decoded: a million empty records fit in 16 MiB and
// would take hundreds of megabytes to decode and write.
func (a *API) checkRecordCount(data []byte) *apiError {
	if n := countItems(data, "records", a.maxRecords); n > a.maxRecords {
		return tooManyRecords(a.maxRecords)
	}
	return nil
}

// tooManyRecords is the answer to a produce request above the records
// limit.
func tooManyRecords(limit int) *apiError {
	return newAPIError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
		"records: more than %d records in one request (PYSTREAM_MAX_REQUEST_RECORDS); split the batch", limit)
}
