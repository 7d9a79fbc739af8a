package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/pystream/pystream/server/auth"
)

// Safe defaults (docs/security.md): without an auth file every route is
// open, so the server must not be reachable from other machines. A
// non-loopback PYSTREAM_HOST without PYSTREAM_AUTH_FILE is refused unless
// PYSTREAM_INSECURE says the operator means it, and then every start logs
// a warning.

// ErrExposed is the cause of an *ExposedError.
var ErrExposed = errors.New("server: non-loopback address without authentication")

// ExposedError is a configuration that would serve a port on an address
// other machines reach without authentication, or with tokens that cross
// the network in clear.
type ExposedError struct {
	// Host is the configured PYSTREAM_HOST.
	Host string
	// Cleartext is set when the auth file is set but TLS is not: the HTTP
	// API's bearer tokens (and, with KafkaPort, the Kafka clients' SASL
	// tokens and every record) would be readable on the path.
	Cleartext bool
	// KafkaPort is the Kafka listener's port when it is open.
	KafkaPort int
}

func (e *ExposedError) Error() string {
	if e.Cleartext {
		ports := "the HTTP API's bearer tokens"
		if e.KafkaPort != 0 {
			ports = fmt.Sprintf("the HTTP API's bearer tokens, and the Kafka listener's (PYSTREAM_KAFKA_PORT=%d) SASL tokens and records,", e.KafkaPort)
		}
		return fmt.Sprintf("PYSTREAM_HOST=%s is not a loopback address and TLS is off: %s would cross the network in clear. "+
			"Set PYSTREAM_TLS_CERT and PYSTREAM_TLS_KEY (docs/security.md), bind 127.0.0.1, "+
			"or set PYSTREAM_INSECURE=true to serve it anyway", e.Host, ports)
	}
	return fmt.Sprintf("PYSTREAM_HOST=%s is not a loopback address and PYSTREAM_AUTH_FILE is not set: "+
		"anyone who reaches the port could stop brokers, fail partitions over and delete topics. "+
		"Set PYSTREAM_AUTH_FILE to a file of tokens (docs/security.md), bind 127.0.0.1, "+
		"or set PYSTREAM_INSECURE=true to serve without authentication anyway", e.Host)
}

// Unwrap returns ErrExposed.
func (e *ExposedError) Unwrap() error { return ErrExposed }

// isLoopbackHost reports whether the bind address host keeps the server
// on this machine: 127.0.0.0/8, ::1 or localhost.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkExposure is the safe-defaults rule for the client ports (HTTP and
// Kafka), a pure function of the configuration: nil or an *ExposedError.
// Off loopback, every client authenticates (the auth file: bearer tokens
// over HTTP, SASL over Kafka) and does so over TLS, so that no token
// crosses the network in clear. The internal port has its own rule
// (checkInternalExposure).
func checkExposure(cfg Config) error {
	if bool(cfg.Insecure) || isLoopbackHost(cfg.Host) {
		return nil
	}
	if cfg.AuthFile == "" {
		return &ExposedError{Host: cfg.Host}
	}
	if !cfg.TLSEnabled() {
		return &ExposedError{Host: cfg.Host, Cleartext: true, KafkaPort: int(cfg.KafkaPort)}
	}
	return nil
}

// logExposure says at start-up how the server is protected: a WARNING
// when it serves a non-loopback address without authentication.
func logExposure(logger *slog.Logger, cfg Config, tokens int) {
	authenticated, encrypted := cfg.AuthFile != "", cfg.TLSEnabled()
	switch {
	case authenticated:
		logger.Info("http port: every route but health, readiness and docs needs a bearer token",
			"addr", cfg.Addr(), "authenticated", true, "encrypted", encrypted, "auth_file", cfg.AuthFile, "tokens", tokens)
	case isLoopbackHost(cfg.Host):
		logger.Info("http port: no auth file, so every route is open to this machine's users; loopback only",
			"addr", cfg.Addr(), "authenticated", false, "encrypted", encrypted)
	default:
		logger.Warn("INSECURE: PYSTREAM_INSECURE=true serves a non-loopback address without authentication; "+
			"anyone who reaches the port can stop brokers, fail partitions over, reset offsets and delete topics. "+
			"Set PYSTREAM_AUTH_FILE (docs/security.md)", "addr", cfg.Addr(), "authenticated", false, "encrypted", encrypted)
	}
	if authenticated && !encrypted && !isLoopbackHost(cfg.Host) {
		logger.Warn("INSECURE: PYSTREAM_INSECURE=true serves bearer tokens over a non-loopback address without TLS; "+
			"they cross the network in clear. Set PYSTREAM_TLS_CERT and PYSTREAM_TLS_KEY (docs/security.md)", "addr", cfg.Addr())
	}
	if cfg.KafkaPort != 0 {
		logger.Info("kafka port", "kafka_port", int(cfg.KafkaPort), "authenticated", authenticated, "encrypted", encrypted,
			"security_protocol", kafkaSecurityProtocol(authenticated, encrypted))
		switch {
		case isLoopbackHost(cfg.Host):
		case !authenticated:
			logger.Warn("INSECURE: the Kafka listener serves a non-loopback address without authentication; "+
				"anyone who reaches it can read and write every topic. Set PYSTREAM_AUTH_FILE, or PYSTREAM_KAFKA_PORT=0 to close it (docs/kafka.md)",
				"host", cfg.Host, "kafka_port", int(cfg.KafkaPort))
		case !encrypted:
			logger.Warn("INSECURE: the Kafka listener serves a non-loopback address without TLS; "+
				"SASL/PLAIN tokens and records cross the network in clear. Set PYSTREAM_TLS_CERT and PYSTREAM_TLS_KEY (docs/kafka.md)",
				"host", cfg.Host, "kafka_port", int(cfg.KafkaPort))
		}
	}
}

// kafkaSecurityProtocol is the client setting (security.protocol) that
// matches the Kafka port.
func kafkaSecurityProtocol(authenticated, encrypted bool) string {
	switch {
	case authenticated && encrypted:
		return "SASL_SSL"
	case authenticated:
		return "SASL_PLAINTEXT"
	case encrypted:
		return "SSL"
	}
	return "PLAINTEXT"
}

// checkSecurity is what Main checks before it binds: the safe-defaults
// rule, and that the auth file, if any, reads and parses. New checks both
// again (it is what embedders call).
func checkSecurity(cfg Config) error {
	if err := checkExposure(cfg); err != nil {
		return err
	}
	if _, err := checkInternal(cfg); err != nil {
		return err
	}
	if cfg.AuthFile != "" {
		if _, err := auth.LoadFile(cfg.AuthFile); err != nil {
			return err
		}
	}
	return nil
}

// loadAuth applies the safe-defaults rule, reads the auth file, if any,
// and logs how the server is protected: the tokens the HTTP API accepts,
// nil without an auth file (every route open, on a loopback address
// only).
func (s *Server) loadAuth() ([]auth.Token, error) {
	if err := checkExposure(s.cfg); err != nil {
		return nil, err
	}
	if err := s.loadInternal(); err != nil {
		return nil, err
	}
	var tokens []auth.Token
	if s.cfg.AuthFile != "" {
		var err error
		if tokens, err = auth.LoadFile(s.cfg.AuthFile); err != nil {
			return nil, err
		}
	}
	logExposure(s.logger, s.cfg, len(tokens))
	return tokens, nil
}
