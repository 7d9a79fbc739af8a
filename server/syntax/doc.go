// Package syntax holds the few lexical rules PyStream's configuration
// (package server) and its HTTP API (server/httpapi) both apply, so that
// an address or a name is accepted or refused alike wherever it comes
// from: a host name or IP literal (ValidHost), a host:port (ValidAddr), a
// text without control characters (Printable); and how a client's value is
// quoted in an error or a log line, over HTTP as over Kafka (Quote, Clip).
// Each is a pure function of its argument.
package syntax
