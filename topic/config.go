package topic

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// This file is the one rule for a topic's configuration: the keys a topic
// may set, what each accepts, and how the values a topic sets (its
// overrides) lie over the server-wide defaults. It is plain data and pure
// functions; where the values are stored (cluster.meta, the metadata
// group) and who uses them (the segmented logs) is for the layers above.
// The names and meanings are Kafka's, and as in Kafka every value travels
// as a string: a decimal integer for most keys, a list of policies for
// cleanup.policy, a name for message.timestamp.type.

// The configuration keys of a topic.
const (
	// RetentionMsKey is how long a record is kept, in milliseconds; -1
	// keeps records for ever.
	RetentionMsKey = "retention.ms"
	// RetentionBytesKey is how many bytes one partition replica keeps
	// before its oldest segments go; -1 means no limit.
	RetentionBytesKey = "retention.bytes"
	// SegmentBytesKey is the size at which a partition's log starts a new
	// segment.
	SegmentBytesKey = "segment.bytes"
	// SegmentMsKey is the age at which a partition's log starts a new
	// segment, in milliseconds.
	SegmentMsKey = "segment.ms"
	// MinInsyncReplicasKey is how many replicas of a partition, the
	// leader included, must be active (in sync) for a write to it to be
	// taken; with fewer, writes are refused before anything is appended.
	MinInsyncReplicasKey = "min.insync.replicas"
	// CleanupPolicyKey is what happens to old segments: delete (the
	// only policy PyStream has; Kafka's compact does not exist yet).
	CleanupPolicyKey = "cleanup.policy"
	// MaxMessageBytesKey is the largest record batch, in bytes, the
	// topic takes from a producer, measured as Kafka measures it: the
	// batch as sent (compressed when it is), header included.
	MaxMessageBytesKey = "max.message.bytes"
	// MessageTimestampTypeKey is which time a record's timestamp is:
	// the producer's create time (CreateTime) or the broker's append
	// time (LogAppendTime).
	MessageTimestampTypeKey = "message.timestamp.type"
)

// The cleanup policies Kafka names.
const (
	// CleanupPolicyDelete deletes old segments by retention.ms and
	// retention.bytes: the default, and PyStream's only policy.
	CleanupPolicyDelete = "delete"
	// CleanupPolicyCompact is Kafka's log compaction, which PyStream does
	// not have yet: a value naming it is refused.
	CleanupPolicyCompact = "compact"
)

// The timestamp types Kafka names, the values of message.timestamp.type.
const (
	// TimestampCreateTime: a record's timestamp is the one its producer
	// gave it. The default.
	TimestampCreateTime = "CreateTime"
	// TimestampLogAppendTime: a record's timestamp is the time the
	// partition's leader appended it.
	TimestampLogAppendTime = "LogAppendTime"
)

// Bounds and defaults of the configuration values.
const (
	// DefaultRetentionMs is seven days.
	DefaultRetentionMs = 7 * 24 * 60 * 60 * 1000
	// DefaultRetentionBytes is no limit.
	DefaultRetentionBytes = -1
	// DefaultSegmentBytes is 128 MiB.
	DefaultSegmentBytes = 128 << 20
	// MinSegmentBytes is the smallest segment.bytes: 1 KiB.
	MinSegmentBytes = 1 << 10
	// MaxSegmentBytes is the largest segment.bytes: 1 GiB.
	MaxSegmentBytes = 1 << 30
	// DefaultSegmentMs is seven days.
	DefaultSegmentMs = 7 * 24 * 60 * 60 * 1000
	// DefaultMinInsyncReplicas is 1: a write needs only its leader to be
	// taken, as in Kafka.
	DefaultMinInsyncReplicas = 1
	// DefaultCleanupPolicy is delete.
	DefaultCleanupPolicy = CleanupPolicyDelete
	// DefaultMaxMessageBytes is Kafka's: 1 MiB and 12 bytes (a batch's
	// offset and length fields).
	DefaultMaxMessageBytes = 1<<20 + 12
	// MaxMaxMessageBytes is the largest max.message.bytes: the largest
	// int32, as Kafka's (an int config).
	MaxMaxMessageBytes = math.MaxInt32
	// DefaultMessageTimestampType is CreateTime.
	DefaultMessageTimestampType = TimestampCreateTime
)

// configRule is what one key accepts: a decimal integer from min to max,
// or, when text is set, what text accepts.
type configRule struct {
	min, max int64
	// allowed says it in words, for errors and help texts.
	allowed string
	// text, for a key whose value is not an integer, checks a value and
	// returns its canonical form, or the reason it is refused.
	text func(value string) (string, string)
}

// configRules is the rule of every key a topic may set.
var configRules = map[string]configRule{
	RetentionMsKey:    {min: -1, max: math.MaxInt64, allowed: "-1 (keep for ever) or milliseconds from 0"},
	RetentionBytesKey: {min: -1, max: math.MaxInt64, allowed: "-1 (no limit) or bytes from 0"},
	SegmentBytesKey:   {min: MinSegmentBytes, max: MaxSegmentBytes, allowed: fmt.Sprintf("bytes from %d to %d", MinSegmentBytes, MaxSegmentBytes)},
	SegmentMsKey:      {min: 1, max: math.MaxInt64, allowed: "milliseconds from 1"},
	// As Kafka's: any integer from 1, even above a topic's replication
	// factor (Kafka takes that too; writes are then refused).
	MinInsyncReplicasKey: {min: 1, max: math.MaxInt32, allowed: "replicas from 1"},
	CleanupPolicyKey:     {allowed: "delete (compact does not exist yet)", text: parseCleanupPolicy},
	// As Kafka's: from 0 (which refuses every batch) to the largest
	// int32.
	MaxMessageBytesKey:      {min: 0, max: MaxMaxMessageBytes, allowed: fmt.Sprintf("bytes from 0 to %d", MaxMaxMessageBytes)},
	MessageTimestampTypeKey: {allowed: TimestampCreateTime + " or " + TimestampLogAppendTime, text: parseTimestampType},
}

// parseCleanupPolicy checks a cleanup.policy: Kafka's list of policies,
// comma-separated (spaces around each are ignored, as Kafka ignores
// them). Every policy must be delete, canonically "delete"; compact is
// refused as a policy that does not exist yet, anything else as no
// policy at all.
func parseCleanupPolicy(value string) (string, string) {
	items := strings.Split(value, ",")
	for _, item := range items {
		if strings.TrimSpace(item) == CleanupPolicyCompact {
			return "", "log compaction does not exist in PyStream yet; allowed: delete"
		}
	}
	for _, item := range items {
		if strings.TrimSpace(item) != CleanupPolicyDelete {
			return "", "not a cleanup policy; allowed: delete (compact does not exist yet)"
		}
	}
	return CleanupPolicyDelete, ""
}

// parseTimestampType checks a message.timestamp.type: CreateTime or
// LogAppendTime, spelt exactly so, as Kafka takes them.
func parseTimestampType(value string) (string, string) {
	if value == TimestampCreateTime || value == TimestampLogAppendTime {
		return value, ""
	}
	return "", "not a timestamp type; allowed: " + TimestampCreateTime + " or " + TimestampLogAppendTime + " (case matters)"
}

// ConfigKeys returns every configuration key, sorted.
func ConfigKeys() []string { return slices.Sorted(maps.Keys(configRules)) }

// ConfigAllowed says in words what key accepts ("" for an unknown key).
func ConfigAllowed(key string) string { return configRules[key].allowed }

// Config is a topic's effective configuration: the server-wide defaults
// with the topic's overrides laid over them. The zero value is not a valid
// configuration; DefaultConfig is. A Config is a plain value, safe to copy
// and to share.
type Config struct {
	// RetentionMs is retention.ms: how long a record is kept, in
	// milliseconds, -1 for ever. Default 604800000 (seven days).
	RetentionMs int64
	// RetentionBytes is retention.bytes: the bytes one partition replica
	// keeps, -1 without limit. Default -1.
	RetentionBytes int64
	// SegmentBytes is segment.bytes: the size at which a log rolls to a
	// new segment, MinSegmentBytes to MaxSegmentBytes. Default 134217728
	// (128 MiB).
	SegmentBytes int64
	// SegmentMs is segment.ms: the age at which a log rolls to a new
	// segment, in milliseconds, from 1. Default 604800000 (seven days).
	SegmentMs int64
	// MinInsyncReplicas is min.insync.replicas: the fewest active
	// replicas of a partition, the leader included, with which a write
	// to it is taken. Default 1.
	MinInsyncReplicas int64
	// CleanupPolicy is cleanup.policy: "delete", the only policy there
	// is. Default "delete".
	CleanupPolicy string
	// MaxMessageBytes is max.message.bytes: the largest record batch a
	// producer may send to one of the topic's partitions, in bytes, as
	// sent (compressed when it is). Default 1048588.
	MaxMessageBytes int64
	// MessageTimestampType is message.timestamp.type: TimestampCreateTime
	// or TimestampLogAppendTime. Default CreateTime.
	MessageTimestampType string
}

// DefaultConfig returns Kafka's defaults, which PyStream's are too.
func DefaultConfig() Config {
	return Config{RetentionMs: DefaultRetentionMs, RetentionBytes: DefaultRetentionBytes,
		SegmentBytes: DefaultSegmentBytes, SegmentMs: DefaultSegmentMs,
		MinInsyncReplicas: DefaultMinInsyncReplicas, CleanupPolicy: DefaultCleanupPolicy,
		MaxMessageBytes: DefaultMaxMessageBytes, MessageTimestampType: DefaultMessageTimestampType}
}

// intField returns the address of integer key's field in c, or nil for a
// key that is unknown or not an integer.
func (c *Config) intField(key string) *int64 {
	switch key {
	case RetentionMsKey:
		return &c.RetentionMs
	case RetentionBytesKey:
		return &c.RetentionBytes
	case SegmentBytesKey:
		return &c.SegmentBytes
	case SegmentMsKey:
		return &c.SegmentMs
	case MinInsyncReplicasKey:
		return &c.MinInsyncReplicas
	case MaxMessageBytesKey:
		return &c.MaxMessageBytes
	}
	return nil
}

// textField returns the address of text key's field in c, or nil for a
// key that is unknown or an integer.
func (c *Config) textField(key string) *string {
	switch key {
	case CleanupPolicyKey:
		return &c.CleanupPolicy
	case MessageTimestampTypeKey:
		return &c.MessageTimestampType
	}
	return nil
}

// value is key's value in c as a string (Kafka's form).
func (c *Config) value(key string) string {
	if p := c.intField(key); p != nil {
		return strconv.FormatInt(*p, 10)
	}
	return *c.textField(key)
}

// set stores the canonical value v of key in c.
func (c *Config) set(key, v string) {
	if p := c.intField(key); p != nil {
		*p, _ = strconv.ParseInt(v, 10, 64)
		return
	}
	*c.textField(key) = v
}

// Validate checks every field against its key's rule, reporting the first
// key (in ConfigKeys order) it refuses as a *ConfigError.
func (c Config) Validate() error {
	for _, key := range ConfigKeys() {
		v := c.value(key)
		if got, err := ParseConfigValue(key, v); err != nil || got != v {
			return &ConfigError{Key: key, Value: v, Reason: "allowed: " + configRules[key].allowed}
		}
	}
	return nil
}

// ParseConfigValue checks one value of key and returns it in canonical
// form. An integer key takes a decimal integer (an optional '-' and
// digits, nothing else: no '+', no spaces, no underscores) within its
// range, canonically strconv.FormatInt's ("007" is "7", "-0" is "0");
// cleanup.policy takes Kafka's list of policies, of which only delete
// exists (canonically "delete"); message.timestamp.type takes CreateTime
// or LogAppendTime. An unknown key, or a value it does not accept, is a
// *ConfigError.
func ParseConfigValue(key, value string) (string, error) {
	r, ok := configRules[key]
	if !ok {
		return "", &ConfigError{Key: key, Value: value, Reason: "unknown key (known: " + fmt.Sprint(ConfigKeys()) + ")"}
	}
	if r.text != nil {
		v, reason := r.text(value)
		if reason != "" {
			return "", &ConfigError{Key: key, Value: value, Reason: reason}
		}
		return v, nil
	}
	v, err := parseConfigInt(r, key, value)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(v, 10), nil
}

// ConfigInt returns the integer of a canonical value of integer key (as
// ParseConfigValue returns it), checking it again.
func ConfigInt(key, value string) (int64, error) {
	r, ok := configRules[key]
	if !ok || r.text != nil {
		return 0, &ConfigError{Key: key, Value: value, Reason: "not an integer key"}
	}
	return parseConfigInt(r, key, value)
}

// parseConfigInt parses a value of the integer key whose rule is r.
func parseConfigInt(r configRule, key, value string) (int64, error) {
	digits := value
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if digits == "" {
		return 0, &ConfigError{Key: key, Value: value, Reason: "not a decimal integer; allowed: " + r.allowed}
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, &ConfigError{Key: key, Value: value, Reason: "not a decimal integer; allowed: " + r.allowed}
		}
	}
	v, err := strconv.ParseInt(value, 10, 64)
	if err != nil || v < r.min || v > r.max {
		return 0, &ConfigError{Key: key, Value: value, Reason: "out of range; allowed: " + r.allowed}
	}
	return v, nil
}

// ParseConfigOverrides checks a set of overrides, key by key in sorted
// order (so the first bad key is the same every time), and returns them
// with every value in canonical form (ParseConfigValue's: "007" is "7",
// "-0" is "0", " delete" is "delete"). The first key that is unknown or whose value its rule
// refuses is a *ConfigError naming it. An empty or nil set is valid and
// returns nil.
func ParseConfigOverrides(overrides map[string]string) (map[string]string, error) {
	if len(overrides) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(overrides))
	for _, key := range slices.Sorted(maps.Keys(overrides)) {
		v, err := ParseConfigValue(key, overrides[key])
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

// AlterConfigOverrides returns the overrides that result from setting the
// keys of set and removing those of remove (a removed key falls back to
// the default), validated as a whole: one bad key or value, or a key both
// set and removed, is a *ConfigError and nothing is returned. Removing a
// key that is not overridden is allowed and changes nothing. current is
// not modified; the result is canonical, and nil when no override is
// left.
func AlterConfigOverrides(current, set map[string]string, remove []string) (map[string]string, error) {
	parsed, err := ParseConfigOverrides(set)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(current)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, parsed)
	for _, key := range remove {
		if _, ok := configRules[key]; !ok {
			return nil, &ConfigError{Key: key, Reason: "unknown key (known: " + fmt.Sprint(ConfigKeys()) + ")"}
		}
		if v, ok := set[key]; ok {
			return nil, &ConfigError{Key: key, Value: v, Reason: "both set and removed"}
		}
		delete(out, key)
	}
	return ParseConfigOverrides(out)
}

// With returns c with overrides laid over it. The overrides are checked
// as ParseConfigOverrides checks them; on error c is returned unchanged
// with the *ConfigError.
func (c Config) With(overrides map[string]string) (Config, error) {
	out := c
	for _, key := range slices.Sorted(maps.Keys(overrides)) {
		v, err := ParseConfigValue(key, overrides[key])
		if err != nil {
			return c, err
		}
		out.set(key, v)
	}
	return out, nil
}

// Strings returns c as Kafka shows a configuration: every key with its
// value as a string (a decimal one for an integer key).
func (c Config) Strings() map[string]string {
	out := make(map[string]string, len(configRules))
	for _, key := range ConfigKeys() {
		out[key] = c.value(key)
	}
	return out
}

// IsIntegerKey reports whether key's values are decimal integers (every
// known key but cleanup.policy and message.timestamp.type).
func IsIntegerKey(key string) bool {
	r, ok := configRules[key]
	return ok && r.text == nil
}
