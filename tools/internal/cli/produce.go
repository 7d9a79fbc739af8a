package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/spf13/cobra"
)

// Batching of produce. Lines are read by one goroutine into a queue; the
// sender takes the first waiting line, then every line already waiting, up
// to produceBatchRecords lines or produceBatchBytes of encoded body, and
// sends them in one request (one fsync per replica per partition on the
// server). There is no linger timer: a line typed at a terminal is sent at
// once, and a file piped in fills batches because the reader runs ahead
// while a request is in flight. The byte bound keeps a request well under
// the server's default 1 MiB body limit.
const (
	produceBatchRecords = 500
	produceBatchBytes   = 512 << 10
	// produceQueue is how many lines the reader may run ahead.
	produceQueue = 2 * produceBatchRecords
)

// keyMode says how produce derives a record's key from a line.
type keyMode struct {
	// fixed is the key of every record when hasFixed (-k).
	fixed    []byte
	hasFixed bool
	// delim splits "key<delim>value" at its first occurrence (-K); empty
	// means no splitting.
	delim []byte
	// headers are given to every record (-H), in order; shared, never
	// changed.
	headers []apiclient.RecordHeader
}

// parseLine turns one input line (without its newline) into a record. With
// a delimiter, a line that lacks it has no key and is all value, as in kcat.
// The returned record does not alias line.
func (m keyMode) parseLine(line []byte) apiclient.ProduceRecord {
	line = bytes.Clone(line)
	rec := apiclient.ProduceRecord{Value: line, Headers: m.headers}
	switch {
	case m.hasFixed:
		rec.Key = bytes.Clone(m.fixed)
	case len(m.delim) > 0:
		if k, v, ok := bytes.Cut(line, m.delim); ok {
			rec.Key, rec.Value = k, v
		}
	}
	return rec
}

// parseHeader reads one -H NAME=VALUE (kcat's form): the name up to the
// first '=', the value after it; without '=', the value is null.
func parseHeader(s string) apiclient.RecordHeader {
	name, value, ok := strings.Cut(s, "=")
	h := apiclient.RecordHeader{Key: name}
	if ok {
		h.Value = []byte(value)
	}
	return h
}

// encodedSize estimates a record's share of the JSON request body.
func encodedSize(r apiclient.ProduceRecord) int {
	b64 := func(n int) int { return (n + 2) / 3 * 4 }
	n := b64(len(r.Key)) + b64(len(r.Value)) + 32
	for _, h := range r.Headers {
		n += 2*len(h.Key) + b64(len(h.Value)) + 24 // a name may need escaping
	}
	return n
}

// produceLine is the JSON form of one acknowledged record.
type produceLine struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Offset    uint64 `json:"offset"`
	// Timestamp is nanoseconds since the Unix epoch, as in the API.
	Timestamp int64 `json:"timestamp"`
	Leader    int   `json:"leader"`
	Brokers   []int `json:"brokers"`
}

func (a *app) produceCommand() *cobra.Command {
	var key, delim string
	var headers []string
	var partition int
	idempotent := true
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Produce one record per line of stdin and print where each landed",
		Long: "Reads stdin and produces one record per line (the newline, and a carriage\n" +
			"return before it, are not part of the record). -k gives every record the same\n" +
			"key; -K DELIM splits each line at the first DELIM into key and value (a line\n" +
			"without DELIM has no key). The key is stored with the record (consume -f %k\n" +
			"prints it). Records without a key are spread round-robin; a key chooses the\n" +
			"partition by its SHA-256 hash; -p N sends every record to partition N instead.\n" +
			"-H NAME=VALUE (repeatable) gives every record that header (NAME alone: a null\n" +
			"value); headers are stored too (consume -f %h).\n\n" +
			"Lines are sent in batches of what has arrived, up to 500 lines or 512 KiB per\n" +
			"request, without waiting for more. For every record it prints the partition\n" +
			"and offset it landed at (--json: one object per line, with the timestamp in\n" +
			"nanoseconds, as in the API). If the server refuses a batch, the records it\n" +
			"acknowledged are still printed, reading stops, the error names the lines of\n" +
			"stdin that were acknowledged and those that were not, and the exit status is 1.\n\n" +
			"Produce is idempotent: it takes a producer id from the server (POST\n" +
			"/api/producers) and numbers each partition's records, so a request whose\n" +
			"answer is lost (a timeout, a dropped connection, a 503) is sent again, up to 10\n" +
			"times, and its lines are stored once. Without -p it routes the records itself,\n" +
			"by the server's rule, over the topic's partition count read at the start.\n" +
			"--idempotent=false sends plain requests instead, routed by the server and not\n" +
			"retried.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var m keyMode
			switch {
			case cmd.Flags().Changed("key") && cmd.Flags().Changed("key-delimiter"):
				return usageErrorf("-k and -K exclude each other")
			case cmd.Flags().Changed("key"):
				m.fixed, m.hasFixed = []byte(key), true
			case cmd.Flags().Changed("key-delimiter"):
				if delim == "" {
					return usageErrorf("-K: the delimiter must not be empty")
				}
				m.delim = []byte(unescape(delim))
			}
			for _, h := range headers {
				m.headers = append(m.headers, parseHeader(h))
			}
			if partition < -1 {
				return usageErrorf("-p: partition %d: a partition number from 0", partition)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			return a.produce(cmd.Context(), c, args[0], partition, m, idempotent)
		},
	}
	cmd.Flags().IntVarP(&partition, "partition", "p", -1, "send every record to this partition, whatever its key (default: routed by key)")
	cmd.Flags().StringVarP(&key, "key", "k", "", "key of every record")
	cmd.Flags().StringVarP(&delim, "key-delimiter", "K", "", `split each line into key and value at the first DELIM (\t allowed)`)
	cmd.Flags().StringArrayVarP(&headers, "header", "H", nil, "a header NAME=VALUE of every record (repeatable; NAME alone: a null value)")
	cmd.Flags().BoolVar(&idempotent, "idempotent", true, "number the records so a retried request is stored once (false: plain requests, not retried)")
	return cmd
}

// produceMaxLine is the longest line produce accepts, without its line
// ending: the largest record PyStream stores (key, delimiter and value
// together, to keep the rule simple). Reading stops at the first longer
// line instead of buffering it whole, so an endless line cannot exhaust
// memory.
const produceMaxLine = log.DefaultMaxPayloadSize

// lineOrErr is one item of the reader's queue.
type lineOrErr struct {
	line []byte
	err  error // io.EOF at the end
}

// readLines sends every line of r, then a final item carrying io.EOF, the
// read error or a *LineTooLongError, and closes out. It stops early when
// done is closed.
func readLines(r io.Reader, out chan<- lineOrErr, done <-chan struct{}) {
	defer close(out)
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br, n)
		if len(line) > 0 {
			line = bytes.TrimSuffix(line, []byte("\n"))
			line = bytes.TrimSuffix(line, []byte("\r"))
			select {
			case out <- lineOrErr{line: line}:
			case <-done:
				return
			}
		}
		if err != nil {
			select {
			case out <- lineOrErr{err: err}:
			case <-done:
			}
			return
		}
	}
}

// readLine reads line number n of br, with its newline if it has one. It
// fails with a *LineTooLongError, having read little more than the limit,
// when the line holds more than produceMaxLine bytes before its line
// ending.
func readLine(br *bufio.Reader, n int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		content := len(line)
		if err == nil {
			content-- // the newline
			if content > 0 && line[content-1] == '\r' {
				content--
			}
		}
		if content > produceMaxLine {
			return nil, &LineTooLongError{Line: n, Limit: produceMaxLine}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// batcher cuts the reader's queue into produce requests: it blocks for the
// first line, then takes only lines already waiting, up to
// produceBatchRecords records or produceBatchBytes of encoded body. A
// record that would push a batch past the byte budget waits for the next
// batch, so only a record alone can exceed it (see sendBatch).
type batcher struct {
	in <-chan lineOrErr
	m  keyMode
	// held is a record taken from the queue that did not fit the last
	// batch; it opens the next one.
	held *apiclient.ProduceRecord
	// err is the queue's terminal item once taken (io.EOF at the end of
	// input): the queue is done, and err is returned with the last batch.
	err error
}

// next returns the next batch. It returns the terminal error (io.EOF at
// the end of input) with the last lines, and alone on every later call.
func (b *batcher) next() ([]apiclient.ProduceRecord, error) {
	var batch []apiclient.ProduceRecord
	size := 0
	// add takes r into the batch, or holds it back when the batch is not
	// empty and r would push it past the byte budget.
	add := func(r apiclient.ProduceRecord) bool {
		n := encodedSize(r)
		if len(batch) > 0 && size+n > produceBatchBytes {
			b.held = &r
			return false
		}
		batch = append(batch, r)
		size += n
		return true
	}
	if b.held != nil {
		r := *b.held
		b.held = nil
		add(r)
	}
	if b.err != nil {
		return batch, b.err
	}
	if len(batch) == 0 {
		it, ok := <-b.in
		switch {
		case !ok:
			b.err = io.EOF
			return nil, b.err
		case it.err != nil:
			b.err = it.err
			return nil, b.err
		}
		add(b.m.parseLine(it.line))
	}
	for len(batch) < produceBatchRecords && size < produceBatchBytes {
		select {
		case it, ok := <-b.in:
			switch {
			case !ok:
				b.err = io.EOF
			case it.err != nil:
				b.err = it.err
			case add(b.m.parseLine(it.line)):
				continue
			}
			if b.held != nil {
				return batch, nil // the error comes after the held record
			}
			return batch, b.err
		default:
			return batch, nil
		}
	}
	return batch, nil
}

// sendBatch produces one batch. A record alone whose JSON (base64) form
// exceeds the byte budget goes as a raw body instead, which holds a value
// of up to the largest record within the server's default 1 MiB request
// limit. The raw form carries no headers, so a record with headers always
// goes as JSON.
func sendBatch(ctx context.Context, c *apiclient.Client, topic string, partition int, batch []apiclient.ProduceRecord) (*apiclient.ProduceResponse, error) {
	raw := len(batch) == 1 && len(batch[0].Headers) == 0 && encodedSize(batch[0]) > produceBatchBytes
	switch {
	case partition >= 0 && raw:
		return c.ProduceRawTo(ctx, topic, partition, batch[0].Key, batch[0].Value)
	case partition >= 0:
		return c.ProduceTo(ctx, topic, partition, batch)
	case raw:
		return c.ProduceRaw(ctx, topic, batch[0].Key, batch[0].Value)
	}
	return c.Produce(ctx, topic, batch)
}

// produce sends stdin's lines to topic, to partition when it is 0 or more,
// routed by key when it is -1; through an idempotent producer when
// idempotent is set (produceidempotent.go).
func (a *app) produce(ctx context.Context, c *apiclient.Client, topic string, partition int, m keyMode, idempotent bool) error {
	var idem *idempotentSender
	if idempotent {
		var err error
		if idem, err = newIdempotentSender(ctx, c, topic, partition); err != nil {
			return a.apiError("produce "+topic, err)
		}
	}
	queue := make(chan lineOrErr, produceQueue)
	done := make(chan struct{})
	defer close(done)
	go readLines(a.env.Stdin, queue, done)

	out := bufio.NewWriter(a.env.Stdout)
	defer out.Flush()
	sent := 0
	b := &batcher{in: queue, m: m}
	for {
		batch, rerr := b.next()
		if len(batch) > 0 && idem != nil {
			if err := a.produceIdempotent(ctx, out, idem, topic, sent, batch); err != nil {
				return err
			}
			sent += len(batch)
			if err := out.Flush(); err != nil {
				return err
			}
		} else if len(batch) > 0 {
			res, err := sendBatch(ctx, c, topic, partition, batch)
			if err != nil {
				return a.produceFailed(out, topic, sent, batch, err)
			}
			for _, r := range res.Records {
				if err := a.printProduced(out, topic, r); err != nil {
					return err
				}
			}
			sent += len(res.Records)
			if err := out.Flush(); err != nil {
				return err
			}
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("produce %s: read stdin: %w; %s", topic, rerr, stoppedOutcome(sent))
		}
	}
}

// produceFailed reports a batch that failed with err, after lines 1..sent
// were acknowledged: it prints the lines of the batch that were
// acknowledged all the same, and returns the error with which lines were
// (see produceoutcome.go). An error answer whose records match the batch
// says it line by line; a 4xx answer without records refused the request
// before writing anything; anything else (no answer, a 5xx without
// records) leaves the batch's fate unknown.
func (a *app) produceFailed(out *bufio.Writer, topic string, sent int, batch []apiclient.ProduceRecord, err error) error {
	defer out.Flush()
	failed := a.apiError("produce "+topic, err)
	var ae *apiclient.Error
	if !errors.As(err, &ae) {
		return fmt.Errorf("%w; %s", failed, unknownBatchOutcome(sent, len(batch)))
	}
	acked := make([]bool, len(batch))
	switch {
	case len(ae.Records) == len(batch):
		for i, r := range ae.Records {
			if r.Error == nil {
				acked[i] = true
				if perr := a.printProduced(out, topic, r); perr != nil {
					return perr
				}
			}
		}
	case len(ae.Records) == 0 && ae.Status >= 400 && ae.Status < 500:
		// Refused as a whole: nothing of it was written.
	default:
		return fmt.Errorf("%w; %s", failed, unknownBatchOutcome(sent, len(batch)))
	}
	return fmt.Errorf("%w; %s", failed, refusedBatchOutcome(sent, acked))
}

func (a *app) printProduced(w io.Writer, topic string, r apiclient.ProduceResult) error {
	if a.g.json {
		return jsonLine(w, produceLine{Topic: topic, Partition: r.Partition, Offset: r.Offset,
			Timestamp: r.Timestamp, Leader: r.Leader, Brokers: r.Brokers})
	}
	_, err := fmt.Fprintf(w, "partition %d offset %d\n", r.Partition, r.Offset)
	return err
}
