package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"companydocs"
	"companydocs/index"
	"companydocs/messages"
	"companydocs/resolver"
	"companydocs/sheet"
)

const resolveSynopsis = `usage: companydocs resolve --query COLUMN [flags] [FILE]

resolve reads a CSV or TSV file (or stdin) whose first line names its
columns and writes it again, each row followed by its best candidate:
profile_id, name, court, registry_number, confidence, confidence_label,
ordering_eligible and reasons. The clue is the --query column; property
columns (--city, --register ...) are evidence beside it. It resolves on
the data directory, or through --server's batch endpoint: with an API
key in COMPANYDOCS_API_KEY it signs in, and its batches spend the
account's search rate (its plan's search_rate) instead of the address's.

A row longer than --max-row-bytes, or with a cell longer than
--max-field-bytes, is not read: its line in the output has empty cells
and, under reasons, its line number and the cap. A header line longer
than --max-header-bytes, or a quote left open (the error names the line
it opened on), stops the run.`

// runResolve parses the resolve command's flags into a sheet run and
// runs it.
func runResolve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c sheet.Config
	var dataDir string
	c.Properties = make([]string, len(sheet.PropertyColumns))
	fs := newFlagSet("resolve", stdout, stderr)
	fs.Synopsis = resolveSynopsis
	fs.String(&dataDir, "data-dir", defaultDataDir, "data directory to resolve on (unless --server)")
	fs.StringVar(&c.Server, "server", "", "resolve through this server's batch endpoint, e.g. http://127.0.0.1:8080")
	fs.StringVar(&c.Query, "query", "", "column holding the clue: a name, register number, LEI... (required)")
	for i, p := range sheet.PropertyColumns {
		fs.StringVar(&c.Properties[i], p.Flag, "", p.Usage)
	}
	fs.StringVar(&c.Delimiter, "delimiter", "", `delimiter of the input and output: ",", ";" or "tab" (default: detected from the header line)`)
	fs.StringVar(&c.Lang, "lang", messages.English, "language of the reasons and refusals written: en or de")
	fs.StringVar(&c.Decimal, "decimal", "", `decimal mark of the confidence: "comma" or "point" (default: comma in a file separated by semicolons, as German spreadsheets read it, point otherwise)`)
	fs.StringVar(&c.Output, "output", "", "write to this file instead of stdout")
	fs.BoolVar(&c.Resume, "resume", false, "with --output: keep the rows the file holds and append the rest")
	fs.IntVar(&c.Workers, "workers", 4, fmt.Sprintf("rows resolved at once in process, 1 to %d; through --server batches sent at once, 1 unless set (a server resolves one batch of an address at a time)", sheet.MaxWorkers))
	fs.IntVar(&c.BatchSize, "batch-size", sheet.DefaultBatchSize, fmt.Sprintf("rows per request with --server, 1 to %d", sheet.MaxBatchSize))
	fs.StringVar(&c.Mode, "mode", resolver.ModeStandard, "standard or deep")
	fs.BoolVar(&c.Discover, "discover", false, "include discovery candidates")
	capFlags(fs, &c.Caps)
	if err := fs.parse(args); err != nil {
		return err
	}
	if c.Server != "" && !isSet(fs, "workers") {
		c.Workers = 1 // more would only wait on the address's batch in progress
	}
	c.Local = LocalSearcher(dataDir, stderr)
	if err := c.Check(fs.Args()); err != nil {
		return err
	}
	in, path, err := sheet.OpenInput(fs.Args(), os.Stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	return c.Run(ctx, in, path, stdout, stderr)
}

// capFlags are the flags of a sheet's caps.
func capFlags(fs *flagSet, caps *sheet.Caps) {
	fs.IntVar(&caps.Field, "max-field-bytes", sheet.DefaultMaxFieldBytes,
		fmt.Sprintf("bytes of a cell (%s); a row with a longer one is refused in its own output line", companydocs.SizeText(sheet.DefaultMaxFieldBytes)))
	fs.IntVar(&caps.Row, "max-row-bytes", sheet.DefaultMaxRowBytes,
		fmt.Sprintf("bytes of a row (%s); a longer one is refused in its own output line", companydocs.SizeText(sheet.DefaultMaxRowBytes)))
	fs.IntVar(&caps.Header, "max-header-bytes", sheet.DefaultMaxHeaderBytes,
		fmt.Sprintf("bytes of the header line (%s); a longer one stops the run", companydocs.SizeText(sheet.DefaultMaxHeaderBytes)))
}

// LocalSearcher opens the index of the data directory dataDir, which a
// resolve run without --server searches.
func LocalSearcher(dataDir string, stderr io.Writer) func() (sheet.Searcher, func(), error) {
	return func() (sheet.Searcher, func(), error) {
		live, err := index.OpenLive(dataDir, index.LiveOptions{PollInterval: -1, Logger: newLogger(stderr, "auto", "warn")})
		if err != nil {
			return nil, nil, err
		}
		return LiveSearcher{live}, func() { live.Close() }, nil
	}
}

// isSet reports whether the command line set the flag name.
func isSet(fs *flagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
