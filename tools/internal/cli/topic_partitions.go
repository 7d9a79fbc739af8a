package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) topicAddPartitionsCommand() *cobra.Command {
	var partitions int
	cmd := &cobra.Command{
		Use:   "add-partitions NAME --partitions N",
		Short: "Grow a topic to N partitions (keyed records route by the new count)",
		Long: "Grow a topic to N partitions, more than it has: the new partitions are placed\n" +
			"over the brokers as a creation places them and their replicas created before\n" +
			"the count changes. Records already written stay where they are; keyed records\n" +
			"sent from then on route by the new count (key hash mod partitions), so most\n" +
			"keys land on another partition than before. Partitions are never removed.\n" +
			"The topic's current count again succeeds and changes nothing.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if !cmd.Flags().Changed("partitions") {
				return usageErrorf("--partitions is required: the topic's new partition count")
			}
			if partitions < 1 {
				return usageErrorf("--partitions %d: must be at least 1", partitions)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			td, err := c.AddPartitions(cmd.Context(), name, partitions)
			if err != nil {
				return a.apiError("topic add-partitions "+name, err)
			}
			if a.g.json {
				return a.printJSON(td)
			}
			_, err = fmt.Fprintf(a.env.Stdout, "topic %s has %s (replication factor %d)\n",
				td.Name, plural(td.PartitionCount, "partition"), td.ReplicationFactor)
			return err
		},
	}
	cmd.Flags().IntVarP(&partitions, "partitions", "p", 0, "the topic's new partition count, more than it has")
	return cmd
}
