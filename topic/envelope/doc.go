// Package envelope is the small binary encoding that lets one PyStream
// record carry what a Kafka record carries: a key, headers and a producer's
// timestamp next to its value.
//
// # Why it lives here
//
// The phase-1 log stores opaque payloads and never looks inside one; its
// frame stays byte for byte what it was. Keys are a phase-2 idea — they route
// a record to its partition — so the encoding that stores a key with its
// record lives with topics, beneath every layer that speaks to the outside
// world (the HTTP API, the Kafka listener, the CLI), which all share it.
//
// The phase APIs a learner uses do not use it: topic.Topic.Append,
// client.Producer.Send and cluster.Producer route by the key and store the
// payload exactly as given, as they always have. Only the server's network
// paths (HTTP with a key or headers, and Kafka) wrap records in an envelope,
// and every reader over the network unwraps them with Decode, so a record
// produced over one protocol reads the same over the other.
//
// # The format, version 1
//
// An envelope is one payload, laid out as:
//
//	magic         4 bytes  0xFF 'P' 'S' 'E' (Magic)
//	version       1 byte   1
//	flags         1 byte   bit 0: a timestamp follows; bits 1-7 must be 0
//	timestamp     8 bytes  big-endian int64, ms since the epoch; only when flag bit 0 is set
//	key length    varint   -1 for a null key, else the number of key bytes
//	key           bytes
//	value length  varint   -1 for a null value (a tombstone), else the number of value bytes
//	value         bytes
//	header count  varint   0 or more
//	each header:
//	  key length    varint   0 or more (a header key is a string, never null)
//	  key           bytes
//	  value length  varint   -1 for a null header value, else the number of bytes
//	  value         bytes
//
// A varint is a zigzag-encoded signed varint, as Kafka's own records use
// (encoding/binary's AppendVarint). The envelope ends where the last header
// ends.
//
// The magic starts with 0xFF, a byte that never begins UTF-8 text, JSON or a
// protobuf message (its wire type would be 7, which does not exist), and is
// not the 0x00 of Confluent's schema-registry framing.
//
// # One encoder, one strict decoder
//
// Encode always writes an envelope, in the one canonical form above. Parse
// accepts exactly what Encode writes and refuses everything else with a
// reason: no magic, an unknown version, unknown flag bits, a length below -1
// or above the bytes left, a header count that the bytes left cannot hold, a
// varint that is truncated, overflows or is not in its shortest form, and any
// byte after the last header. So Encode(Parse(p)) == p for every p Parse
// accepts. Decode is Parse for readers that never fail: whatever is not one
// whole, valid envelope is returned as a record with that payload as its
// value and no key.
//
// Decode does not copy: the key, value and header values it returns are
// slices of the payload it was given (each capped, so appending to one never
// overwrites another).
//
// # Payload: what to store
//
// Payload(r) is what a network path stores for r: the value itself when
// there is nothing else to keep (no key, no header, no timestamp, a non-null
// value) and the value does not start with Magic; the envelope otherwise.
// Plain values therefore cost nothing and read as they always did, byte for
// byte, over every API.
//
// A value that starts with Magic is wrapped even when it has nothing else:
// stored raw, it could parse as an envelope and come back as a different
// record. Wrapped, it cannot, so every record written from now on decodes to
// itself: Decode(Payload(r)) equals r (with empty headers read as none, and
// the timestamp read as 0 when HasTimestamp is false). A null value is
// wrapped for the same reason: raw, it would come back as an empty one.
//
// # Data written before
//
// Records stored before envelopes existed, and records stored by the phase
// APIs, are plain payloads. Decode reads them as a value with no key, no
// header and no timestamp — what they were. The one ambiguity is a raw payload
// (an old one, or one stored by a phase API) that happens to be a whole,
// valid envelope (it starts with the four
// bytes 0xFF 'P' 'S' 'E' and everything after them parses): it reads as the
// record that envelope describes. A payload that merely starts with the magic
// and does not parse still reads as itself.
package envelope
