package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// DefaultServer is the server the client commands talk to unless --server
// or PYSTREAM_SERVER says otherwise.
const DefaultServer = "http://127.0.0.1:8000"

// ServerEnv is the environment variable that sets the default server.
const ServerEnv = "PYSTREAM_SERVER"

// The environment variables of the TLS flags (tls.go).
const (
	// CAFileEnv sets --ca-file.
	CAFileEnv = "PYSTREAM_CA_FILE"
	// ClientCertEnv and ClientKeyEnv set --cert and --key.
	ClientCertEnv = "PYSTREAM_CLIENT_CERT"
	ClientKeyEnv  = "PYSTREAM_CLIENT_KEY"
)

// TokenEnv is the environment variable that holds the bearer token sent to
// a server with an auth file (docs/security.md). --token wins over it; the
// environment is the better place, since a flag shows in ps and in the
// shell's history.
const TokenEnv = "PYSTREAM_TOKEN"

// Env is everything a command reaches outside itself. Tests fill it with
// buffers; main fills it with the process's streams.
type Env struct {
	// Stdin, Stdout and Stderr are the streams. Data goes to Stdout, errors,
	// prompts and progress to Stderr.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Version is the build's version, set with -ldflags; "dev" if empty.
	Version string
	// Getenv reads an environment variable; nil means os.Getenv.
	Getenv func(string) string
	// IsTerminal reports whether a stream is a terminal; nil means a
	// character-device check on *os.File.
	IsTerminal func(any) bool
}

func (e *Env) withDefaults() {
	if e.Stdin == nil {
		e.Stdin = os.Stdin
	}
	if e.Stdout == nil {
		e.Stdout = os.Stdout
	}
	if e.Stderr == nil {
		e.Stderr = os.Stderr
	}
	if e.Version == "" {
		e.Version = "dev"
	}
	if e.Getenv == nil {
		e.Getenv = os.Getenv
	}
	if e.IsTerminal == nil {
		e.IsTerminal = isTerminal
	}
}

// globals are the persistent flags every command sees.
type globals struct {
	// server is the base URL of the PyStream server (client commands).
	server string
	// json asks for JSON output instead of text.
	json bool
	// caFile, certFile and keyFile are the PEM files of an https server's
	// CA and of the client certificate for mutual TLS.
	caFile, certFile, keyFile string
	// token is the bearer token (--token, or PYSTREAM_TOKEN).
	token string
}

// app is the state shared by the commands of one run.
type app struct {
	env Env
	g   globals
	// serverURL is --server as parsed by client(), for messages.
	serverURL string
}

// NewRoot builds the pystream command tree.
func NewRoot(env Env) *cobra.Command {
	env.withDefaults()
	a := &app{env: env}

	root := groupCommand("pystream", "Work with PyStream logs, topics and servers")
	root.Long = "pystream is the command-line tool of PyStream, a Kafka-inspired event log.\n\n" +
		"Client commands (topic, produce, consume, offsets, group, cluster, broker,\n" +
		"partition, bench produce|consume) talk to a running server at --server. File tools (log\n" +
		"dump, log verify, log repair, bench log) work on a data directory directly and\n" +
		"need no server. Exit codes: 0 ok, 1 operational error or problems\n" +
		"found, 2 usage error."
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetFlagErrorFunc(flagError)

	server := env.Getenv(ServerEnv)
	if server == "" {
		server = DefaultServer
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.g.server, "server", server, "PyStream server URL (env "+ServerEnv+")")
	pf.BoolVar(&a.g.json, "json", false, "print JSON instead of text")
	a.addTLSFlags(pf)
	pf.StringVar(&a.g.token, "token", "", "bearer token for a server with an auth file (env "+TokenEnv+", which ps cannot show)")
	setVersionFlag(root, env.Version)

	// Commands that need no server.
	root.AddCommand(
		a.versionCommand(),
		a.completionCommand(root),
		a.logCommand(),
		a.benchCommand(),
		a.authCommand(),
	)

	// Client commands: they talk to a running server through the server
	// module's apiclient, at --server.
	root.AddCommand(
		a.topicCommand(),
		a.produceCommand(),
		a.consumeCommand(),
		a.offsetsCommand(),
		a.groupCommand(),
		a.clusterCommand(),
		a.brokerCommand(),
		a.partitionCommand(),
	)
	// Shell completion of topic names, partitions and broker ids, asked of
	// the server (completion.go).
	a.addCompletions(root)

	return root
}

// Run executes pystream with args and returns the process exit code. Errors
// are printed to env.Stderr, with a hint for usage errors.
func Run(args []string, env Env) int {
	env.withDefaults()
	root := NewRoot(env)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "pystream: %v\n", err)
	code := ExitCode(err)
	if code == ExitUsage {
		fmt.Fprintf(env.Stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}
