package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// exactArgs is cobra.ExactArgs whose error is a usage error, naming the
// arguments the command expects.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%s takes %d argument(s), got %d (usage: %s)", cmd.CommandPath(), n, len(args), cmd.UseLine())
		}
		return nil
	}
}

// rangeArgs is cobra.RangeArgs whose error is a usage error.
func rangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return usageErrorf("%s takes %d to %d arguments, got %d (usage: %s)", cmd.CommandPath(), lo, hi, len(args), cmd.UseLine())
		}
		return nil
	}
}

// noArgs refuses every positional argument with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments, got %q", cmd.CommandPath(), args[0])
	}
	return nil
}

// groupCommand returns a command that only holds subcommands. Run alone it
// prints its help; run with anything else it reports an unknown command as a
// usage error (cobra would print help and exit 0, which hides typos from
// scripts).
func groupCommand(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			msg := "unknown command %q for %q"
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return usageErrorf(msg, args[0], cmd.CommandPath())
		},
	}
}

// flagError turns every flag-parsing error into a usage error.
func flagError(_ *cobra.Command, err error) error {
	return &UsageError{Err: err}
}
