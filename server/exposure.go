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

// ExposedError is a configuration that would serve every route, admin
// ones included, without a token on an address other machines reach.
type ExposedError struct {
	// Host is the configured PYSTREAM_HOST.
	Host string
	// KafkaPort is set when what would be exposed is the Kafka listener
	// without TLS: its clients authenticate with SASL (the auth file is
	// set), but SASL/PLAIN would carry their tokens in clear, and every
	// record would be readable on the path.
	KafkaPort int
}

func (e *ExposedError) Error() string {
	if e.KafkaPort != 0 {
		return fmt.Sprintf("PYSTREAM_HOST=%s is not a loopback address and the Kafka listener (PYSTREAM_KAFKA_PORT=%d) has no TLS: "+
			"its clients' tokens (SASL/PLAIN) and records would cross the network in clear. "+
			"Set PYSTREAM_TLS_CERT and PYSTREAM_TLS_KEY (the Kafka port then speaks SASL_SSL), set PYSTREAM_KAFKA_PORT=0, bind 127.0.0.1, "+
			"or set PYSTREAM_INSECURE=true to serve it anyway", e.Host, e.KafkaPort)
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

// checkExposure is the safe-defaults rule, a pure function of the
// configuration: nil or an *ExposedError.
func checkExposure(cfg Config) error {
	if bool(cfg.Insecure) || isLoopbackHost(cfg.Host) {
		return nil
	}
	if cfg.AuthFile == "" {
		return &ExposedError{Host: cfg.Host}
	}
	// The Kafka port: with the auth file every client authenticates with
	// SASL; off loopback it must also be encrypted, so that no token
	// crosses the network in clear.
	if cfg.KafkaPort != 0 && !cfg.TLSEnabled() {
		return &ExposedError{Host: cfg.Host, KafkaPort: int(cfg.KafkaPort)}
	}
	return nil
}

// logExposure says at start-up how the server is protected: a WARNING
// when it serves a non-loopback address without authentication.
func logExposure(logger *slog.Logger, cfg Config, tokens int) {
	switch {
	case cfg.AuthFile != "":
		logger.Info("authentication on: every HTTP route but health, readiness and docs needs a bearer token",
			"auth_file", cfg.AuthFile, "tokens", tokens)
	case !isLoopbackHost(cfg.Host):
		logger.Warn("INSECURE: PYSTREAM_INSECURE=true serves a non-loopback address without authentication; "+
			"anyone who reaches the port can stop brokers, fail partitions over, reset offsets and delete topics. "+
			"Set PYSTREAM_AUTH_FILE (docs/security.md)", "host", cfg.Host)
	}
	if cfg.KafkaPort != 0 {
		authenticated, encrypted := cfg.AuthFile != "", cfg.TLSEnabled()
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
