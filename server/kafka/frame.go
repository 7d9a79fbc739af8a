package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A request frame on the wire, all integers big-endian:
//
//	+--------+-------------+-------------+----------------+----------------+--------------+------+
//	| size   | api_key     | api_version | correlation_id | client_id      | tagged fields| body |
//	| int32  | int16       | int16       | int32          | int16 + bytes  | (flexible)   |      |
//	+--------+-------------+-------------+----------------+----------------+--------------+------+
//
// size counts everything after itself. The tagged fields (KIP-482) are
// there only when the request is "flexible" at its version; kmsg knows
// which versions are. The body is kmsg's to decode.

// request is one decoded request header and its body.
type request struct {
	key           int16
	version       int16
	correlationID int32
	clientID      *string
	// req is the request kind for key, its version set; nil for a key
	// kmsg does not know.
	req kmsg.Request
	// body is the bytes after the header.
	body []byte
}

// readSize reads a frame's size prefix and checks it against max.
func readSize(r io.Reader, max int) (int, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, &FrameError{Size: -1, Err: fmt.Errorf("%w: torn size prefix: %w", ErrMalformedRequest, err)}
		}
		return 0, err
	}
	size := int64(int32(binary.BigEndian.Uint32(b[:])))
	if size < 0 {
		return 0, &FrameError{Size: size, Err: fmt.Errorf("%w: negative size", ErrMalformedRequest)}
	}
	if size > int64(max) {
		return 0, &FrameError{Size: size, Max: int64(max), Err: ErrFrameTooLarge}
	}
	return int(size), nil
}

// readBody reads the size bytes of a frame.
func readBody(r io.Reader, size int) ([]byte, error) {
	buf := make([]byte, size)
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, &FrameError{Size: int64(size), Err: fmt.Errorf("%w: truncated frame: %w", ErrMalformedRequest, err)}
	}
	return buf, nil
}

// parseHeader decodes a frame's request header. A key kmsg does not know
// leaves req nil and body the rest of the frame after the client id.
func parseHeader(frame []byte) (*request, error) {
	if len(frame) < 10 {
		return nil, &FrameError{Size: int64(len(frame)), Err: fmt.Errorf("%w: header of %d bytes", ErrMalformedRequest, len(frame))}
	}
	r := &request{
		key:           int16(binary.BigEndian.Uint16(frame[0:])),
		version:       int16(binary.BigEndian.Uint16(frame[2:])),
		correlationID: int32(binary.BigEndian.Uint32(frame[4:])),
	}
	rest := frame[8:]
	n := int(int16(binary.BigEndian.Uint16(rest)))
	rest = rest[2:]
	switch {
	case n == -1:
	case n < 0 || n > len(rest):
		return r, &FrameError{Size: int64(len(frame)), Err: fmt.Errorf("%w: client id of %d bytes", ErrMalformedRequest, n)}
	default:
		id := string(rest[:n])
		r.clientID = &id
		rest = rest[n:]
	}
	if r.req = kmsg.RequestForKey(r.key); r.req != nil {
		r.req.SetVersion(r.version)
		if r.version >= 0 && r.req.IsFlexible() {
			tr := &tagReader{src: rest, ok: true}
			kmsg.SkipTags(tr)
			if !tr.ok {
				return r, &FrameError{Size: int64(len(frame)), Err: fmt.Errorf("%w: header tagged fields", ErrMalformedRequest)}
			}
			rest = tr.src
		}
	}
	r.body = rest
	return r, nil
}

// decodeBody decodes r's body with kmsg.
func (r *request) decodeBody() error {
	if err := r.req.ReadFrom(r.body); err != nil {
		return fmt.Errorf("%w: %s v%d: %w", ErrMalformedRequest, kmsg.NameForKey(r.key), r.version, err)
	}
	return nil
}

// tagReader is the kmsg.TagReader over a header's tagged fields: it stops
// at the first read past its input and says so in ok.
type tagReader struct {
	src []byte
	ok  bool
}

var _ kmsg.TagReader = (*tagReader)(nil)

func (t *tagReader) Ok() bool { return t.ok }

func (t *tagReader) Uvarint() uint32 {
	if !t.ok {
		return 0
	}
	v, n := binary.Uvarint(t.src)
	if n <= 0 || v > 1<<31 {
		t.fail()
		return 0
	}
	t.src = t.src[n:]
	return uint32(v)
}

func (t *tagReader) Span(n int) []byte {
	if !t.ok || n < 0 || n > len(t.src) {
		t.fail()
		return nil
	}
	out := t.src[:n]
	t.src = t.src[n:]
	return out
}

func (t *tagReader) fail() { t.ok, t.src = false, nil }

// appendResponse appends the frame of resp answering r: the size, the
// correlation id, the response header's tagged fields when the response
// is flexible (never for ApiVersions, whose response header stays v0 so
// that any client can read it), and the body.
func appendResponse(dst []byte, correlationID int32, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		dst = append(dst, 0) // no tagged fields
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}
