package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

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
			"  pystream completion fish > ~/.config/fish/completions/pystream.fish\n\n" +
			"Besides commands and flags, it completes topic names, partitions, broker\n" +
			"ids and node ids by asking the server at --server (or PYSTREAM_SERVER), for\n" +
			"at most half a second; with no server there it quietly offers nothing.",
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

// completionTimeout bounds the server calls of one completion: a shell
// waits for them at every Tab, so a slow or unreachable server must cost
// little.
const completionTimeout = 500 * time.Millisecond

// argKind is what a positional argument names, for completion.
type argKind int

const (
	argOther     argKind = iota // nothing to offer (a new name, a consumer id)
	argTopic                    // a topic name
	argPartition                // a partition of the topic in the first argument
	argBroker                   // a broker id
	argNode                     // a voter of a cluster-mode cluster
)

// argCompletions lists, by command path below the root, what each
// positional argument names. Commands are looked up when the tree is built,
// so the commands themselves stay unaware of completion.
var argCompletions = map[string][]argKind{
	"produce":               {argTopic},
	"consume":               {argTopic},
	"topic create":          {argOther},
	"topic describe":        {argTopic},
	"topic alter-config":    {argTopic},
	"topic delete":          {argTopic}, // when the tree has it
	"offsets describe":      {argOther, argTopic},
	"offsets reset":         {argOther, argTopic},
	"broker stop":           {argBroker},
	"broker start":          {argBroker},
	"broker reopen":         {argBroker},
	"cluster add-node":      {argOther, argOther},
	"cluster remove-node":   {argNode},
	"partition failover":    {argTopic, argPartition},
	"partition recover":     {argTopic, argPartition, argBroker},
	"partition catch-up":    {argTopic, argPartition, argBroker},
	"partition move-leader": {argTopic, argPartition, argBroker},
}

// flagCompletions lists, by command path, flags whose value names a topic
// or a partition (of the topic in the first argument).
var flagCompletions = map[string]map[string]argKind{
	"consume":       {"partition": argPartition},
	"produce":       {"partition": argPartition},
	"bench produce": {"topic": argTopic},
	"bench consume": {"topic": argTopic},
}

// addCompletions installs the completion functions of argCompletions and
// flagCompletions on the commands of root's tree that exist.
func (a *app) addCompletions(root *cobra.Command) {
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		path := strings.TrimPrefix(strings.TrimPrefix(cmd.CommandPath(), root.Name()), " ")
		if kinds, ok := argCompletions[path]; ok {
			cmd.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				if len(args) >= len(kinds) {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return a.complete(cmd, kinds[len(args)], args, toComplete)
			}
		}
		for flag, kind := range flagCompletions[path] {
			if cmd.Flags().Lookup(flag) == nil {
				continue
			}
			_ = cmd.RegisterFlagCompletionFunc(flag, func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return a.complete(cmd, kind, args, toComplete)
			})
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// complete offers the values of kind that start with toComplete, asking the
// server at --server within completionTimeout. Any failure (no server, a
// slow one, an unknown topic) offers nothing, silently: completion must
// never print an error into the user's command line.
func (a *app) complete(cmd *cobra.Command, kind argKind, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	const directive = cobra.ShellCompDirectiveNoFileComp
	if kind == argOther {
		return nil, directive
	}
	c, err := a.client()
	if err != nil {
		return nil, directive
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	var values []completionValue
	switch kind {
	case argTopic:
		res, err := c.Topics(ctx)
		if err != nil {
			return nil, directive
		}
		for _, t := range res.Topics {
			values = append(values, completionValue{t.Name, fmt.Sprintf("%d partition(s), replication factor %d", t.PartitionCount, t.ReplicationFactor)})
		}
	case argPartition:
		if len(args) == 0 {
			return nil, directive
		}
		td, err := c.Topic(ctx, args[0])
		if err != nil {
			return nil, directive
		}
		for _, p := range td.Partitions {
			values = append(values, completionValue{strconv.Itoa(p.Partition), fmt.Sprintf("leader %d, high watermark %d", p.Leader, p.HighWatermark)})
		}
	case argBroker:
		res, err := c.Cluster(ctx)
		if err != nil {
			return nil, directive
		}
		for _, b := range res.Brokers {
			state := "available"
			if !b.Available {
				state = "stopped"
			}
			values = append(values, completionValue{strconv.Itoa(b.ID), state})
		}
	case argNode:
		res, err := c.ClusterNodes(ctx)
		if err != nil {
			return nil, directive
		}
		for _, n := range res.Nodes {
			if !n.Voter {
				continue
			}
			desc := n.Addr
			if n.Leader {
				desc += ", controller"
			}
			values = append(values, completionValue{strconv.Itoa(n.ID), desc})
		}
	}
	return completions(values, toComplete), directive
}

// completionValue is one value offered, with the description zsh and fish
// show beside it.
type completionValue struct {
	value, description string
}

// completions keeps the values that start with prefix, in order, in
// cobra's "value\tdescription" form.
func completions(values []completionValue, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, v := range values {
		if strings.HasPrefix(v.value, prefix) {
			out = append(out, cobra.CompletionWithDesc(v.value, v.description))
		}
	}
	return out
}
