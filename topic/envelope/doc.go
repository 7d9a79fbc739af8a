// Package envelope is the small binary encoding that lets one PyStream
// record carry what a Kafka record carries: a key, headers, a producer's
// timestamp and an idempotent producer's identity next to its value.
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
//	flags         1 byte   bit 0: a timestamp follows; bit 1: a producer follows;
//	                       bit 2: transactional (only with bit 1);
//	                       bit 3: a marker follows (only with bits 1 and 2);
//	                       bits 4-7 must be 0
//	timestamp     8 bytes  big-endian int64, ms since the epoch; only when flag bit 0 is set
//	producer     14 bytes  only when flag bit 1 is set:
//	  producer id   8 bytes  big-endian int64, 0 or more
//	  epoch         2 bytes  big-endian int16, 0 or more
//	  sequence      4 bytes  big-endian int32, 0 or more
//	marker        9 bytes  only when flag bit 3 is set:
//	  type          1 byte   0 abort, 1 commit
//	  version       8 bytes  big-endian uint64: the coordinator's decision, 0 for none
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
// ends. The optional fields a flag announces follow the flags in the order
// of their bits, so a version-1 envelope written before flag bit 1 existed
// reads as it always did.
//
// The magic starts with 0xFF, a byte that never begins UTF-8 text, JSON or a
// protobuf message (its wire type would be 7, which does not exist), and is
// not the 0x00 of Confluent's schema-registry framing.
//
// # The producer identity
//
// A record written by an idempotent Kafka producer (KIP-98) carries its
// producer id, the epoch of that id, and its sequence number within (id,
// epoch, partition) — Kafka keeps them in the record batch header, PyStream
// keeps them with each record (Record.Producer, when HasProducer). They
// travel with the record into every replica's log, so a partition rebuilds
// its producers' state by reading its log, and a follower that becomes
// leader already knows it. ProducerOf reads just this field, for that
// rebuild: it walks the rest of the envelope to check it, without copying
// or allocating, and agrees with Parse.
//
// None of the three fields is negative: Kafka writes -1 for "no producer
// id" and "no sequence", and such a record has no producer identity. Encode
// therefore writes the field only when HasProducer is set and every part is
// 0 or more, and Parse refuses an envelope whose producer field holds a
// negative part. A sequence wraps from 2^31-1 to 0, as Kafka's does, so it
// never needs to be negative either.
//
// # Transactions
//
// A record a transactional producer writes carries flag bit 2: it belongs
// to its producer's open transaction, and a read_committed reader shows it
// only once the transaction commits. The transaction ends in each
// partition with a marker (Kafka's control record): a record of the same
// producer with flag bits 2 and 3, the marker type — 0 for abort, 1 for
// commit, Kafka's own control types (Marker.ControlType) — and its
// version: the version of the transaction coordinator's state that
// decided the end (MarkerVersion), by which a partition tells a marker
// sent late, by a coordinator that was paused while another finished the
// transaction, from the end of the producer's next transaction. A
// marker's key and value are not read. IdentityOf reads the producer,
// flag bit 2 and the marker together, as ProducerOf reads the producer.
//
// # One encoder, one strict decoder
//
// Encode always writes an envelope, in the one canonical form above. Parse
// accepts exactly what Encode writes and refuses everything else with a
// reason: no magic, an unknown version, unknown flag bits, a truncated
// timestamp, producer or marker, a transactional flag or a marker without a
// producer, a marker without the transactional flag, an unknown marker
// type, a negative producer id, epoch or sequence, a length
// below -1 or above the bytes left, a header count that the bytes left
// cannot hold, a varint that is truncated, overflows or is not in its
// shortest form, and any byte after the last header. So Encode(Parse(p)) == p for every p Parse
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
// there is nothing else to keep (no key, no header, no timestamp, no
// producer, a non-null value) and the value does not start with Magic; the
// envelope otherwise. Plain values therefore cost nothing and read as they
// always did, byte for byte, over every API; a record with a producer
// identity is always an envelope.
//
// A value that starts with Magic is wrapped even when it has nothing else:
// stored raw, it could parse as an envelope and come back as a different
// record. Wrapped, it cannot, so every record written from now on decodes to
// itself: Decode(Payload(r)) equals r (with empty headers read as none, the
// timestamp read as 0 when HasTimestamp is false, and the producer read as
// none, the zero Producer, when HasProducer is false or a part of it is
// negative). A null value is wrapped for the same reason: raw, it would come
// back as an empty one.
//
// # Data written before
//
// Records stored before envelopes existed, and records stored by the phase
// APIs, are plain payloads. Decode reads them as a value with no key, no
// header, no timestamp and no producer — what they were. The one ambiguity is a raw payload
// (an old one, or one stored by a phase API) that happens to be a whole,
// valid envelope (it starts with the four
// bytes 0xFF 'P' 'S' 'E' and everything after them parses): it reads as the
// record that envelope describes. A payload that merely starts with the magic
// and does not parse still reads as itself.
package envelope
