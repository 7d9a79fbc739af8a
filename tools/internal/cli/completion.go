package cli

import (
	"github.com/spf13/cobra"
)

// completionShells are the shells `pystream completion` writes scripts for.
var completionShells = []string{"bash", "zsh", "fish"}

func (a *app) completionCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print a shell completion script",
		Long: "Print a completion script for the given shell. For example:\n\n" +
			"  source <(pystream completion bash)\n" +
			"  pystream completion zsh > \"${fpath[1]}/_pystream\"\n" +
			"  pystream completion fish > ~/.config/fish/completions/pystream.fish",
		ValidArgs: completionShells,
		Args:      exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			out := a.env.Stdout
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			}
			return usageErrorf("unknown shell %q; choose bash, zsh or fish", args[0])
		},
	}
}
