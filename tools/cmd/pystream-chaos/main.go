// Command pystream-chaos runs PyStream's chaos suite (package tools/chaos,
// docs/chaos.md): a real cluster, a workload, faults drawn from a seed,
// then a check of everything the run recorded.
//
//	pystream-chaos -duration 1m -seed 42 -failover-after 1s -out chaos-out
//
// It prints the seed first (a run is replayed with -seed), a line per
// fault, and at the end a table per fault kind. It exits 1 when the
// checker found a violation (the evidence is in -out), 2 when the run
// itself could not be made.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pystream/pystream/tools/chaos"
)

func main() {
	os.Exit(run())
}

func run() int {
	var opts chaos.Options
	flag.Uint64Var(&opts.Seed, "seed", 0, "seed of the faults; 0 draws one (printed, to replay the run)")
	flag.DurationVar(&opts.Duration, "duration", time.Minute, "how long faults strike")
	flag.DurationVar(&opts.FailoverAfter, "failover-after", time.Second, "PYSTREAM_FAILOVER_AFTER of the nodes")
	flag.StringVar(&opts.Out, "out", "chaos-out", "evidence directory: history, violations, table, node logs")
	flag.StringVar(&opts.Mode, "mode", chaos.ModeCluster, "cluster (three processes) or embedded (one process, three brokers)")
	flag.StringVar(&opts.Server, "server", "", "pystream-server binary (default: built from this repository)")
	flag.StringVar(&opts.CLI, "cli", "", "pystream binary, for log verify (default: built from this repository)")
	flag.IntVar(&opts.Partitions, "partitions", 3, "partitions of the topic (replication factor 3)")
	flag.Parse()
	if opts.Mode != chaos.ModeCluster && opts.Mode != chaos.ModeEmbedded {
		fmt.Fprintf(os.Stderr, "pystream-chaos: -mode is cluster or embedded, not %q\n", opts.Mode)
		return 2
	}
	if opts.Seed == 0 {
		opts.Seed = rand.Uint64N(1 << 32)
	}
	opts.Log = os.Stderr
	fmt.Printf("pystream-chaos: seed %d (replay with -seed %d -mode %s -failover-after %v)\n", opts.Seed, opts.Seed, opts.Mode, opts.FailoverAfter)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.Server == "" || opts.CLI == "" {
		dir, err := os.MkdirTemp("", "pystream-chaos-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "pystream-chaos:", err)
			return 2
		}
		defer os.RemoveAll(dir)
		if opts.Server == "" {
			opts.Server = filepath.Join(dir, "pystream-server")
			if err := build(ctx, opts.Server, "github.com/pystream/pystream/server/cmd/pystream-server"); err != nil {
				fmt.Fprintln(os.Stderr, "pystream-chaos:", err)
				return 2
			}
		}
		if opts.CLI == "" {
			opts.CLI = filepath.Join(dir, "pystream")
			if err := build(ctx, opts.CLI, "github.com/pystream/pystream/tools/cmd/pystream"); err != nil {
				fmt.Fprintln(os.Stderr, "pystream-chaos:", err)
				return 2
			}
		}
	}
	res, err := chaos.Run(ctx, opts)
	if res != nil {
		fmt.Printf("\nseed %d, mode %s, PYSTREAM_FAILOVER_AFTER=%v, %v of faults\n", opts.Seed, opts.Mode, opts.FailoverAfter, opts.Duration)
		if perr := chaos.PrintTable(os.Stdout, res.Rows); perr != nil {
			fmt.Fprintln(os.Stderr, "pystream-chaos:", perr)
		}
		fmt.Printf("duplicates (HTTP writes sent again without a producer id): %d\n", res.Report.Duplicates)
	}
	switch {
	case errors.Is(err, chaos.ErrViolations):
		fmt.Fprintln(os.Stderr, "pystream-chaos:", err)
		return 1
	case err != nil:
		fmt.Fprintln(os.Stderr, "pystream-chaos:", err)
		return 2
	}
	fmt.Printf("no violations; evidence in %s\n", opts.Out)
	return 0
}

// build builds a package of the workspace into out.
func build(ctx context.Context, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", pkg, err)
	}
	return nil
}
