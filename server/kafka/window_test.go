package kafka_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/kafka"
)

// zstdWindowBatch is a record batch of records small records compressed
// as one zstd frame whose header declares a window of window bytes (a
// power of two from 1 KiB) and whose one block is stored raw: a few
// hundred bytes after which a decoder allocates the whole window, what
// the frame then inflates to notwithstanding (RFC 8878 § 3.1.1.1.2).
func zstdWindowBatch(t *testing.T, window uint64, records int) []byte {
	t.Helper()
	var raw []byte
	for i := range records {
		r := kmsg.Record{OffsetDelta: int32(i), Value: fmt.Appendf(nil, "r%d", i)}
		enc := r.AppendTo(nil)[1:]
		raw = binary.AppendVarint(raw, int64(len(enc)))
		raw = append(raw, enc...)
	}
	require.Equal(t, 1, bits.OnesCount64(window))
	log := bits.TrailingZeros64(window)
	require.GreaterOrEqual(t, log, 10)
	// Magic, a header byte with no content size, checksum or dictionary,
	// the window descriptor (exponent log-10, no mantissa), then one raw
	// block, the last: its header is last-bit | raw type | size<<3.
	frame := []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, byte(log-10) << 3}
	bh := uint32(1) | uint32(len(raw))<<3
	frame = append(frame, byte(bh), byte(bh>>8), byte(bh>>16))
	frame = append(frame, raw...)
	n := int32(records)
	rb := kmsg.RecordBatch{Length: int32(49 + len(frame)), Magic: 2, Attributes: 4, LastOffsetDelta: n - 1,
		FirstTimestamp: 1_700_000_000_000, MaxTimestamp: 1_700_000_000_000, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: n, Records: frame}
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[17:], crc32c(b[21:]))
	return b
}

// produceAcross is a Produce v9 request of events with batches[i] for
// partition i.
func produceAcross(batches ...[]byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "events"
	for i, b := range batches {
		p := kmsg.NewProduceRequestTopicPartition()
		p.Partition, p.Records = int32(i), b
		rt.Partitions = append(rt.Partitions, p)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// exchangeRaw is roundTrip for another goroutine than the test's: it
// sends req (a Produce v9) on nc and reads its answer, returning errors.
func exchangeRaw(nc net.Conn, req kmsg.Request) (kmsg.Response, error) {
	if _, err := nc.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, 7)); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(nc, body); err != nil {
		return nil, err
	}
	if len(body) < 5 {
		return nil, io.ErrUnexpectedEOF
	}
	resp := req.ResponseKind()
	resp.SetVersion(9)
	return resp, resp.ReadFrom(body[5:]) // after the correlation id and the header's tags

}

// TestKafkaProduceZstdWindow: docs/security.md § Bounds — a zstd frame's
// window is allocated by the decoder before the frame's first block, so it
// is read from the header and bounded before anything is decoded. One
// request of 16 partitions, each a ~100-byte frame declaring a 64 MiB
// window, then four such requests at once over four connections, are
// refused (MESSAGE_TOO_LARGE, above 8<<20) and allocate no
// more than 16 MiB all together — before, each partition decoded in its own
// goroutine with a 64 MiB history, ≈ 1 GiB a request. Windows at the cap
// (8 MiB) do not fit the request's 8 MiB budget beside anything and are
// refused too. The windows producers send are served across the 16
// partitions: franz-go's 64 KiB and the Java client's 2 MiB. Nothing of a
// refused request is written, and a plain produce is served afterwards.
func TestKafkaProduceZstdWindow(t *testing.T) {
	const partitions, records = 16, 8
	f := start(t, 1, partitions, 1)
	nc := f.dial(t, 1)
	across := func(window uint64) *kmsg.ProduceRequest {
		batches := make([][]byte, partitions)
		for i := range batches {
			batches[i] = zstdWindowBatch(t, window, records)
		}
		return produceAcross(batches...)
	}
	codes := func(resp kmsg.Response) map[int16]int {
		out := map[int16]int{}
		for _, p := range resp.(*kmsg.ProduceResponse).Topics[0].Partitions {
			out[p.ErrorCode]++
		}
		return out
	}
	written := func() uint64 {
		var n uint64
		for p := range partitions {
			_, hwm, err := f.c.Bounds("events", p)
			require.NoError(t, err)
			n += hwm
		}
		return n
	}
	refused := map[int16]int{kerr.MessageTooLarge.Code: partitions}

	bomb := across(64 << 20)
	heapBefore, allocBefore := heapAfterGC(), totalAlloc()
	resp := roundTrip(t, nc, bomb, 9)
	alloc := totalAlloc() - allocBefore
	t.Logf("16 partitions of 64 MiB windows in one request: allocated %d KiB, heap in use %d MiB before, %d MiB after",
		alloc>>10, heapBefore>>20, heapAfterGC()>>20)
	require.Equal(t, refused, codes(resp))
	require.Less(t, alloc, uint64(16<<20), "the windows are refused from their headers, not allocated")

	const conns, each = 4, 2
	dialed := make([]net.Conn, conns)
	for i := range dialed {
		dialed[i] = f.dial(t, 1)
	}
	allocBefore = totalAlloc()
	var wg sync.WaitGroup
	got := make([]map[int16]int, conns*each)
	for i, c := range dialed {
		wg.Go(func() {
			for j := range each {
				resp, err := exchangeRaw(c, bomb)
				if err != nil {
					t.Error(err)
					return
				}
				got[i*each+j] = codes(resp)
			}
		})
	}
	wg.Wait()
	alloc = totalAlloc() - allocBefore
	t.Logf("%d such requests over %d connections at once: allocated %d KiB", conns*each, conns, alloc>>10)
	for _, g := range got {
		require.Equal(t, refused, g)
	}
	require.Less(t, alloc, uint64(16<<20), "bounded over connections too")

	require.Equal(t, refused, codes(roundTrip(t, nc, across(kafka.MaxZstdWindow), 9)), "8 MiB windows do not fit an 8 MiB request budget")
	require.Zero(t, written(), "nothing of a refused request is written")

	for _, window := range []uint64{64 << 10, 2 << 20} {
		before := written()
		resp := roundTrip(t, nc, across(window), 9)
		require.Equal(t, map[int16]int{0: partitions}, codes(resp), "a %d KiB window", window>>10)
		require.Equal(t, before+partitions*records, written())
	}
	resp = roundTrip(t, nc, produceRequest(9, batchOf(t, []byte("after the windows"))), 9)
	require.Zero(t, resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode)
}
