// Package tools is the home of pystream, the command-line tool of PyStream
// (cmd/pystream). It is not a library; import nothing from it.
//
// The tool has two halves. File tools work on a data directory directly and
// need no server:
//
//	pystream log dump FILE [--print-data]   every record of a log, one per line
//	pystream log verify PATH                check a log, topic, broker or data directory
//	pystream log repair FILE [--yes]        cut a torn tail, keeping a backup
//	pystream bench log                      durable append throughput and latency
//
// They are built on the log package's read-only scanner (log.ScanFile) and
// its explicit repair (log.Repair), so they see a file exactly as the log
// does when it opens one: the same frames, the same offsets, the same
// verdict on damage. Nothing but `log repair` ever writes, and repair
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
package tools
