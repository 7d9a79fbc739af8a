package server

import (
	"log/slog"
	"strconv"
	"strings"
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

// MaxBrokers is the largest broker count the configuration accepts.
const MaxBrokers = 64

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
	MinRequestBytes = 1 << 10
	// MaxRequestBytesLimit is the largest body cap accepted: 1 GiB.
	MaxRequestBytesLimit = 1 << 30
	// DefaultMaxRequestBytes is the body cap when none is set: 1 MiB.
	DefaultMaxRequestBytes = 1 << 20
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
