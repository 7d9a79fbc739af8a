package httpapi

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/topic"
)

// schemaSet derives JSON Schemas from the wire types of package apiclient by
// reflection, so the OpenAPI document describes exactly the structs the
// server encodes and the client decodes. Named struct types become
// components ("#/components/schemas/TopicDetail"); a field's JSON tag gives
// its name, omitempty makes it optional (a field without it is required,
// even when it may be null), a pointer makes it nullable, []byte is a
// base64 string, and an unsigned integer states its range.
type schemaSet struct {
	schemas map[string]*schema
}

func newSchemaSet() *schemaSet { return &schemaSet{schemas: map[string]*schema{}} }

// of returns the schema of v's type, a $ref for a named struct.
func (s *schemaSet) of(v any) *schema { return s.schema(reflect.TypeOf(v)) }

func (s *schemaSet) schema(t reflect.Type) *schema {
	switch t.Kind() {
	case reflect.Pointer:
		return &schema{AnyOf: []*schema{s.schema(t.Elem()), {Type: "null"}}}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return &schema{Type: "string", Format: "byte", Description: "standard base64 (RFC 4648, with padding)"}
		}
		return &schema{Type: "array", Items: s.schema(t.Elem())}
	case reflect.Map:
		return &schema{Type: "object"} // the configuration maps: refine names their keys
	case reflect.Bool:
		return &schema{Type: "boolean"}
	case reflect.String:
		return &schema{Type: "string"}
	case reflect.Int, reflect.Int64, reflect.Int32:
		return &schema{Type: "integer", Format: "int64"}
	case reflect.Uint64, reflect.Uint:
		return &schema{Type: "integer", Format: "uint64", Minimum: num(0), Maximum: num(uint64(math.MaxUint64))}
	case reflect.Int16:
		return &schema{Type: "integer", Format: "int32", Minimum: num(math.MinInt16), Maximum: num(math.MaxInt16)}
	case reflect.Uint32:
		return &schema{Type: "integer", Format: "uint32", Minimum: num(0), Maximum: num(math.MaxUint32)}
	case reflect.Struct:
		if t.Name() == "" {
			return s.object(t)
		}
		if _, ok := s.schemas[t.Name()]; !ok {
			s.schemas[t.Name()] = nil // reserve: recursive types end here
			s.schemas[t.Name()] = s.object(t)
		}
		return ref(t.Name())
	}
	return &schema{}
}

func (s *schemaSet) object(t reflect.Type) *schema {
	obj := &schema{Type: "object", Properties: map[string]*schema{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		jsonTag := f.Tag.Get("json")
		if jsonTag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(jsonTag, ",")
		if name == "" {
			name = f.Name
		}
		obj.Properties[name] = s.schema(f.Type)
		// Without omitempty the field is always sent, null included:
		// required (and, for a pointer, nullable), so that a generator
		// does not make it optional as well.
		if !strings.Contains(opts, "omitempty") {
			obj.Required = append(obj.Required, name)
		}
	}
	return obj
}

// refine corrects the derived schemas where the Go type of a wire struct
// says less than the contract (docs/phase-6-network-api.md):
//
//   - ProduceRecord.key may be omitted or null (no key: round robin), which
//     a plain []byte field cannot express; so may RecordHeader.value (a
//     null header value), and FetchedRecord.key and .value are null for
//     no key and a null value;
//   - ProduceResult is a placement: every field set, never "error";
//   - a failed produce answers, per input record, either a placement or
//     {"error": {"code", "message"}} alone (ProduceFailure), so
//     ErrorBody.records lists either;
//   - the limits the handlers enforce beyond the Go types: a topic name's
//     characters and length, partitions 1..bounds.MaxTopicPartitions,
//     replication_factor from 1, at least one record per produce, a node
//     id 1..backend.MaxBrokers and its address a host:port;
//   - timestamps say their unit, and that timestamp_ms is the one a
//     JavaScript client reads exactly;
//   - FetchedRecord.producer, .transactional and .marker say what they
//     mean, and marker's two values.
//
// It only touches schemas that were derived; call it after every wire type
// the document uses has been derived.
func (s *schemaSet) refine() {
	if req := s.schemas["CreateTopicRequest"]; req != nil {
		req.Properties["name"] = nameSchema("Topic name: " + nameRule + ".")
		parts := req.Properties["partitions"]
		parts.Minimum, parts.Maximum = num(1), num(bounds.MaxTopicPartitions)
		rf := req.Properties["replication_factor"]
		rf.Minimum = num(1)
		rf.Description = "Replicas per partition: from 1 to the number of brokers (GET /api/cluster)."
	}
	if req := s.schemas["CreateTopicRequest"]; req != nil {
		req.Properties["config"] = configSchema(false, "Optional: configuration keys of the topic, each value a decimal string; "+
			"the keys left out take the server's defaults (PYSTREAM_RETENTION_MS, ...).")
	}
	for _, name := range []string{"TopicDetail", "TopicConfigResponse"} {
		if d := s.schemas[name]; d != nil {
			d.Properties["config"] = configSchema(true, "The effective configuration: every key, each value a decimal string.")
			d.Properties["config_overrides"].Description = "The keys of config set for this topic, sorted; the others have the server's defaults."
			d.Properties["config_overrides"].Items = &schema{Type: "string", Enum: configKeysAny()}
		}
	}
	if e := s.schemas["JournalEntry"]; e != nil && e.Properties["config_before"] != nil {
		e.Properties["config_before"] = configSchema(false, "alter-config: the topic's overrides before the change (omitted: none).")
		e.Properties["config_after"] = configSchema(false, "alter-config: the topic's overrides after the change (omitted: none).")
	}
	if req := s.schemas["AddNodeRequest"]; req != nil {
		id := req.Properties["id"]
		id.Minimum, id.Maximum = num(1), num(backend.MaxBrokers)
		id.Description = "The node's id: its PYSTREAM_NODE_ID."
		addr := req.Properties["addr"]
		addr.Pattern = addrPattern
		addr.Description = "The node's internal address, host:port: an IP address or a host name, and a port from 1 to 65535."
	}
	if req := s.schemas["GroupHeartbeatRequest"]; req != nil {
		epoch := req.Properties["member_epoch"]
		epoch.Minimum, epoch.Maximum = num(-1), num(math.MaxInt32)
		epoch.Description = "0 joins, -1 leaves, else the member epoch of the last answer."
		req.Properties["topics"].Items = nameSchema("Topic name: " + nameRule + ".")
		req.Properties["member_id"].Description = "The id the join answered; omitted (or empty) to join as a new member."
	}
	if tp := s.schemas["GroupTopicPartitions"]; tp != nil {
		tp.Properties["topic"] = nameSchema("Topic name: " + nameRule + ".")
		tp.Properties["partitions"].Items = &schema{Type: "integer", Format: "int32", Minimum: num(0), Maximum: num(maxIndex)}
	}
	if req := s.schemas["ProduceRequest"]; req != nil {
		req.Properties["records"].MinItems = ptr(1)
	}
	for _, name := range []string{"ProduceResult", "FetchedRecord"} {
		if rec := s.schemas[name]; rec != nil {
			rec.Properties["timestamp"].Description = "The record's timestamp, nanoseconds since the Unix epoch (exact in Go, Java, Python; " +
				"a parser that reads JSON numbers as doubles, such as JavaScript's JSON.parse, rounds it: read timestamp_ms there)."
			rec.Properties["timestamp_ms"].Description = "timestamp in whole milliseconds since the Unix epoch (rounded down), " +
				"as Kafka gives it; exact in a double."
		}
	}
	if rec := s.schemas["ProduceRecord"]; rec != nil {
		rec.Properties["key"] = &schema{AnyOf: []*schema{rec.Properties["key"], {Type: "null"}},
			Description: "omitted or null: no key, the server picks the partition round robin; \"\" is a real, empty key"}
		rec.Required = slices.DeleteFunc(rec.Required, func(n string) bool { return n == "key" })
	}
	if rec := s.schemas["ProduceRecord"]; rec != nil && rec.Properties["headers"] != nil {
		rec.Properties["headers"].Description = "Optional: Kafka-style record headers, kept in order and stored with the record (names may repeat)."
	}
	if h := s.schemas["RecordHeader"]; h != nil {
		h.Properties["value"] = &schema{AnyOf: []*schema{h.Properties["value"], {Type: "null"}},
			Description: "null (or omitted, when producing): a null header value; \"\" is an empty one"}
		h.Required = slices.DeleteFunc(h.Required, func(n string) bool { return n == "value" })
	}
	if rec := s.schemas["FetchedRecord"]; rec != nil && rec.Properties["key"] != nil {
		rec.Properties["key"] = &schema{AnyOf: []*schema{rec.Properties["key"], {Type: "null"}},
			Description: "null: the record has no key (produced without one, or written before keys were stored); \"\" is an empty key"}
		rec.Properties["value"] = &schema{AnyOf: []*schema{rec.Properties["value"], {Type: "null"}},
			Description: "null only for a null value (a Kafka tombstone); \"\" is an empty value"}
		rec.Properties["headers"].Description = "The record's headers, in order; omitted when it has none."
		rec.Properties["create_timestamp_ms"].Description = "The time its producer gave the record (a Kafka record's create time), " +
			"milliseconds since the Unix epoch; omitted when the producer gave none."
		rec.Properties["producer"] = &schema{Ref: ref("ProducerIdentity").Ref,
			Description: "The idempotent producer the record was written by: its producer id, epoch and the record's sequence number " +
				"(a marker's sequence is 0 and numbers nothing); omitted when it has none."}
		rec.Properties["transactional"].Description = "true when the record belongs to its producer's transaction; omitted otherwise."
		rec.Properties["marker"].Enum = []any{apiclient.MarkerCommit, apiclient.MarkerAbort}
		rec.Properties["marker"].Description = "A transaction marker (Kafka's control record), which ends its producer's transaction " +
			"in the partition: commit or abort; its key and value are null. Omitted for every other record."
	}
	if res := s.schemas["ProduceResult"]; res != nil {
		delete(res.Properties, "error")
	}
	if body := s.schemas["ErrorBody"]; body != nil && body.Properties["records"] != nil {
		s.of(apiclient.RecordError{})
		s.schemas["ProduceFailure"] = &schema{Type: "object", Required: []string{"error"},
			Description: "A record of a failed produce that was not acknowledged.",
			Properties:  map[string]*schema{"error": ref("RecordError")}}
		body.Properties["records"] = &schema{Type: "array",
			Description: "Failed produce only: per input record, in request order, its placement (acknowledged) or its error.",
			Items:       &schema{AnyOf: []*schema{ref("ProduceResult"), ref("ProduceFailure")}}}
	}
}

// configValuePattern is the shape topic.ParseConfigValue accepts for an
// integer key: an optional minus and decimal digits (each key's range is
// in its description). A key that is not an integer (cleanup.policy) has
// no pattern: its description says what it takes.
const configValuePattern = `^-?[0-9]+$`

// configValueSchema is one key's value in a configuration object.
func configValueSchema(key string) *schema {
	if topic.IsIntegerKey(key) {
		return &schema{Type: "string", Pattern: configValuePattern, Description: topic.ConfigAllowed(key)}
	}
	return &schema{Type: "string", Description: topic.ConfigAllowed(key)}
}

// configSchema is a configuration object: one property per key, a string
// each (a decimal one for an integer key); all of them required in an
// answer (every key is shown).
func configSchema(answer bool, desc string) *schema {
	sc := &schema{Type: "object", Description: desc, Properties: map[string]*schema{}}
	for _, key := range topic.ConfigKeys() {
		sc.Properties[key] = configValueSchema(key)
	}
	if answer {
		sc.Required = topic.ConfigKeys()
	}
	return sc
}

// alterConfigSchema is PATCH /api/topics/{topic}/config's body: each key a
// string (set) or null (back to the default).
func alterConfigSchema() *schema {
	sc := &schema{Type: "object", Description: "Configuration keys: a string sets one, null removes the topic's value.",
		Properties: map[string]*schema{}}
	for _, key := range topic.ConfigKeys() {
		what := "a decimal string, "
		if !topic.IsIntegerKey(key) {
			what = "a string, "
		}
		sc.Properties[key] = &schema{AnyOf: []*schema{{Type: "string"}, {Type: "null"}},
			Description: what + topic.ConfigAllowed(key) + "; null: the server's default"}
	}
	return sc
}

func configKeysAny() []any {
	var out []any
	for _, k := range topic.ConfigKeys() {
		out = append(out, k)
	}
	return out
}

// nameRule says in words what topic.ValidateName accepts, for topic names
// and consumer ids alike.
var nameRule = fmt.Sprintf("1 to %d characters of A-Z a-z 0-9 . _ -, not . or ..", topic.MaxNameLength)

// namePattern is topic.ValidateName's character rule as a regular
// expression that both ECMA-262 (JSON Schema) and RE2 (Go) read: one or
// more of A-Z a-z 0-9 . _ -, but not "." or ".." (spelled without a
// lookahead, which RE2 lacks). The length limit is minLength/maxLength.
const namePattern = `^([A-Za-z0-9_-][A-Za-z0-9._-]*|\.[A-Za-z0-9_-][A-Za-z0-9._-]*|\.\.[A-Za-z0-9._-]+)$`

// addrPattern is the shape of a host:port that syntax.ValidAddr checks in full
// (the host's characters, the port's range): no white space, a colon, one
// to five digits.
const addrPattern = `^\S+:[0-9]{1,5}$`

// nameSchema is the schema of a topic name or consumer id.
func nameSchema(desc string) *schema {
	return &schema{Type: "string", Description: desc, MinLength: ptr(1), MaxLength: ptr(topic.MaxNameLength), Pattern: namePattern}
}
