package cli

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of pystream and the Go it was built with",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.g.json {
				return json.NewEncoder(a.env.Stdout).Encode(map[string]string{
					"version": a.env.Version,
					"go":      runtime.Version(),
					"os":      runtime.GOOS,
					"arch":    runtime.GOARCH,
				})
			}
			_, err := fmt.Fprintf(a.env.Stdout, "pystream %s (%s %s/%s)\n", a.env.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
