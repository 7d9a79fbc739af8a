package cli

import (
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// writeTable prints rows under header, columns aligned with two spaces
// between them, as kafka-topics and kubectl do.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if _, err := io.WriteString(tw, strings.Join(header, "\t")+"\n"); err != nil {
		return err
	}
	for _, r := range rows {
		if _, err := io.WriteString(tw, strings.Join(r, "\t")+"\n"); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// joinInts writes ids as "1,2,3", or "-" when there are none.
func joinInts(ids []int) string {
	if len(ids) == 0 {
		return "-"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

// optUint writes a nullable number, "-" when unknown.
func optUint(v *uint64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatUint(*v, 10)
}
