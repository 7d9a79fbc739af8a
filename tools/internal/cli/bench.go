package cli

import "github.com/spf13/cobra"

// benchCommand groups the benchmarks. `bench log` drives the log library
// directly; `bench produce` and `bench consume` (against a running server)
// join it with the client commands and share package perfstat.
func (a *app) benchCommand() *cobra.Command {
	cmd := groupCommand("bench", "Measure durable throughput and latency")
	cmd.AddCommand(a.benchLogCommand(), a.benchProduceCommand(), a.benchConsumeCommand())
	return cmd
}
