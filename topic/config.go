package topic

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
)

// This file is the one rule for a topic's configuration: the keys a topic
// may set, what each accepts, and how the values a topic sets (its
// overrides) lie over the server-wide defaults. It is plain data and pure
// functions; where the values are stored (cluster.meta, the metadata
// group) and who uses them (the segmented logs) is for the layers above.
// The names and meanings are Kafka's, and as in Kafka every value travels
// as a string.

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
)

// configRule is what one key accepts: a decimal integer from min to max.
type configRule struct {
	min, max int64
	// allowed says it in words, for errors and help texts.
	allowed string
}

// configRules is the rule of every key a topic may set.
var configRules = map[string]configRule{
	RetentionMsKey:    {-1, math.MaxInt64, "-1 (keep for ever) or milliseconds from 0"},
	RetentionBytesKey: {-1, math.MaxInt64, "-1 (no limit) or bytes from 0"},
	SegmentBytesKey:   {MinSegmentBytes, MaxSegmentBytes, fmt.Sprintf("bytes from %d to %d", MinSegmentBytes, MaxSegmentBytes)},
	SegmentMsKey:      {1, math.MaxInt64, "milliseconds from 1"},
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
}

// DefaultConfig returns Kafka's defaults, which PyStream's are too.
func DefaultConfig() Config {
	return Config{RetentionMs: DefaultRetentionMs, RetentionBytes: DefaultRetentionBytes,
		SegmentBytes: DefaultSegmentBytes, SegmentMs: DefaultSegmentMs}
}

// field returns the address of key's field in c, or nil for an unknown key.
func (c *Config) field(key string) *int64 {
	switch key {
	case RetentionMsKey:
		return &c.RetentionMs
	case RetentionBytesKey:
		return &c.RetentionBytes
	case SegmentBytesKey:
		return &c.SegmentBytes
	case SegmentMsKey:
		return &c.SegmentMs
	}
	return nil
}

// Validate checks every field against its key's rule, reporting the first
// key (in ConfigKeys order) out of range as a *ConfigError.
func (c Config) Validate() error {
	for _, key := range ConfigKeys() {
		v := *c.field(key)
		if r := configRules[key]; v < r.min || v > r.max {
			return &ConfigError{Key: key, Value: strconv.FormatInt(v, 10), Reason: "allowed: " + r.allowed}
		}
	}
	return nil
}

// ParseConfigValue parses one value of key: a decimal integer (an
// optional '-' and digits, nothing else: no '+', no spaces, no
// underscores) within the key's range. An unknown key, or a value it does
// not accept, is a *ConfigError.
func ParseConfigValue(key, value string) (int64, error) {
	r, ok := configRules[key]
	if !ok {
		return 0, &ConfigError{Key: key, Value: value, Reason: "unknown key (known: " + fmt.Sprint(ConfigKeys()) + ")"}
	}
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
// with every value in canonical form (strconv.FormatInt's: "007" is "7",
// "-0" is "0"). The first key that is unknown or whose value its rule
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
		out[key] = strconv.FormatInt(v, 10)
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
		*out.field(key) = v
	}
	return out, nil
}

// Strings returns c as Kafka shows a configuration: every key with its
// value as a decimal string.
func (c Config) Strings() map[string]string {
	out := make(map[string]string, len(configRules))
	for _, key := range ConfigKeys() {
		out[key] = strconv.FormatInt(*c.field(key), 10)
	}
	return out
}
