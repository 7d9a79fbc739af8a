package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/spf13/cobra"
)

// This file holds the operator commands of phases 4 and 5: cluster [status],
// broker stop|start and partition failover|recover|catch-up|move-leader.
// cluster journal is in journal.go, cluster nodes|add-node|remove-node in
// nodes.go.

func (a *app) clusterCommand() *cobra.Command {
	cmd := groupCommand("cluster", "Show the cluster status (also: cluster alone), its journal and its nodes")
	cmd.Long = "cluster alone is cluster status: the brokers (available or stopped) and the\n" +
		"topics. cluster journal prints every change of the cluster. In cluster mode,\n" +
		"cluster nodes lists the nodes, add-node and remove-node change the voters."
	// Alone, the group runs status, as `rpk cluster` users and newcomers
	// expect; anything else it does not know stays a usage error.
	unknown := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return a.clusterStatus(cmd.Context())
		}
		return unknown(cmd, args)
	}
	cmd.AddCommand(a.clusterJournalCommand(), a.clusterNodesCommand(), a.addNodeCommand(), a.removeNodeCommand(), a.clusterCertsCommand(), &cobra.Command{
		Use:   "status",
		Short: "List the brokers (available or stopped) and the topics",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.clusterStatus(cmd.Context())
		},
	})
	return cmd
}

// clusterStatus prints the brokers and the topics (cluster status, and
// cluster alone).
func (a *app) clusterStatus(ctx context.Context) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	res, err := c.Cluster(ctx)
	if err != nil {
		return a.apiError("cluster status", err)
	}
	if a.g.json {
		return a.printJSON(res)
	}
	rows := make([][]string, len(res.Brokers))
	for i, b := range res.Brokers {
		state := "available"
		switch {
		case !b.Available && !b.Configured:
			state = "not started (PYSTREAM_BROKERS leaves it out)"
		case !b.Available:
			state = "stopped"
		}
		rows[i] = []string{strconv.Itoa(b.ID), state}
	}
	if err := writeTable(a.env.Stdout, []string{"BROKER", "STATE"}, rows); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(a.env.Stdout); err != nil {
		return err
	}
	return writeTable(a.env.Stdout, []string{"TOPIC", "PARTITIONS", "REPLICATION-FACTOR"}, topicRows(res.Topics))
}

func (a *app) brokerCommand() *cobra.Command {
	cmd := groupCommand("broker", "Stop or start a broker (simulates a failure), or reopen its failed logs")
	status := func(verb string) func(*apiclient.BrokerStatus) string {
		return func(res *apiclient.BrokerStatus) string {
			return fmt.Sprintf("broker %d %s (available: %t)", res.ID, verb, res.Available)
		}
	}
	cmd.AddCommand(
		brokerOpCommand(a, "stop", "Make a broker unavailable, as if it crashed (idempotent)", (*apiclient.Client).StopBroker, status("stopped")),
		brokerOpCommand(a, "start", "Bring a stopped broker back (idempotent)", (*apiclient.Client).StartBroker, status("started")),
		brokerOpCommand(a, "reopen", "Reopen a broker's failed logs from disk once space has returned (nothing fails over)",
			(*apiclient.Client).ReopenBroker, func(res *apiclient.ReopenResponse) string {
				var parts []string
				for _, r := range res.Reopened {
					parts = append(parts, fmt.Sprintf("%s/%d", r.Topic, r.Partition))
				}
				if res.Journal {
					parts = append(parts, "the journal")
				}
				what := "nothing had failed"
				if len(parts) > 0 {
					what = "reopened " + strings.Join(parts, ", ")
				}
				return fmt.Sprintf("broker %d: %s", res.BrokerID, what)
			}),
	)
	return cmd
}

// brokerOpCommand is `broker NAME ID`: it calls op through the API and
// prints its answer, as JSON with --json, else the line line renders.
func brokerOpCommand[R any](a *app, name, short string,
	op func(c *apiclient.Client, ctx context.Context, id int) (R, error),
	line func(res R) string) *cobra.Command {
	return &cobra.Command{
		Use:   name + " ID",
		Short: short,
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := intArg("broker id", args[0])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := op(c, cmd.Context(), id)
			if err != nil {
				return a.apiError("broker "+name+" "+args[0], err)
			}
			if a.g.json {
				return a.printJSON(res)
			}
			_, err = fmt.Fprintln(a.env.Stdout, line(res))
			return err
		},
	}
}

func (a *app) partitionCommand() *cobra.Command {
	cmd := groupCommand("partition", "Fail over a partition, move its leader, recover or catch up a replica")
	cmd.AddCommand(
		&cobra.Command{
			Use:   "failover TOPIC PARTITION",
			Short: "Elect a new leader for a partition whose leader is unavailable",
			Args:  exactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				p, err := intArg("partition", args[1])
				if err != nil {
					return err
				}
				c, err := a.client()
				if err != nil {
					return err
				}
				res, err := c.Failover(cmd.Context(), args[0], p)
				if err != nil {
					return a.apiError(fmt.Sprintf("partition failover %s %d", args[0], p), err)
				}
				if a.g.json {
					return a.printJSON(res)
				}
				_, err = fmt.Fprintf(a.env.Stdout, "%s/%d: leader %d -> %d, epoch %d, log end offset %d\n",
					args[0], p, res.OldLeader, res.NewLeader, res.LeaderEpoch, res.LogEndOffset)
				return err
			},
		},
		replicaCommand(a, "recover", "Bring a returning replica back: drop its divergent tail, copy what it misses, reactivate it",
			(*apiclient.Client).Recover, func(topic string, p int, res *apiclient.RecoverResponse) string {
				dropped := "dropped nothing"
				if res.Dropped > 0 {
					dropped = fmt.Sprintf("dropped %d (offsets %s..%s)", res.Dropped, optUint(res.DroppedFrom), optUint(res.DroppedTo))
					if res.Quarantine != "" {
						dropped += " kept in " + res.Quarantine
					}
				}
				return fmt.Sprintf("%s/%d: broker %d recovered: common prefix %d, %s, copied %d", topic, p, res.BrokerID, res.CommonPrefix, dropped, res.Copied)
			}),
		replicaCommand(a, "move-leader", "Hand a partition's leadership to an active, caught-up follower (nothing is lost)",
			(*apiclient.Client).MoveLeader, func(topic string, p int, res *apiclient.MoveLeaderResponse) string {
				return fmt.Sprintf("%s/%d: leader %d -> %d, epoch %d, log end offset %d, copied %d",
					topic, p, res.OldLeader, res.NewLeader, res.LeaderEpoch, res.LogEndOffset, res.Copied)
			}),
		replicaCommand(a, "catch-up", "Copy the records an active follower misses from the leader",
			(*apiclient.Client).CatchUp, func(topic string, p int, res *apiclient.CatchUpResponse) string {
				return fmt.Sprintf("%s/%d: broker %d caught up, copied %d", topic, p, res.BrokerID, res.Copied)
			}),
	)
	return cmd
}

// replicaCommand is `partition NAME TOPIC PARTITION BROKER`: it calls op
// through the API and prints its answer, as JSON with --json, else the
// line line renders.
func replicaCommand[R any](a *app, name, short string,
	op func(c *apiclient.Client, ctx context.Context, topic string, p, broker int) (R, error),
	line func(topic string, p int, res R) string) *cobra.Command {
	return &cobra.Command{
		Use:   name + " TOPIC PARTITION BROKER",
		Short: short,
		Args:  exactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, broker, err := partitionBroker(args)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := op(c, cmd.Context(), args[0], p, broker)
			if err != nil {
				return a.apiError(fmt.Sprintf("partition %s %s %d %d", name, args[0], p, broker), err)
			}
			if a.g.json {
				return a.printJSON(res)
			}
			_, err = fmt.Fprintln(a.env.Stdout, line(args[0], p, res))
			return err
		},
	}
}

// partitionBroker parses the PARTITION and BROKER arguments of args
// (TOPIC PARTITION BROKER).
func partitionBroker(args []string) (p, broker int, err error) {
	if p, err = intArg("partition", args[1]); err != nil {
		return 0, 0, err
	}
	broker, err = intArg("broker id", args[2])
	return p, broker, err
}

// intArg parses a non-negative integer argument; anything else is a usage
// error.
func intArg(what, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, usageErrorf("%s %q: want a non-negative integer", what, s)
	}
	return n, nil
}
