package cli

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// authCommand is "pystream auth": helpers for the server's auth file
// (PYSTREAM_AUTH_FILE, docs/security.md). They need no server.
func (a *app) authCommand() *cobra.Command {
	cmd := groupCommand("auth", "Make tokens and the hashes of the server's auth file")
	cmd.AddCommand(a.authHashCommand(), a.authNewCommand())
	return cmd
}

// tokenHash is the auth file's hash field of token.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (a *app) authHashCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "hash",
		Short: "Print the auth-file hash of the token read from stdin (one line)",
		Long: "Reads one token from stdin (so that it stays out of the shell's history and\n" +
			"of ps) and prints its hash as the auth file wants it: sha256:HEX.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			line, err := bufio.NewReader(a.env.Stdin).ReadString('\n')
			token := strings.TrimRight(line, "\r\n")
			if token == "" {
				if err != nil && line == "" {
					return usageErrorf("auth hash: no token on stdin")
				}
				return usageErrorf("auth hash: empty token")
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
