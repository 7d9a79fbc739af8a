// Package server is PyStream's server: phase 0, the foundation every later
// phase plugs into, and the wiring that serves the library modules over
// the network (the HTTP API from phase 6, the Kafka listener, cluster mode
// from phase 7).
//
// # Configuration
//
// Config is read from PYSTREAM_* environment variables with envconfig, and
// from a .env file in the working directory when there is one; a variable
// in the real environment wins over the file. Load applies the rules and
// avoids envconfig's traps, each pinned by a test:
//
//   - multi-word fields are tagged split_words, so PYSTREAM_LOG_LEVEL is
//     read (envconfig alone would look for PYSTREAM_LOGLEVEL);
//   - no field has an envconfig:"NAME" tag, which would make envconfig fall
//     back to unprefixed HOST or PORT;
//   - integers are decimal and range-checked by our own Decode methods
//     (envconfig parses in base 0, where 010 is 8, and checks no range);
//   - an empty value counts as unset, so the default applies (envconfig
//     would store "" and an empty host means every interface);
//   - a PYSTREAM_* variable that nothing reads is returned so the binary
//     can warn about it, with the name it probably means.
//
// A rejected value is a *ConfigError naming the variable and what it
// allows; Usage prints the table of every variable.
//
// # Logging
//
// NewLogger is the only logging setup: log/slog, text lines on stderr (or
// JSON with PYSTREAM_LOG_FORMAT=json), the threshold from
// PYSTREAM_LOG_LEVEL, and the level names DEBUG, INFO, WARNING, ERROR and
// CRITICAL printed as configured (slog alone would print CRITICAL as
// "ERROR+4"). The HTTP API logs each request with method, path, status and
// duration. Library modules never log; they return errors and the server
// decides what to say.
//
// # The pieces, and the wiring
//
// This package is wiring: it reads the configuration, sets up logging,
// takes the data directory's lock, keeps the metrics registry, and builds
// the pieces that do the work, none of which imports it:
//
//   - the cluster, as the narrow interfaces of server/backend: the embedded
//     cluster of logical brokers (backend.Local) or, in cluster mode
//     (PYSTREAM_NODE_ID), this process's node of a cluster of processes
//     (server/nodebackend over server/clusternode). What differs between
//     the modes is chosen here, once, by which implementation is passed;
//   - the protocols over it: the HTTP API (server/httpapi, with the
//     explorer of server/explorer) and the Kafka listener (server/kafka).
//     They share the consumer groups (server/group; groups.go decides which
//     node coordinates them) and one "partition advanced" event
//     (backend.Hub), which the cluster feeds each time a high watermark
//     rises and which wakes a Kafka fetch waiting for records and the
//     explorer's stream, whichever protocol wrote;
//   - the scrape-time gauges of server/clustermetrics, the fsync timings
//     of metrics_fs.go, the retention loop (retention.go).
//
// Serve serves the HTTP API, with TLS when configured (tls.go), and the
// Kafka listener beside it; Close closes them all in order.
//
// # The controller
//
// New starts a controller (package server/controller) over the cluster: a
// loop that runs cluster.Plan on a tick and whenever a broker stops or
// starts or a write fails, and carries out its actions — catch-up, shrink of
// the active set, failover after PYSTREAM_FAILOVER_AFTER, recovery, and the
// move of leadership back to the preferred replica
// (PYSTREAM_LEADER_REBALANCE). GET /api/ready asks it whether every
// partition can be served. With PYSTREAM_FAILOVER_AFTER=0 it changes no
// metadata (phase 5's manual mode). See docs/design.md § The controller.
//
// # Security
//
// Without an auth file (PYSTREAM_AUTH_FILE) every route is open, so the
// server refuses to bind anything but a loopback address unless
// PYSTREAM_INSECURE says the operator means it (exposure.go); the HTTP API
// checks the tokens and roles, the browser rules and the limits. See
// docs/security.md.
//
// # Lifecycle
//
// Main is the pystream-server command. It binds the address before it
// creates anything, opens the data directory, logs one start-up line (the
// address, Version, the data directory and the broker count), serves, and
// when its context is cancelled (SIGINT or SIGTERM in
// the binary) stops accepting connections, lets in-flight requests finish
// (up to ShutdownTimeout) and returns 0. Invalid configuration returns 2
// after the message and the usage table; a listen failure such as an
// address in use returns 1.
//
// # Adding an endpoint
//
// Endpoints are the HTTP API's: see server/httpapi.
package server
