package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/spf13/cobra"
)

// This file holds `group list|describe|delete`, the counterpart of
// kafka-consumer-groups --list, --describe and --delete, over every group
// of either protocol (HTTP members, Kafka clients) and every consumer id
// with committed offsets.

func (a *app) groupCommand() *cobra.Command {
	cmd := groupCommand("group", "List, describe and delete consumer groups")
	cmd.AddCommand(a.groupListCommand(), a.groupDescribeCommand(), a.groupDeleteCommand())
	return cmd
}

func (a *app) groupListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List every group: with members (HTTP or Kafka), or with committed offsets only (Empty)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.Groups(cmd.Context())
			if err != nil {
				return a.apiError("group list", err)
			}
			if a.g.json {
				return a.printJSON(res)
			}
			rows := make([][]string, len(res.Groups))
			for i, g := range res.Groups {
				rows[i] = []string{g.Group, orDash(g.Protocol), g.State, strconv.Itoa(g.Members)}
			}
			return writeTable(a.env.Stdout, []string{"GROUP", "PROTOCOL", "STATE", "MEMBERS"}, rows)
		},
	}
}

// groupRows are the lines of group describe: kafka-consumer-groups
// --describe's columns.
func groupRows(d *apiclient.GroupDescription) [][]string {
	host, client := map[string]string{}, map[string]string{}
	for _, m := range d.Members {
		host[m.MemberID], client[m.MemberID] = m.ClientHost, m.ClientID
	}
	rows := make([][]string, len(d.Offsets))
	for i, o := range d.Offsets {
		rows[i] = []string{d.Group, o.Topic, strconv.Itoa(o.Partition), optUint(o.CommittedOffset), optUint(o.LogEndOffset),
			optUint(o.Lag), orDash(o.MemberID), orDash(host[o.MemberID]), orDash(client[o.MemberID])}
	}
	return rows
}

func (a *app) groupDescribeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "describe GROUP",
		Short: "Show a group's partitions: committed offset, log end (high watermark), lag and member",
		Long: "The table of kafka-consumer-groups --describe: per partition the group committed\n" +
			"or is assigned, its committed offset, the log end (the high watermark: what a\n" +
			"consumer can read), the lag, and the member that holds it with its host and\n" +
			"client id. --json adds the state, epoch and every member's assignment.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			d, err := c.Group(cmd.Context(), args[0])
			if err != nil {
				return a.apiError("group describe "+args[0], err)
			}
			if a.g.json {
				return a.printJSON(d)
			}
			if len(d.Members) == 0 {
				fmt.Fprintf(a.env.Stdout, "Consumer group '%s' has no active members.\n\n", d.Group)
			} else {
				fmt.Fprintf(a.env.Stdout, "Consumer group '%s': %s protocol, state %s, epoch %d, %s.\n\n",
					d.Group, d.Protocol, d.State, d.Epoch, plural(len(d.Members), "member"))
			}
			return writeTable(a.env.Stdout, []string{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"},
				groupRows(d))
		},
	}
}

func (a *app) groupDeleteCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete GROUP",
		Short: "Delete a group's committed offsets (asks first; refused while it has members)",
		Long: "Delete every offset the group (consumer id) committed, as kafka-consumer-groups\n" +
			"--delete: durable once it returns, all or nothing. A group with members is\n" +
			"refused: they leave first. There is no undo.\n\n" +
			"Asks for confirmation on stdin unless --yes. Without a terminal on stdin\n" +
			"(a script, a pipe) it refuses unless --yes is given.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.groupDelete(cmd.Context(), args[0], yes)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	return cmd
}

func (a *app) groupDelete(ctx context.Context, name string, yes bool) error {
	op := "group delete " + name
	if !yes && !a.env.IsTerminal(a.env.Stdin) {
		return usageErrorf("%s: stdin is not a terminal, so there is no one to ask: pass --yes to delete the group's committed offsets", op)
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	if !yes {
		d, err := c.Group(ctx, name)
		if err != nil {
			return a.apiError(op, err)
		}
		committed := 0
		for _, o := range d.Offsets {
			if o.CommittedOffset != nil {
				committed++
			}
		}
		fmt.Fprintf(a.env.Stderr, "group %s: %s, %s committed\n", d.Group, plural(len(d.Members), "member"), plural(committed, "offset"))
		if !a.confirm("delete group " + name + " and its committed offsets? [y/N] ") {
			return fmt.Errorf("%s: group left unchanged: %w", op, ErrAborted)
		}
	}
	res, err := c.DeleteGroup(ctx, name)
	if err != nil {
		return a.apiError(op, err)
	}
	if a.g.json {
		return a.printJSON(res)
	}
	_, err = fmt.Fprintf(a.env.Stdout, "deleted group %s (%s removed)\n", res.Group, plural(res.OffsetsDeleted, "committed offset"))
	return err
}
