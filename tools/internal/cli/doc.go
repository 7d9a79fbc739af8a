// Package cli builds the pystream command tree on cobra and runs it.
//
// Layout, one concept per file:
//
//	root.go        the root command, persistent --server/--json, Run
//	errors.go      exit codes, UsageError and the sentinel errors
//	args.go        argument checks and command groups that fail with usage errors
//	version.go     pystream version
//	completion.go  pystream completion bash|zsh|fish
//	log.go         pystream log (group)
//	dump.go        pystream log dump     (dumpformat.go: the record line, pure)
//	verify.go      pystream log verify   (engine: internal/verify)
//	repair.go      pystream log repair   (lockfile.go, lock_*.go: the server's .lock)
//	bench.go       pystream bench (group)
//	benchlog.go    pystream bench log    (figures: internal/perfstat)
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
// Client commands come next. topic, produce, consume, offsets, cluster,
// broker, partition, bench produce and bench consume talk to a running
// server through the server module's Go client, using the --server URL
// (globals.server). They will live in files of their own beside these
// (topic.go, produce.go, ...) and be registered in NewRoot at the marked
// place, with bench produce/consume added in bench.go and reporting through
// perfstat like bench log. Until the client exists they are not registered
// at all, rather than stubbed.
package cli
