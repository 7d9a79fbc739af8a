// Package kafkatest is test support for the Kafka listener's
// compatibility matrix (docs/kafka-admin.md § Clients tested): the
// kafka-python and confluent-kafka admin programs, the interpreter and
// kcat lookups that skip a test when a client is missing, and the matrix
// itself, each call a subtest asserting what it read back. The embedded
// cluster's test (server/kafka) and the cluster of processes' test
// (server/cmd/pystream-server) both run it, each describing its cluster
// in a Target. It is never linked into a program.
package kafkatest
