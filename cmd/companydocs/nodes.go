package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"companydocs/postgres"
)

// runNodes runs "companydocs nodes": the published generations and the
// nodes that follow them, as the metastore knows them.
func runNodes(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var store string
	fs := newFlagSet("nodes", stdout, stderr)
	fs.Synopsis = "usage: companydocs nodes --store postgres://...\n\nLists the published index generations and, for each node that follows them,\nthe generation it serves, how many newer ones are live, and its last heartbeat."
	fs.StringVar(&store, "store", "", "the PostgreSQL metastore (postgres://...; env "+envName("store")+", then DATABASE_URL)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if store = storeURL(fs, store); !postgresURL(store) {
		return fmt.Errorf("nodes needs --store postgres://..., the metastore: %w", errUsage)
	}
	db, err := postgres.Open(ctx, store, postgres.Options{})
	if err != nil {
		return fmt.Errorf("open the metastore (--store): %w", err)
	}
	defer db.Close()
	pubs, err := db.Publications(ctx)
	if err != nil {
		return err
	}
	nodes, err := db.IndexNodes(ctx)
	if err != nil {
		return err
	}
	return printNodes(stdout, pubs, nodes, time.Now())
}

func printNodes(w io.Writer, pubs []postgres.Publication, nodes []postgres.IndexNode, now time.Time) error {
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
