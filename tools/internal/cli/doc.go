// Package cli builds the pystream command tree on cobra and runs it.
//
// Layout, one concept per file:
//
//	root.go        the root command, persistent --server/--json, Run
//	errors.go      exit codes, UsageError and the sentinel errors
//	args.go        argument checks and command groups that fail with usage errors
//	version.go     pystream version
//	completion.go  pystream completion bash|zsh|fish; topics, partitions and
//	               broker ids completed from the server
//	log.go         pystream log (group)
//	dump.go        pystream log dump     (dumpformat.go: the record line, pure)
//	verify.go      pystream log verify   (engine: internal/verify)
//	repair.go      pystream log repair   (lockfile.go: the server's .lock, via server/datalock)
//	bench.go       pystream bench (group)
//	benchlog.go    pystream bench log    (figures: internal/perfstat)
//
// Client commands, over the server module's apiclient at --server:
//
//	client.go      the API client for --server; ServerError, UnreachableError
//	table.go       aligned text tables
//	topic.go       pystream topic create|list|describe
//	produce.go     pystream produce      (stdin lines, batching, -k/-K)
//	produceoutcome.go  which lines a failed produce acknowledged, in words (pure)
//	consume.go     pystream consume      (every partition or -p, following,
//	               --commit-as per partition, Ctrl-C)
//	offsetspec.go  consume -o: start|end|committed|N|-N|+N (pure)
//	format.go      consume -f and the default JSON line (pure)
//	offsets.go     pystream offsets describe|reset
//	cluster.go     pystream cluster status, broker stop|start,
//	               partition failover|recover|catch-up|move-leader
//	journal.go     pystream cluster journal [-f]
//	benchserver.go pystream bench produce|consume
//
// Exit codes are a contract: 0 when the command did what was asked, 1 for an
// operational error or a check that found problems, 2 for a usage error.
// Cobra reports unknown commands, bad flags and wrong argument counts as
// plain errors (and prints help with status 0 for an unknown subcommand of a
// group), so every command here checks its arguments with exactArgs or
// noArgs, groups are built by groupCommand, and the root's FlagErrorFunc
// wraps flag errors, all returning a *UsageError that ExitCode maps to 2.
// Cobra's own error and usage printing is silenced; Run prints one
// "pystream: ..." line to stderr. Data goes to stdout; errors, prompts and
// progress to stderr.
//
// Client commands print the server's message and code for an error answer
// (ServerError, exit 1) and a hint when nothing listens at --server
// (UnreachableError, exit 1). Their decisions (where consume starts, how a
// line becomes a record, what a reset plan holds, how a row looks) are pure
// functions tested without a server; the commands themselves are tested
// through the real binary against a real server in cmd/pystream.
package cli
