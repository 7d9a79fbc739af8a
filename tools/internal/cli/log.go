package cli

import "github.com/spf13/cobra"

// logCommand groups the file tools that work on log files and data
// directories directly, with no server.
func (a *app) logCommand() *cobra.Command {
	cmd := groupCommand("log", "Inspect, verify and repair log files directly (no server)")
	cmd.AddCommand(a.logDumpCommand(), a.logVerifyCommand(), a.logRepairCommand())
	return cmd
}
