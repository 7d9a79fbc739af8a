// Package faultnet is a TCP proxy that a test puts between two PyStream
// nodes to break the network between them the two ways networks break: a
// link cut so that connections close (a crashed host, a reset), and a
// link that holds bytes without closing anything (a pulled cable, a
// firewall that drops packets, a paused peer's socket buffers filling).
//
// A node reaches another through a Link when its PYSTREAM_INTERNAL_ROUTES
// sends that node's internal address to the Link's address. The process
// tests of pystream-server and the chaos suite both use it,
// so that a fault means the same thing in each.
//
// A closing cut is seen at once by both ends: reads return EOF or a reset,
// dials are refused. A held link is seen by nothing: a write succeeds
// until the socket buffers fill, a read waits, a dial succeeds and its
// first read waits. Only a deadline notices it, which is why every
// connection between PyStream nodes has one (docs/phase-7-processes.md).
// Healed, a held link delivers what it held, as TCP would
// once its retransmissions got through.
package faultnet
