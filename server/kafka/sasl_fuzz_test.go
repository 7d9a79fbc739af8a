package kafka

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/auth"
)

// saslFrames splits fuzz input into request frames: each a 2-byte length
// and that many bytes (the last one cut short if the input ends).
func saslFrames(in []byte) [][]byte {
	var out [][]byte
	for len(in) >= 2 && len(out) < 4 {
		n := int(binary.BigEndian.Uint16(in))
		in = in[2:]
		n = min(n, len(in))
		out = append(out, in[:n])
		in = in[n:]
	}
	return out
}

// saslSeed joins frames the way saslFrames splits them.
func saslSeed(frames ...[]byte) []byte {
	var b []byte
	for _, f := range frames {
		b = binary.BigEndian.AppendUint16(b, uint16(len(f)))
		b = append(b, f...)
	}
	return b
}

// request is req's frame without its size prefix.
func requestFrame(req kmsg.Request) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("fuzz")).AppendRequest(nil, req, 1)[4:]
}

// FuzzKafkaSASL feeds a listener with an auth file, on one connection,
// up to four arbitrary frames before authentication: the SASL handshake
// and authenticate decoding path (v0 bare messages included), which
// every client reaches before it is known. Seeds in
// testdata/fuzz/FuzzKafkaSASL: a PLAIN exchange with handshake v1 and
// v0, a SCRAM first message, a request before authentication, garbage.
// It must never panic; a connection that authenticated did so as the one
// principal whose token the input holds, and an error or a closing
// answer leaves it unauthenticated.
func FuzzKafkaSASL(f *testing.F) {
	toks, _, err := auth.Parse([]byte("app write " + auth.HashToken("app-token") + "\n"))
	if err != nil {
		f.Fatal(err)
	}
	s, err := New(nil, Config{Auth: auth.NewSet(toks)})
	if err != nil {
		f.Fatal(err)
	}
	hs1 := &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: auth.MechanismPlain}
	hs0 := &kmsg.SASLHandshakeRequest{Version: 0, Mechanism: auth.MechanismPlain}
	scram := &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: auth.MechanismSCRAMSHA256}
	au := &kmsg.SASLAuthenticateRequest{Version: 2, SASLAuthBytes: []byte("\x00app\x00app-token")}
	first := &kmsg.SASLAuthenticateRequest{Version: 1, SASLAuthBytes: []byte("n,,n=app,r=abcdef")}
	f.Add(saslSeed(requestFrame(hs1), requestFrame(au)))
	f.Add(saslSeed(requestFrame(hs0), []byte("\x00app\x00app-token")))
	f.Add(saslSeed(requestFrame(scram), requestFrame(first), requestFrame(first)))
	f.Add(saslSeed(requestFrame(&kmsg.MetadataRequest{Version: 9})))
	f.Add(saslSeed(requestFrame(hs1), []byte{0xff, 0xff, 0, 0}))
	f.Fuzz(func(t *testing.T, in []byte) {
		a, b := net.Pipe()
		defer func() { _ = a.Close(); _ = b.Close() }()
		c := &conn{s: s, nc: a, ctx: t.Context(), log: s.cfg.Logger}
		for _, frame := range saslFrames(in) {
			_, err := c.handle(nil, frame)
			if err != nil || c.closeAfter {
				if c.principal != nil {
					t.Fatalf("a refused exchange authenticated %q", c.principal.Name)
				}
				return
			}
			if c.principal != nil {
				if c.principal.Name != "app" {
					t.Fatalf("authenticated as %q", c.principal.Name)
				}
				return // authenticated: what follows is every other API's fuzzing
			}
		}
	})
}
