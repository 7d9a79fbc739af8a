package server

import (
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/httpapi"
	"github.com/pystream/pystream/server/syntax"
	"github.com/pystream/pystream/topic"
)

// The types below decode their own variables. envconfig calls Decode with
// the raw value, so each one decides exactly what it accepts instead of
// inheriting envconfig's defaults (which read integers with base prefixes,
// so that "010" would mean 8 and "0x1F" 31).

// Port is a TCP port from 1 to 65535.
type Port uint16

// Decode parses a decimal port number.
func (p *Port) Decode(s string) error {
	n, err := parseDecimal(s, 1, 65535)
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a decimal integer from 1 to 65535", Err: err}
	}
	*p = Port(n)
	return nil
}

// KafkaPort is broker 1's Kafka listener port, 0 to 65535: broker i
// listens on KafkaPort+i-1, and 0 turns the Kafka listener off.
type KafkaPort uint16

// Decode parses a decimal port number or 0.
func (p *KafkaPort) Decode(s string) error {
	n, err := parseDecimal(s, 0, 65535)
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a decimal integer from 0 (off) to 65535", Err: err}
	}
	*p = KafkaPort(n)
	return nil
}

// MaxBrokers is the largest broker count the configuration accepts, and
// the largest node id (backend.MaxBrokers).
const MaxBrokers = backend.MaxBrokers

// BrokerCount is the number of brokers the network API runs, 1 to MaxBrokers.
type BrokerCount int

// Decode parses a decimal broker count.
func (b *BrokerCount) Decode(s string) error {
	n, err := parseDecimal(s, 1, MaxBrokers)
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a decimal integer from 1 to " + strconv.Itoa(MaxBrokers), Err: err}
	}
	*b = BrokerCount(n)
	return nil
}

// Bounds and default of PYSTREAM_MAX_REQUEST_BYTES.
const (
	// MinRequestBytes is the smallest body cap accepted: room for a small
	// JSON request.
	MinRequestBytes = httpapi.MinRequestBytes
	// MaxRequestBytesLimit is the largest body cap accepted: 1 GiB.
	MaxRequestBytesLimit = httpapi.MaxRequestBytesLimit
	// DefaultMaxRequestBytes is the body cap when none is set: 1 MiB
	// (the HTTP API's and the Kafka listener's).
	DefaultMaxRequestBytes = httpapi.DefaultMaxRequestBytes
)

// RequestBytes is a request body cap in bytes, MinRequestBytes to
// MaxRequestBytesLimit.
type RequestBytes int64

// Decode parses a decimal byte count.
func (b *RequestBytes) Decode(s string) error {
	n, err := parseDecimal(s, MinRequestBytes, MaxRequestBytesLimit)
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a decimal number of bytes from " + strconv.Itoa(MinRequestBytes) + " to " + strconv.Itoa(MaxRequestBytesLimit), Err: err}
	}
	*b = RequestBytes(n)
	return nil
}

// MaxOpenLogsLimit is the largest PYSTREAM_MAX_OPEN_LOGS accepted.
const MaxOpenLogsLimit = 1 << 24

// OpenLogs is a cap on replica logs, 1 to MaxOpenLogsLimit; 0 means the
// default derived from the process's open-file limit.
type OpenLogs int

// Decode parses a decimal count.
func (o *OpenLogs) Decode(s string) error {
	n, err := parseDecimal(s, 0, MaxOpenLogsLimit)
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a decimal count from 1 to " + strconv.Itoa(MaxOpenLogsLimit) + ", or 0 for three quarters of the open-file limit", Err: err}
	}
	*o = OpenLogs(n)
	return nil
}

// parseDecimal accepts only the digits 0-9 (leading zeros allowed, so "010"
// is ten) and a value within [lo, hi]. Signs, spaces, base prefixes,
// underscores and exponents are refused.
func parseDecimal(s string, lo, hi int) (int, error) {
	if s == "" {
		return 0, strconv.ErrSyntax
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, &strconv.NumError{Func: "parseDecimal", Num: s, Err: strconv.ErrSyntax}
		}
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, err
	}
	if n < uint64(lo) || n > uint64(hi) {
		return 0, &strconv.NumError{Func: "parseDecimal", Num: s, Err: strconv.ErrRange}
	}
	return int(n), nil
}

// LogLevel is the configured log level. It satisfies slog.Leveler, so it
// can be handed to a slog handler as it is.
type LogLevel slog.Level

// Level returns the slog level.
func (l LogLevel) Level() slog.Level { return slog.Level(l) }

// String returns the level's configuration name, e.g. "WARNING".
func (l LogLevel) String() string { return levelName(slog.Level(l)) }

// Decode accepts DEBUG, INFO, WARNING, WARN, ERROR and CRITICAL in any case.
func (l *LogLevel) Decode(s string) error {
	level, ok := parseLevel(s)
	if !ok {
		return &ConfigError{Value: s, Allowed: "DEBUG, INFO, WARNING (or WARN), ERROR or CRITICAL, in any case"}
	}
	*l = LogLevel(level)
	return nil
}

// LogFormat is the format of log lines: FormatText or FormatJSON.
type LogFormat string

// The log formats.
const (
	// FormatText writes key=value lines (slog.TextHandler).
	FormatText LogFormat = "text"
	// FormatJSON writes one JSON object per line (slog.JSONHandler).
	FormatJSON LogFormat = "json"
)

// Decode accepts "text" and "json" in any case.
func (f *LogFormat) Decode(s string) error {
	switch LogFormat(strings.ToLower(s)) {
	case FormatText:
		*f = FormatText
	case FormatJSON:
		*f = FormatJSON
	default:
		return &ConfigError{Value: s, Allowed: "text or json"}
	}
	return nil
}

// Bounds and default of PYSTREAM_FAILOVER_AFTER.
const (
	// DefaultFailoverAfter is how long a leader may be unavailable before
	// the controller fails its partitions over, when nothing is set.
	DefaultFailoverAfter = 3 * time.Second
	// MaxFailoverAfter is the longest delay accepted.
	MaxFailoverAfter = time.Hour
)

// FailoverDelay is PYSTREAM_FAILOVER_AFTER: a duration from 0 (never fail
// over on its own) to MaxFailoverAfter.
type FailoverDelay time.Duration

// Duration returns the delay as a time.Duration.
func (d FailoverDelay) Duration() time.Duration { return time.Duration(d) }

// String returns the delay as time.Duration prints it, e.g. "3s".
func (d FailoverDelay) String() string { return time.Duration(d).String() }

// Decode accepts a Go duration ("3s", "500ms", "1m30s") or "0", from 0 to
// MaxFailoverAfter. A number without a unit other than 0 is refused: "3"
// could mean seconds or milliseconds.
func (d *FailoverDelay) Decode(s string) error {
	v, err := time.ParseDuration(s)
	if err == nil && (v < 0 || v > MaxFailoverAfter) {
		err = &strconv.NumError{Func: "ParseDuration", Num: s, Err: strconv.ErrRange}
	}
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a duration such as 3s or 500ms, from 0 (never) to 1h", Err: err}
	}
	*d = FailoverDelay(v)
	return nil
}

// CheckInterval is PYSTREAM_RETENTION_CHECK_INTERVAL: how often the
// retention pass runs, from MinCheckInterval to 24h.
type CheckInterval time.Duration

// MinCheckInterval is the shortest retention check interval.
const MinCheckInterval = 100 * time.Millisecond

// Duration returns the interval as a time.Duration.
func (d CheckInterval) Duration() time.Duration { return time.Duration(d) }

// String returns the interval as time.Duration prints it, without its
// zero tail: "5m" rather than "5m0s", "1h" rather than "1h0m0s".
func (d CheckInterval) String() string {
	s := time.Duration(d).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Decode accepts a Go duration ("5m", "30s") from 100ms to 24h.
func (d *CheckInterval) Decode(s string) error {
	v, err := time.ParseDuration(s)
	if err == nil && (v < MinCheckInterval || v > 24*time.Hour) {
		err = &strconv.NumError{Func: "ParseDuration", Num: s, Err: strconv.ErrRange}
	}
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a duration such as 5m or 30s, from 100ms to 24h", Err: err}
	}
	*d = CheckInterval(v)
	return nil
}

// GroupTimeout is PYSTREAM_GROUP_SESSION_TIMEOUT and
// PYSTREAM_GROUP_HEARTBEAT_INTERVAL: a duration from MinGroupTimeout to an
// hour. Kafka's own minimums (45 s and 5 s) are not kept: tests and demos
// run with timeouts of a second or less.
type GroupTimeout time.Duration

// MinGroupTimeout is the shortest group timeout accepted.
const MinGroupTimeout = 10 * time.Millisecond

// Duration returns the timeout as a time.Duration.
func (d GroupTimeout) Duration() time.Duration { return time.Duration(d) }

// String returns the timeout as time.Duration prints it, e.g. "45s".
func (d GroupTimeout) String() string { return time.Duration(d).String() }

// Decode accepts a Go duration ("45s", "500ms") from 10ms to 1h.
func (d *GroupTimeout) Decode(s string) error {
	v, err := time.ParseDuration(s)
	if err == nil && (v < MinGroupTimeout || v > time.Hour) {
		err = &strconv.NumError{Func: "ParseDuration", Num: s, Err: strconv.ErrRange}
	}
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a duration such as 45s or 500ms, from 10ms to 1h", Err: err}
	}
	*d = GroupTimeout(v)
	return nil
}

// Switch is an on/off setting.
type Switch bool

// String returns "on" or "off".
func (s Switch) String() string {
	if s {
		return "on"
	}
	return "off"
}

// Decode accepts on/off, true/false, yes/no and 1/0, in any case.
func (s *Switch) Decode(v string) error {
	switch strings.ToLower(v) {
	case "on", "true", "yes", "1":
		*s = true
	case "off", "false", "no", "0":
		*s = false
	default:
		return &ConfigError{Value: v, Allowed: "on or off"}
	}
	return nil
}

// The four topic defaults decode with the topic layer's rule for their
// key (topic.ParseConfigValue), so that a value the server accepts as a
// default is exactly one a topic could set.
type (
	// TopicRetentionMs is PYSTREAM_RETENTION_MS (retention.ms).
	TopicRetentionMs int64
	// TopicRetentionBytes is PYSTREAM_RETENTION_BYTES (retention.bytes).
	TopicRetentionBytes int64
	// TopicSegmentBytes is PYSTREAM_SEGMENT_BYTES (segment.bytes).
	TopicSegmentBytes int64
	// TopicSegmentMs is PYSTREAM_SEGMENT_MS (segment.ms).
	TopicSegmentMs int64
)

// Decode parses a retention.ms value.
func (v *TopicRetentionMs) Decode(s string) error {
	return decodeTopicValue((*int64)(v), topic.RetentionMsKey, s)
}

// Decode parses a retention.bytes value.
func (v *TopicRetentionBytes) Decode(s string) error {
	return decodeTopicValue((*int64)(v), topic.RetentionBytesKey, s)
}

// Decode parses a segment.bytes value.
func (v *TopicSegmentBytes) Decode(s string) error {
	return decodeTopicValue((*int64)(v), topic.SegmentBytesKey, s)
}

// Decode parses a segment.ms value.
func (v *TopicSegmentMs) Decode(s string) error {
	return decodeTopicValue((*int64)(v), topic.SegmentMsKey, s)
}

func decodeTopicValue(v *int64, key, s string) error {
	canonical, err := topic.ParseConfigValue(key, s)
	var n int64
	if err == nil {
		n, err = topic.ConfigInt(key, canonical)
	}
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a decimal integer, " + topic.ConfigAllowed(key) + " (the topic setting " + key + ")", Err: err}
	}
	*v = n
	return nil
}

// OriginList is PYSTREAM_ALLOWED_ORIGINS: browser origins, each
// scheme://host[:port] in lower case, http or https, no path.
type OriginList []string

// Decode reads a comma-separated list of origins.
func (l *OriginList) Decode(s string) error {
	var out OriginList
	for _, o := range strings.Split(s, ",") {
		o = strings.TrimSpace(o)
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return &ConfigError{Value: s, Allowed: "comma-separated origins such as https://app.example.com or http://localhost:3000 (scheme, host and port; no path)"}
		}
		out = append(out, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	*l = out
	return nil
}

// HostList is PYSTREAM_ALLOWED_HOSTS: host names (without port) the Host
// header may carry, in lower case; "*" allows any.
type HostList []string

// Decode reads a comma-separated list of host names.
func (l *HostList) Decode(s string) error {
	var out HostList
	for _, h := range strings.Split(s, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "*" && !syntax.ValidHost(h) {
			return &ConfigError{Value: s, Allowed: "comma-separated host names such as pystream.internal (no port), or *"}
		}
		out = append(out, h)
	}
	*l = out
	return nil
}

// Bounds and defaults of the limits' settings.
const (
	// DefaultMaxRequestRecords is PYSTREAM_MAX_REQUEST_RECORDS when unset.
	DefaultMaxRequestRecords = httpapi.DefaultMaxRequestRecords
	// MaxRequestRecordsLimit is the largest PYSTREAM_MAX_REQUEST_RECORDS.
	MaxRequestRecordsLimit = httpapi.MaxRequestRecordsLimit

	// DefaultMaxInflightBytes is PYSTREAM_MAX_INFLIGHT_BYTES when unset.
	DefaultMaxInflightBytes = httpapi.DefaultMaxInflightBytes
	// MinInflightBytes and MaxInflightBytesLimit bound it.
	MinInflightBytes      = httpapi.MinInflightBytes
	MaxInflightBytesLimit = httpapi.MaxInflightBytesLimit

	// MaxFetchBytes is PYSTREAM_FETCH_MAX_BYTES when unset.
	MaxFetchBytes = httpapi.MaxFetchBytes
	// DefaultFetchMaxBytes is a fetch's max_bytes when the request gives
	// none (never above the server's cap).
	DefaultFetchMaxBytes = httpapi.DefaultFetchMaxBytes
	// MinFetchMaxBytes and MaxFetchMaxBytesLimit bound
	// PYSTREAM_FETCH_MAX_BYTES, whose default is MaxFetchBytes.
	MinFetchMaxBytes      = httpapi.MinFetchMaxBytes
	MaxFetchMaxBytesLimit = httpapi.MaxFetchMaxBytesLimit
)

// RecordCount is PYSTREAM_MAX_REQUEST_RECORDS: 1 to MaxRequestRecordsLimit.
type RecordCount int

// Decode parses a decimal record count.
func (c *RecordCount) Decode(s string) error {
	n, err := parseDecimal(s, 1, MaxRequestRecordsLimit)
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a decimal integer from 1 to " + strconv.Itoa(MaxRequestRecordsLimit), Err: err}
	}
	*c = RecordCount(n)
	return nil
}

// InflightBytes is PYSTREAM_MAX_INFLIGHT_BYTES: MinInflightBytes to
// MaxInflightBytesLimit.
type InflightBytes int64

// Decode parses a decimal byte count.
func (b *InflightBytes) Decode(s string) error {
	n, err := parseDecimal(s, MinInflightBytes, MaxInflightBytesLimit)
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a decimal number of bytes from " + strconv.Itoa(MinInflightBytes) + " to " + strconv.Itoa(MaxInflightBytesLimit), Err: err}
	}
	*b = InflightBytes(n)
	return nil
}

// FetchBytes is PYSTREAM_FETCH_MAX_BYTES: MinFetchMaxBytes to
// MaxFetchMaxBytesLimit.
type FetchBytes int

// Decode parses a decimal byte count.
func (b *FetchBytes) Decode(s string) error {
	n, err := parseDecimal(s, MinFetchMaxBytes, MaxFetchMaxBytesLimit)
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a decimal number of bytes from " + strconv.Itoa(MinFetchMaxBytes) + " to " + strconv.Itoa(MaxFetchMaxBytesLimit), Err: err}
	}
	*b = FetchBytes(n)
	return nil
}

// SyncMode is how a server's replica logs make their appends durable
// (PYSTREAM_SHARED_SYNC): through each broker's commit journal, one shared
// sync of the file system, or each log's own fsync. Nothing is
// acknowledged before it is durable on every active replica, whichever.
type SyncMode string

// The sync modes.
const (
	// SyncJournal has each broker append its replicas' writes to one
	// commit journal and fsync it once for every append in flight
	// (docs/design.md § The commit journal): the default.
	SyncJournal SyncMode = "journal"
	// SyncFileSystem has every append in flight share one sync of the
	// whole file system (docs/design.md § One sync for many partitions).
	SyncFileSystem SyncMode = "syncfs"
	// SyncOwnFile has each log fsync its own file, as phase 1's log does.
	SyncOwnFile SyncMode = "off"
)

// String returns the mode's name.
func (m SyncMode) String() string { return string(m) }

// Decode accepts journal (or on, true, yes, 1, the journal being what
// "on" has meant since it became the default), syncfs, and off (or false,
// no, 0), in any case.
func (m *SyncMode) Decode(v string) error {
	switch strings.ToLower(v) {
	case "journal", "on", "true", "yes", "1":
		*m = SyncJournal
	case "syncfs":
		*m = SyncFileSystem
	case "off", "false", "no", "0":
		*m = SyncOwnFile
	default:
		return &ConfigError{Value: v, Allowed: "journal, syncfs or off"}
	}
	return nil
}
