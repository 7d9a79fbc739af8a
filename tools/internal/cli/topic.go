package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/topic"
	"github.com/spf13/cobra"
)

func (a *app) topicCommand() *cobra.Command {
	cmd := groupCommand("topic", "Create, list, describe, configure and delete topics")
	cmd.AddCommand(a.topicCreateCommand(), a.topicListCommand(), a.topicDescribeCommand(), a.topicAlterConfigCommand(), a.topicDeleteCommand())
	return cmd
}

func (a *app) topicCreateCommand() *cobra.Command {
	var partitions, rf int
	var configs []string
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a topic (succeeds when it exists with the same settings)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if partitions < 1 {
				return usageErrorf("--partitions %d: must be at least 1", partitions)
			}
			if rf < 1 {
				return usageErrorf("--replication-factor %d: must be at least 1", rf)
			}
			config, err := configPairs("--config", configs)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			name := args[0]
			td, created, err := c.CreateTopicWithConfig(cmd.Context(), name, partitions, rf, config)
			if err != nil {
				return a.apiError("topic create "+name, err)
			}
			if a.g.json {
				return a.printJSON(td)
			}
			verb := "created topic"
			if !created {
				verb = "topic already exists:"
			}
			parts := "partitions"
			if td.PartitionCount == 1 {
				parts = "partition"
			}
			_, err = fmt.Fprintf(a.env.Stdout, "%s %s (%d %s, replication factor %d)\n",
				verb, td.Name, td.PartitionCount, parts, td.ReplicationFactor)
			return err
		},
	}
	cmd.Flags().IntVarP(&partitions, "partitions", "p", 1, "number of partitions")
	cmd.Flags().IntVarP(&rf, "replication-factor", "r", 1, "replicas per partition (at most the number of brokers)")
	cmd.Flags().StringArrayVar(&configs, "config", nil, "set a configuration key for the topic, KEY=VALUE ("+strings.Join(topic.ConfigKeys(), ", ")+"); repeatable")
	return cmd
}

func (a *app) topicListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List topics",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.Topics(cmd.Context())
			if err != nil {
				return a.apiError("topic list", err)
			}
			if a.g.json {
				return a.printJSON(res)
			}
			return writeTable(a.env.Stdout, []string{"TOPIC", "PARTITIONS", "REPLICATION-FACTOR"}, topicRows(res.Topics))
		},
	}
}

// topicRows is the table of topic list and cluster status.
func topicRows(ts []apiclient.TopicSummary) [][]string {
	rows := make([][]string, len(ts))
	for i, t := range ts {
		rows[i] = []string{t.Name, strconv.Itoa(t.PartitionCount), strconv.Itoa(t.ReplicationFactor)}
	}
	return rows
}

func (a *app) topicDescribeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "describe NAME",
		Short: "Show every partition's leader, leader epoch, preferred replica, replicas, log end, lag and high watermark, and the topic's configuration",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.topicDescribe(cmd.Context(), args[0])
		},
	}
}

func (a *app) topicDescribe(ctx context.Context, name string) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	td, err := c.Topic(ctx, name)
	if err != nil {
		return a.apiError("topic describe "+name, err)
	}
	if a.g.json {
		return a.printJSON(td)
	}
	if _, err := fmt.Fprintf(a.env.Stdout, "Topic: %s\tPartitions: %d\tReplicationFactor: %d\n",
		td.Name, td.PartitionCount, td.ReplicationFactor); err != nil {
		return err
	}
	rows := make([][]string, len(td.Partitions))
	for i, p := range td.Partitions {
		rows[i] = partitionRow(p)
	}
	if err := writeTable(a.env.Stdout, partitionHeader, rows); err != nil {
		return err
	}
	return describeConfig(a.env.Stdout, td)
}

// partitionHeader heads the rows of partitionRow.
var partitionHeader = []string{"PARTITION", "LEADER", "EPOCH", "PREFERRED", "REPLICAS", "ACTIVE", "LOG-END", "LAG", "HIGH-WATERMARK"}

// partitionRow is one partition of topic describe. EPOCH is the leader
// epoch, PREFERRED the first replica of the placement (the leader a
// rebalance moves back to). REPLICAS lists the
// assigned brokers, with "(down)" after an unavailable one;
// LAG lists each follower as broker:lag, "?" when unknown; LOG-END is the
// leader's, "-" when unknown.
func partitionRow(p apiclient.PartitionStatus) []string {
	replicas := make([]string, 0, len(p.Replicas))
	lags := make([]string, 0, len(p.Replicas))
	for _, r := range p.Replicas {
		s := strconv.Itoa(r.BrokerID)
		if !r.Available {
			s += "(down)"
		}
		replicas = append(replicas, s)
		if r.Role == apiclient.RoleLeader {
			continue
		}
		lag := "?"
		if r.Lag != nil {
			lag = strconv.FormatUint(*r.Lag, 10)
		}
		lags = append(lags, strconv.Itoa(r.BrokerID)+":"+lag)
	}
	if len(replicas) == 0 { // a server that sends only the id lists
		replicas = []string{joinInts(p.Assigned)}
	}
	lag := strings.Join(lags, ",")
	if lag == "" {
		lag = "-"
	}
	return []string{
		strconv.Itoa(p.Partition),
		strconv.Itoa(p.Leader),
		strconv.FormatUint(p.LeaderEpoch, 10),
		preferred(p),
		strings.Join(replicas, ","),
		joinInts(p.Active),
		optUint(p.LogEnd),
		lag,
		strconv.FormatUint(p.HighWatermark, 10),
	}
}

// preferred is a partition's preferred replica, "-" from a server that does
// not say.
func preferred(p apiclient.PartitionStatus) string {
	if p.Preferred < 1 {
		return "-"
	}
	return strconv.Itoa(p.Preferred)
}
