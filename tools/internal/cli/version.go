package cli

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// versionText is what `pystream version` prints: the build's version and
// the Go it was built with.
func versionText(version string) string {
	return fmt.Sprintf("pystream %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// versionJSON is what `pystream version --json` prints.
func versionJSON(version string) string {
	b, _ := json.Marshal(map[string]string{ // a map of strings always marshals
		"version": version,
		"go":      runtime.Version(),
		"os":      runtime.GOOS,
		"arch":    runtime.GOARCH,
	})
	return string(b) + "\n"
}

// setVersionFlag gives root a --version (-v) flag that prints exactly what
// `pystream version` prints, --json included. Cobra prints root.Version
// through the version template, a text/template executed on the command;
// the template chooses between the two fixed texts by the --json flag.
// Both texts sit in the template as quoted string constants, so whatever
// the -ldflags version holds is printed as it is, never parsed as template
// syntax.
func setVersionFlag(root *cobra.Command, version string) {
	root.Version = version
	root.Flags().BoolP("version", "v", false, "print the version, as 'pystream version' does")
	root.SetVersionTemplate(fmt.Sprintf(`{{if eq ((.Flags.Lookup "json").Value.String) "true"}}{{printf "%%s" %q}}{{else}}{{printf "%%s" %q}}{{end}}`,
		versionJSON(version), versionText(version)))
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of pystream and the Go it was built with (also: pystream --version)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			text := versionText(a.env.Version)
			if a.g.json {
				text = versionJSON(a.env.Version)
			}
			_, err := fmt.Fprint(a.env.Stdout, text)
			return err
		},
	}
}
