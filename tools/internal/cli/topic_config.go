package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/topic"
	"github.com/spf13/cobra"
)

// A topic's configuration on the command line: topic create --config
// KEY=VALUE, topic describe's CONFIG table, and topic alter-config. The
// keys and values are checked by the server (one rule, package topic);
// the CLI only splits KEY=VALUE.

// configPairs splits repeated KEY=VALUE arguments of flag (for messages)
// into a map. A pair without '=', an empty key or a key given twice is a
// usage error.
func configPairs(flag string, pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		key, value, ok := strings.Cut(p, "=")
		if !ok || key == "" {
			return nil, usageErrorf("%s %q: want KEY=VALUE, e.g. retention.ms=3600000", flag, p)
		}
		if _, dup := out[key]; dup {
			return nil, usageErrorf("%s: %s given twice", flag, key)
		}
		out[key] = value
	}
	return out, nil
}

// configHeader heads the rows of writeConfigTable.
var configHeader = []string{"CONFIG", "VALUE", "SOURCE"}

// writeConfigTable prints a topic's effective configuration, one key per
// row in key order, SOURCE "topic" for the keys the topic sets (Kafka's
// DYNAMIC_TOPIC_CONFIG) and "default" for the server's defaults (Kafka's
// DEFAULT_CONFIG).
func writeConfigTable(w io.Writer, config map[string]string, overrides []string) error {
	rows := make([][]string, 0, len(config))
	for _, key := range slices.Sorted(maps.Keys(config)) {
		source := "default"
		if slices.Contains(overrides, key) {
			source = "topic"
		}
		rows = append(rows, []string{key, config[key], source})
	}
	return writeTable(w, configHeader, rows)
}

func (a *app) topicAlterConfigCommand() *cobra.Command {
	var remove []string
	cmd := &cobra.Command{
		Use:   "alter-config TOPIC [KEY=VALUE ...] [--delete-config KEY ...]",
		Short: "Set or remove a topic's configuration keys (" + strings.Join(topic.ConfigKeys(), ", ") + ")",
		Long: "Set configuration keys for a topic (KEY=VALUE arguments) and remove others\n" +
			"(--delete-config KEY, repeatable), which then take the server's defaults. The\n" +
			"change is checked as a whole: an unknown key or a bad value changes nothing\n" +
			"(exit 1). Prints the topic's configuration afterwards, as topic describe does.\n\n" +
			"Keys: retention.ms (ms, -1 = for ever), retention.bytes (per partition\n" +
			"replica, -1 = no limit), segment.bytes (1024 to 1073741824), segment.ms\n" +
			"(ms, from 1), min.insync.replicas (from 1: fewer active replicas refuse\n" +
			"writes), cleanup.policy (delete only: compaction does not exist yet),\n" +
			"max.message.bytes (the largest record batch a producer may send, from 0)\n" +
			"and message.timestamp.type (CreateTime or LogAppendTime). Values are\n" +
			"decimal integers, but for cleanup.policy and message.timestamp.type.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usageErrorf("%s needs a topic (usage: %s)", cmd.CommandPath(), cmd.UseLine())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			set, err := configPairs("alter-config", args[1:])
			if err != nil {
				return err
			}
			if len(set) == 0 && len(remove) == 0 {
				return usageErrorf("%s %s: nothing to change: give KEY=VALUE or --delete-config KEY", cmd.CommandPath(), args[0])
			}
			for _, key := range remove {
				if _, ok := set[key]; ok {
					return usageErrorf("%s: %s both set and deleted", cmd.CommandPath(), key)
				}
			}
			return a.topicAlterConfig(cmd.Context(), args[0], set, remove)
		},
	}
	cmd.Flags().StringArrayVar(&remove, "delete-config", nil, "remove the topic's value of KEY (the server's default applies again); repeatable")
	return cmd
}

func (a *app) topicAlterConfig(ctx context.Context, name string, set map[string]string, remove []string) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	res, err := c.AlterTopicConfig(ctx, name, set, remove)
	if err != nil {
		return a.apiError("topic alter-config "+name, err)
	}
	if a.g.json {
		return a.printJSON(res)
	}
	if _, err := fmt.Fprintf(a.env.Stdout, "altered the configuration of topic %s\n", name); err != nil {
		return err
	}
	return writeConfigTable(a.env.Stdout, res.Config, res.ConfigOverrides)
}

// describeConfig prints topic describe's configuration table under the
// partitions' (its CONFIG header sets it apart; no blank line, so that the
// output stays one block for grep and for transcripts). A server that
// does not show the configuration gets no table.
func describeConfig(w io.Writer, td *apiclient.TopicDetail) error {
	if len(td.Config) == 0 {
		return nil
	}
	return writeConfigTable(w, td.Config, td.ConfigOverrides)
}
