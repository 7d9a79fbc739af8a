// Package tools is the home of pystream, the command-line tool of PyStream
// (cmd/pystream). It is not a library; import nothing from it.
//
// The tool has two halves. File tools work on a data directory directly and
// need no server:
//
//	pystream log dump PATH [--print-data]   every record of a log, one per line
//	pystream log verify PATH                check a log, topic, broker or data directory
//	pystream log repair PATH [--yes]        cut a torn tail, keeping a backup
//	pystream bench log                      durable append throughput and latency
//
// A partition's log is a directory of segment files (package log/segment):
// 00000000000000000000.log, then one per roll, each named by its first
// offset. The tools take such a directory as one log, a single segment
// file (offsets from its name), a directory or file written before segments
// (phase 1's log.bin) and a quarantine file. They are built on the
// read-only scanners (segment.ScanDir over a directory, log.ScanFileFrom
// over one file) and the explicit repair (log.RepairWithOptions, from the
// segment's base), so they see a log exactly as the server does when it
// opens one: the same frames, the same offsets, the same verdict on damage.
// Only the last segment of a directory can have a torn tail; damage in any
// other is never cut. Nothing but `log repair` ever writes, and repair
// refuses while a server holds the data directory's lock.
//
// Client commands talk to a running server over its HTTP API, through the
// server module's Go client (server/apiclient), whose wire types the server
// shares:
//
//	pystream topic create|list|describe        topics and partition state
//	pystream produce TOPIC [-k KEY|-K DELIM]   one record per stdin line
//	pystream consume TOPIC -p P [-o ...] ...   print, follow, commit
//	pystream offsets describe|reset            committed offsets and lag
//	pystream cluster status, broker stop|start
//	pystream partition failover|recover|catch-up
//	pystream bench produce|consume             HTTP throughput and latency
//
// Internal packages: internal/cli (the commands), internal/verify (the
// read-only checks behind log verify), internal/perfstat (the latency
// figures every benchmark prints in the kafka-producer-perf-test shape).
// See docs/cli.md for every command with an example session.
//
// The module also holds PyStream's chaos suite: package chaos (a real
// cluster, random faults, a checker over everything the clients saw) and
// its command, cmd/pystream-chaos, which `make chaos` runs
// (docs/chaos.md).
package tools
