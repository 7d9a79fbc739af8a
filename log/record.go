package log

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Record is one entry of a log: the offset and timestamp the log assigned and
// the caller's opaque payload.
type Record struct {
	// Offset is the record's position in the log, counting from 0.
	Offset uint64
	// Timestamp is the append time, nanoseconds since the Unix epoch.
	Timestamp int64
	// Payload is the caller's bytes; the log never interprets them.
	Payload []byte
}

// The frame of one record, all integers big-endian:
//
//	+---------------+------------+---------------+----------------+---------+
//	| record_length | offset     | timestamp     | payload_length | payload |
//	| uint32        | uint64     | int64         | uint32         | bytes   |
//	+---------------+------------+---------------+----------------+---------+
//	  4 bytes         8 bytes      8 bytes         4 bytes          n bytes
//
// record_length counts the bytes after itself: 20 + payload_length. The two
// lengths are deliberately redundant; a frame whose lengths disagree is
// corrupt.
const (
	// HeaderSize is the size of a frame without its payload.
	HeaderSize = 24
	// lengthFieldSize is the size of record_length, which it does not count.
	lengthFieldSize = 4
	// MaxFramePayload is the largest payload the frame can describe.
	MaxFramePayload = 1<<32 - 1 - (HeaderSize - lengthFieldSize)
)

// FrameSize is the number of bytes the frame of a payload of n bytes takes.
func FrameSize(n int) int { return HeaderSize + n }

// AppendFrame appends the frame of r to dst and returns the extended slice.
// The payload must not be longer than MaxFramePayload.
func AppendFrame(dst []byte, r Record) []byte {
	n := len(r.Payload)
	dst = binary.BigEndian.AppendUint32(dst, uint32(HeaderSize-lengthFieldSize+n))
	dst = binary.BigEndian.AppendUint64(dst, r.Offset)
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.Timestamp))
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	return append(dst, r.Payload...)
}

// header is a decoded frame header.
type header struct {
	recordLength  uint32
	offset        uint64
	timestamp     int64
	payloadLength uint32
}

func decodeHeader(b []byte) header {
	return header{
		recordLength:  binary.BigEndian.Uint32(b[0:4]),
		offset:        binary.BigEndian.Uint64(b[4:12]),
		timestamp:     int64(binary.BigEndian.Uint64(b[12:20])),
		payloadLength: binary.BigEndian.Uint32(b[20:24]),
	}
}

// consistent reports whether the two length fields agree.
func (h header) consistent() bool {
	return uint64(h.recordLength) == uint64(HeaderSize-lengthFieldSize)+uint64(h.payloadLength)
}

// DecodeFrame decodes the frame at the start of b and reports how many bytes
// it took. The returned payload is a copy; b is not retained.
//
// A frame cut short returns an error wrapping io.ErrUnexpectedEOF; a frame
// whose length fields disagree returns one wrapping ErrMalformedFrame. A
// length field is checked against len(b) before anything is allocated.
func DecodeFrame(b []byte) (Record, int, error) {
	if len(b) < HeaderSize {
		return Record{}, 0, fmt.Errorf("log: frame header needs %d bytes, have %d: %w", HeaderSize, len(b), io.ErrUnexpectedEOF)
	}
	h := decodeHeader(b)
	if !h.consistent() {
		return Record{}, 0, fmt.Errorf("log: record_length %d disagrees with payload_length %d: %w", h.recordLength, h.payloadLength, ErrMalformedFrame)
	}
	if uint64(h.payloadLength) > uint64(len(b)-HeaderSize) {
		return Record{}, 0, fmt.Errorf("log: payload needs %d bytes, have %d: %w", h.payloadLength, len(b)-HeaderSize, io.ErrUnexpectedEOF)
	}
	end := HeaderSize + int(h.payloadLength)
	payload := make([]byte, h.payloadLength)
	copy(payload, b[HeaderSize:end])
	return Record{Offset: h.offset, Timestamp: h.timestamp, Payload: payload}, end, nil
}
