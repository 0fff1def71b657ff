package publication

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
)

// ListNodes writes the published generations and the nodes that follow
// them, as meta knows them, to w: each node's generation, how many newer
// ones are live, and how long ago it last reported (at now).
func ListNodes(ctx context.Context, meta Metastore, w io.Writer, now time.Time) error {
	pubs, err := meta.Publications(ctx)
	if err != nil {
		return err
	}
	nodes, err := meta.IndexNodes(ctx)
	if err != nil {
		return err
	}
	return printNodes(w, pubs, nodes, now)
}

// printNodes writes the listing of ListNodes.
func printNodes(w io.Writer, pubs []Publication, nodes []Node, now time.Time) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GENERATION\tSTATE\tPROFILES\tBYTES\tPUBLISHED")
	for _, p := range pubs {
		p.Name, p.State = printable(p.Name), printable(p.State)
		at := "-"
		if !p.PublishedAt.IsZero() {
			at = p.PublishedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", p.Name, p.State, p.Profiles, p.Bytes, at)
	}
	fmt.Fprintln(tw, "\nNODE\tSERVES\tINSTALLING\tBEHIND\tHEARTBEAT")
	for _, n := range nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s ago\n", printable(n.Node), orNone(printable(n.Generation), "(none yet)"),
			orNone(printable(n.Installing), "-"), n.Behind, now.Sub(n.HeartbeatAt).Round(time.Second))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range nodes {
		if n.Damaged != "" {
			fmt.Fprintf(w, "\n%s found damaged: %s\n", printable(n.Node), printable(n.Damaged))
		}
	}
	return nil
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// printable escapes what a terminal would act on in a name the metastore
// holds (escape sequences, line breaks, tabs, other control and format
// characters), so that a row can neither forge another nor rewrite the
// screen.
func printable(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if unicode.IsGraphic(r) && !unicode.Is(unicode.Cf, r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRuneToASCII(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}
