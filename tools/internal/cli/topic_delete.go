package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) topicDeleteCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a topic with all its records and its consumer offsets (asks first)",
		Long: "Delete a topic: its records on every broker and every consumer's committed\n" +
			"offsets on it. Durable once it returns; a topic created again under the name\n" +
			"starts empty. There is no undo.\n\n" +
			"Asks for confirmation on stdin unless --yes. Without a terminal on stdin\n" +
			"(a script, a pipe) it refuses unless --yes is given.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.topicDelete(cmd.Context(), args[0], yes)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	return cmd
}

func (a *app) topicDelete(ctx context.Context, name string, yes bool) error {
	op := "topic delete " + name
	if !yes && !a.env.IsTerminal(a.env.Stdin) {
		return usageErrorf("%s: stdin is not a terminal, so there is no one to ask: pass --yes to delete the topic and all its records", op)
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	if !yes {
		// Say what would go before asking; an unknown topic fails here,
		// without a question.
		td, err := c.Topic(ctx, name)
		if err != nil {
			return a.apiError(op, err)
		}
		var records uint64
		for _, p := range td.Partitions {
			records += p.HighWatermark
		}
		fmt.Fprintf(a.env.Stderr, "topic %s: %s, replication factor %d, %d records\n",
			td.Name, plural(td.PartitionCount, "partition"), td.ReplicationFactor, records)
		if !a.confirm("delete topic " + name + " and all its records? [y/N] ") {
			return fmt.Errorf("%s: topic left unchanged: %w", op, ErrAborted)
		}
	}
	res, err := c.DeleteTopic(ctx, name)
	if err != nil {
		return a.apiError(op, err)
	}
	if a.g.json {
		return a.printJSON(res)
	}
	_, err = fmt.Fprintf(a.env.Stdout, "deleted topic %s (%s, replication factor %d; %s removed)\n",
		res.Name, plural(res.PartitionCount, "partition"), res.ReplicationFactor, plural(res.ConsumerOffsets, "consumer offset"))
	return err
}

// plural is n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
