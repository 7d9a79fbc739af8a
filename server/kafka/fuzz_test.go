package kafka

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// decodeRequest is the listener's request reader without a connection:
// the size prefix against max, the frame, the header, and the body of a
// key and version the table serves.
func decodeRequest(r io.Reader, max int, apis map[int16]api) (*request, error) {
	size, err := readSize(r, max)
	if err != nil {
		return nil, err
	}
	frame, err := readBody(r, size)
	if err != nil {
		return nil, err
	}
	req, err := parseHeader(frame)
	if err != nil {
		return nil, err
	}
	if _, ok := apis[req.key]; !ok || req.req == nil {
		return req, ErrUnknownAPI
	}
	if req.version < 0 || req.version > req.req.MaxVersion() {
		return req, ErrUnsupportedVersion
	}
	return req, req.decodeBody()
}

// FuzzKafkaRequest feeds the request reader arbitrary bytes (seeds in
// testdata/fuzz/FuzzKafkaRequest: empty input, a size prefix at the
// limit, valid ApiVersions, Metadata and Produce frames, a valid frame
// followed by garbage). It must never panic, never read past its input,
// and decode the same input the same way twice; a produce's record
// batches go through the batch validator too.
func FuzzKafkaRequest(f *testing.F) {
	s, err := New(nil, Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		a, errA := decodeRequest(r, 1<<16, s.apis)
		if consumed := len(in) - r.Len(); consumed > len(in) {
			t.Fatalf("consumed %d of %d bytes", consumed, len(in))
		}
		b, errB := decodeRequest(bytes.NewReader(in), 1<<16, s.apis)
		if (errA == nil) != (errB == nil) || !reflect.DeepEqual(a, b) {
			t.Fatalf("two decodings differ: %v / %v", errA, errB)
		}
		if errA != nil {
			if a == nil && !errors.Is(errA, io.EOF) && !errors.Is(errA, ErrMalformedRequest) && !errors.Is(errA, ErrFrameTooLarge) {
				t.Fatalf("unexpected error %v", errA)
			}
			return
		}
		if a.key == 0 {
			for _, tp := range producePartitions(a) {
				_, _ = decodeBatches(tp, &inflation{server: &budget{left: 1 << 20}, left: 1 << 16})
			}
		}
	})
}

// producePartitions are the record bytes of a decoded produce.
func producePartitions(r *request) [][]byte {
	var out [][]byte
	if req, ok := r.req.(*kmsg.ProduceRequest); ok {
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				out = append(out, p.Records)
			}
		}
	}
	return out
}
