package cli

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pystream/pystream/server/auth"
)

// authCommand is "pystream auth": helpers for the server's auth file
// (PYSTREAM_AUTH_FILE, docs/security.md). They need no server.
func (a *app) authCommand() *cobra.Command {
	cmd := groupCommand("auth", "Make tokens and the hashes of the server's auth file")
	cmd.AddCommand(a.authHashCommand(), a.authNewCommand(), a.authSCRAMCommand())
	return cmd
}

// tokenHash is the auth file's hash field of token (server/auth's one
// definition).
func tokenHash(token string) string { return auth.HashToken(token) }

// readToken reads one token from stdin, for the subcommand named what.
func (a *app) readToken(what string) (string, error) {
	line, err := bufio.NewReader(a.env.Stdin).ReadString('\n')
	token := strings.TrimRight(line, "\r\n")
	if token == "" {
		if err != nil && line == "" {
			return "", usageErrorf("auth %s: no token on stdin", what)
		}
		return "", usageErrorf("auth %s: empty token", what)
	}
	return token, nil
}

func (a *app) authHashCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "hash",
		Short: "Print the auth-file hash of the token read from stdin (one line)",
		Long: "Reads one token from stdin (so that it stays out of the shell's history and\n" +
			"of ps) and prints its hash as the auth file wants it: sha256:HEX.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			token, err := a.readToken("hash")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(a.env.Stdout, tokenHash(token))
			return err
		},
	}
}

func (a *app) authNewCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "new NAME ROLE [PREFIX,...]",
		Short: "Make a random token: the token on stderr, its auth-file line on stdout",
		Long: "Makes a token of 32 random bytes (64 hex digits). The token goes to stderr,\n" +
			"for you to hand to its user (PYSTREAM_TOKEN); the auth-file line goes to\n" +
			"stdout, so that `pystream auth new ops admin >> tokens` appends it.\n" +
			"ROLE is admin, write or read.",
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[1] {
			case "admin", "write", "read":
			default:
				return usageErrorf("auth new: role %q: want admin, write or read", args[1])
			}
			var b [32]byte
			if _, err := rand.Read(b[:]); err != nil {
				return err
			}
			token := hex.EncodeToString(b[:])
			line := args[0] + " " + args[1] + " " + tokenHash(token)
			if len(args) == 3 {
				line += " " + args[2]
			}
			fmt.Fprintf(a.env.Stderr, "token for %s (shown once): %s\n", args[0], token)
			_, err := fmt.Fprintln(a.env.Stdout, line)
			return err
		},
	}
}

func (a *app) authSCRAMCommand() *cobra.Command {
	var mechanisms []string
	var iterations int
	cmd := &cobra.Command{
		Use:   "scram NAME ROLE [PREFIX,...]",
		Short: "Print the auth-file SCRAM lines of the token read from stdin, for Kafka clients",
		Long: "Reads one token from stdin and prints, for each mechanism, the auth-file line\n" +
			"of its SCRAM credential (a fresh random salt; the token cannot be recovered\n" +
			"from it): NAME ROLE scram-sha-256:ITERATIONS:SALT:STOREDKEY:SERVERKEY [PREFIX,...].\n" +
			"Kafka clients then authenticate as NAME with SASL/SCRAM and the token as the\n" +
			"password. A name's lines (its sha256 one included) must agree on role and\n" +
			"prefixes. ROLE is admin, write or read.",
		Args: rangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[1] {
			case "admin", "write", "read":
			default:
				return usageErrorf("auth scram: role %q: want admin, write or read", args[1])
			}
			var ms []auth.SCRAMMechanism
			for _, name := range mechanisms {
				m, ok := auth.ParseSCRAMMechanism(name)
				if !ok {
					return usageErrorf("auth scram: mechanism %q: want SCRAM-SHA-256 or SCRAM-SHA-512", name)
				}
				ms = append(ms, m)
			}
			if iterations < auth.MinSCRAMIterations || iterations > auth.MaxSCRAMIterations {
				return usageErrorf("auth scram: --iterations %d: want %d to %d", iterations, auth.MinSCRAMIterations, auth.MaxSCRAMIterations)
			}
			token, err := a.readToken("scram")
			if err != nil {
				return err
			}
			for _, m := range ms {
				c, err := auth.NewSCRAMCredential(m, args[0], token, iterations)
				if err != nil {
					return err
				}
				line := args[0] + " " + args[1] + " " + c.String()
				if len(args) == 3 {
					line += " " + args[2]
				}
				if _, err := fmt.Fprintln(a.env.Stdout, line); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&mechanisms, "mechanism", []string{auth.MechanismSCRAMSHA256, auth.MechanismSCRAMSHA512},
		"SCRAM mechanisms to make a line for (SCRAM-SHA-256, SCRAM-SHA-512)")
	cmd.Flags().IntVar(&iterations, "iterations", auth.DefaultSCRAMIterations, "PBKDF2 iterations of the credential")
	return cmd
}
