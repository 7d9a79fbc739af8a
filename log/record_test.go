package log_test

import (
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
)

// TestFrameRoundTrip pins docs/design.md § Record frame: AppendFrame writes the
// documented big-endian layout and DecodeFrame reads it back, consuming exactly
// one frame.
func TestFrameRoundTrip(t *testing.T) {
	for _, rec := range []log.Record{
		{Offset: 0, Timestamp: 0, Payload: []byte{}},
		{Offset: 7, Timestamp: -5, Payload: []byte("x")},
		{Offset: 1<<64 - 1, Timestamp: 1<<63 - 1, Payload: make([]byte, 1000)},
	} {
		frame := log.AppendFrame([]byte("prefix"), rec)
		require.Equal(t, "prefix", string(frame[:6]), "AppendFrame appends")
		frame = frame[6:]
		require.Equal(t, handFrame(rec.Offset, rec.Timestamp, rec.Payload), frame)
		require.Len(t, frame, log.FrameSize(len(rec.Payload)))

		got, n, err := log.DecodeFrame(append(frame, "trailing"...))
		require.NoError(t, err)
		require.Equal(t, len(frame), n)
		require.Equal(t, rec, got)
	}
}

// TestFrameDecodeErrors: a frame cut short wraps io.ErrUnexpectedEOF, one whose
// length fields disagree wraps ErrMalformedFrame
// (docs/design.md § Record frame).
func TestFrameDecodeErrors(t *testing.T) {
	good := handFrame(3, 9, []byte("payload"))
	bad := append([]byte(nil), good...)
	bad[3]++ // record_length one more than 20 + payload_length
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, io.ErrUnexpectedEOF},
		{"partial header", good[:log.HeaderSize-1], io.ErrUnexpectedEOF},
		{"header only", good[:log.HeaderSize], io.ErrUnexpectedEOF},
		{"payload short by one", good[:len(good)-1], io.ErrUnexpectedEOF},
		{"lengths disagree", bad, log.ErrMalformedFrame},
		{"lengths disagree, header only", bad[:log.HeaderSize], log.ErrMalformedFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, n, err := log.DecodeFrame(tc.in)
			require.ErrorIs(t, err, tc.want)
			require.Zero(t, n)
		})
	}
}

// TestFrameDecodeHugeLengthDoesNotAllocate pins docs/design.md § Record frame:
// a length field never makes the reader allocate more than the bytes it has.
// The header below claims a payload of almost 4 GiB.
func TestFrameDecodeHugeLengthDoesNotAllocate(t *testing.T) {
	hdr := hugeHeader(0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		_, _, err := log.DecodeFrame(hdr)
		require.True(t, errors.Is(err, io.ErrUnexpectedEOF))
	}
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "decoding 100 huge headers allocated too much")
}

// hugeHeader is a consistent frame header for offset whose payload_length
// is the largest the frame allows (4 GiB - 21 bytes), with no payload.
func hugeHeader(offset uint64) []byte {
	h := handFrame(offset, 0, nil)
	binary.BigEndian.PutUint32(h[0:4], 1<<32-1)
	binary.BigEndian.PutUint32(h[20:24], 1<<32-1-20)
	return h
}
