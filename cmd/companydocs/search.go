package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"companydocs"
	"companydocs/index"
	"companydocs/resolver"
)

// runSearch prints the candidates for one query, for operators.
func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		dataDir, mode string
		discover      bool
		limit         int
		asJSON        bool
	)
	fs := newFlagSet("search")
	fs.SetOutput(stderr)
	fs.String(&dataDir, "data-dir", defaultDataDir, "data directory")
	fs.StringVar(&mode, "mode", resolver.ModeStandard, "standard or deep")
	fs.BoolVar(&discover, "discover", false, "include discovery candidates")
	fs.IntVar(&limit, "limit", resolver.DefaultLimit, "number of candidates")
	fs.BoolVar(&asJSON, "json", false, "print the API's JSON")
	if err := fs.parse(args); err != nil {
		return err
	}
	// Only warnings reach stderr: stdout holds the answer alone.
	logger := newLogger(stderr, "auto", "warn")
	live, err := index.OpenLive(dataDir, index.LiveOptions{PollInterval: -1, Logger: logger})
	if err != nil {
		return err
	}
	defer live.Close()
	res, err := liveSearcher{live}.Search(ctx, resolver.Request{
		Query: strings.Join(fs.Args(), " "), Mode: mode, Discover: discover, Limit: limit,
	})
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printCandidates(stdout, res)
	return nil
}

// printCandidates prints the candidates as a table, then the notes that
// explain a missing or doubtful answer ("LEI ... is valid but not known").
func printCandidates(stdout io.Writer, res *resolver.Result) {
	if len(res.Candidates) == 0 {
		fmt.Fprintln(stdout, "No candidates.")
	} else {
		printTable(stdout, res.Candidates)
	}
	for _, note := range res.Understanding.Notes {
		fmt.Fprintf(stdout, "Note: %s.\n", strings.TrimSuffix(note, "."))
	}
}

func printTable(stdout io.Writer, candidates []companydocs.Candidate) {
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "#\tLABEL\tCONF\tORDERABLE\tNAME\tCOURT\tNUMBER\tSEAT")
	for i, c := range candidates {
		fmt.Fprintf(w, "%d\t%s\t%.2f\t%v\t%s\t%s\t%s\t%s\n", i+1, c.ConfidenceLabel, c.Confidence, c.OrderingEligible, c.Name, c.Court, c.RegistryNumber, c.City)
		fmt.Fprintf(w, "\t\t\t\t  %s\t\t\t\n", strings.Join(c.ConfidenceReasons, "; "))
	}
	w.Flush()
}
