package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"companydocs"
	"companydocs/index"
	"companydocs/messages"
	"companydocs/resolver"
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

// propertyColumns are the optional columns of a row that become the
// search's properties (resolver.PropertyIDs, in their order), by flag:
// the id with hyphens, "register" for register_number.
var propertyColumns = func() []propertyColumn {
	usage := map[string]string{
		"city":            "column of the seat's city (e.g. Ort)",
		"postal_code":     "column of the postal code (e.g. PLZ)",
		"address":         "column of the street and house number (e.g. Straße)",
		"court":           "column of the register court (e.g. Gericht)",
		"register_number": "column of the register number (e.g. HRB, holding \"HRB 6684\")",
		"lei":             "column of the LEI",
		"officer":         "column of a director's or officer's name (e.g. Geschäftsführer)",
		"legal_form":      "column of the legal form (e.g. Rechtsform)",
	}
	out := make([]propertyColumn, len(resolver.PropertyIDs))
	for i, id := range resolver.PropertyIDs {
		flag := strings.ReplaceAll(id, "_", "-")
		if id == "register_number" {
			flag = "register"
		}
		if usage[id] == "" {
			panic("resolve: the search's property " + id + " has no column flag")
		}
		out[i] = propertyColumn{id: id, flag: flag, usage: usage[id]}
	}
	return out
}()

// propertyColumn is the flag naming the column of one property.
type propertyColumn struct{ id, flag, usage string }

// resolveConfig holds the flags of one resolve run.
type resolveConfig struct {
	dataDir, server, output, delimiter, mode string
	query, lang, decimal                     string
	properties                               []string // header names, in propertyColumns' order; "" unused
	discover, resume                         bool
	workers, batchSize                       int
	caps                                     sheetCaps
}

// Bounds of the run's flags.
const (
	maxResolveWorkers = 64
	maxBatchSize      = 1000 // the batch endpoint's limit
	defaultBatchSize  = 100
	localBatchSize    = 8 // rows a worker resolves in process before handing them on
)

func runResolve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c resolveConfig
	c.properties = make([]string, len(propertyColumns))
	fs := newFlagSet("resolve", stdout, stderr)
	fs.Synopsis = resolveSynopsis
	fs.String(&c.dataDir, "data-dir", defaultDataDir, "data directory to resolve on (unless --server)")
	fs.StringVar(&c.server, "server", "", "resolve through this server's batch endpoint, e.g. http://127.0.0.1:8080")
	fs.StringVar(&c.query, "query", "", "column holding the clue: a name, register number, LEI... (required)")
	for i, p := range propertyColumns {
		fs.StringVar(&c.properties[i], p.flag, "", p.usage)
	}
	fs.StringVar(&c.delimiter, "delimiter", "", `delimiter of the input and output: ",", ";" or "tab" (default: detected from the header line)`)
	fs.StringVar(&c.lang, "lang", messages.English, "language of the reasons and refusals written: en or de")
	fs.StringVar(&c.decimal, "decimal", "", `decimal mark of the confidence: "comma" or "point" (default: comma in a file separated by semicolons, as German spreadsheets read it, point otherwise)`)
	fs.StringVar(&c.output, "output", "", "write to this file instead of stdout")
	fs.BoolVar(&c.resume, "resume", false, "with --output: keep the rows the file holds and append the rest")
	fs.IntVar(&c.workers, "workers", 4, fmt.Sprintf("rows resolved at once in process, 1 to %d; through --server batches sent at once, 1 unless set (a server resolves one batch of an address at a time)", maxResolveWorkers))
	fs.IntVar(&c.batchSize, "batch-size", defaultBatchSize, fmt.Sprintf("rows per request with --server, 1 to %d", maxBatchSize))
	fs.StringVar(&c.mode, "mode", resolver.ModeStandard, "standard or deep")
	fs.BoolVar(&c.discover, "discover", false, "include discovery candidates")
	fs.IntVar(&c.caps.field, "max-field-bytes", defaultMaxFieldBytes,
		fmt.Sprintf("bytes of a cell (%s); a row with a longer one is refused in its own output line", companydocs.SizeText(defaultMaxFieldBytes)))
	fs.IntVar(&c.caps.row, "max-row-bytes", defaultMaxRowBytes,
		fmt.Sprintf("bytes of a row (%s); a longer one is refused in its own output line", companydocs.SizeText(defaultMaxRowBytes)))
	fs.IntVar(&c.caps.header, "max-header-bytes", defaultMaxHeaderBytes,
		fmt.Sprintf("bytes of the header line (%s); a longer one stops the run", companydocs.SizeText(defaultMaxHeaderBytes)))
	if err := fs.parse(args); err != nil {
		return err
	}
	if c.server != "" && !isSet(fs, "workers") {
		c.workers = 1 // more would only wait on the address's batch in progress
	}
	if err := c.check(fs.Args()); err != nil {
		return err
	}
	in, path, err := openInput(fs.Args(), os.Stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	return c.run(ctx, in, path, stdout, stderr)
}

// check finds usage errors before any file is opened.
func (c *resolveConfig) check(rest []string) error {
	if err := c.checkFlags(rest); err != nil {
		return err
	}
	if c.server != "" {
		if err := checkServerURL(c.server); err != nil {
			return err
		}
	}
	if err := c.caps.check(); err != nil {
		return err
	}
	comma, err := parseDelimiter(c.delimiter)
	if err == nil && c.decimal != "" {
		_, err = decimalFor(c.decimal, comma)
	}
	return err
}

// checkFlags checks each flag's value and the input file against the
// output.
func (c *resolveConfig) checkFlags(rest []string) error {
	switch {
	case strings.TrimSpace(c.query) == "":
		return fmt.Errorf("resolve needs --query COLUMN: the header name of the column holding the clue: %w", errUsage)
	case len(rest) > 1:
		return fmt.Errorf("resolve takes at most one input file, got %d: %w", len(rest), errUsage)
	case c.workers < 1 || c.workers > maxResolveWorkers:
		return fmt.Errorf("--workers must be 1 to %d, got %d: %w", maxResolveWorkers, c.workers, errUsage)
	case c.batchSize < 1 || c.batchSize > maxBatchSize:
		return fmt.Errorf("--batch-size must be 1 to %d, got %d: %w", maxBatchSize, c.batchSize, errUsage)
	case c.mode != resolver.ModeStandard && c.mode != resolver.ModeDeep:
		return fmt.Errorf("--mode must be %s or %s, got %q: %w", resolver.ModeStandard, resolver.ModeDeep, c.mode, errUsage)
	case !slices.Contains(messages.Languages, c.lang):
		return fmt.Errorf("--lang must be one of %s, got %q: %w", strings.Join(messages.Languages, ", "), c.lang, errUsage)
	case c.resume && c.output == "":
		return fmt.Errorf("--resume needs --output FILE: the file to append to: %w", errUsage)
	case len(rest) == 1 && c.output != "" && sameFile(rest[0], c.output):
		return fmt.Errorf("--output %s is the input file: choose another: %w", c.output, errUsage)
	}
	return nil
}

// isSet reports whether the command line set the flag name.
func isSet(fs *flagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// openInput opens the file argument, or stdin without one (or "-"); path
// is the file's when it is a regular file, whose rows the progress bar
// counts, "" otherwise.
func openInput(rest []string, stdin *os.File) (io.ReadCloser, string, error) {
	if len(rest) == 0 || rest[0] == "-" {
		if isTerminal(stdin) {
			return nil, "", fmt.Errorf("resolve reads the file named, or stdin, which is a terminal here: name a CSV file or pipe one in: %w", errUsage)
		}
		return io.NopCloser(stdin), "", nil
	}
	f, err := os.Open(rest[0])
	if err != nil {
		return nil, "", err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return f, "", nil
	}
	return f, rest[0], nil
}

// run resolves the rows of in and writes them to stdout or --output.
func (c *resolveConfig) run(ctx context.Context, in io.Reader, path string, stdout, stderr io.Writer) error {
	comma, _ := parseDelimiter(c.delimiter)
	sheet, err := openSheet(in, comma, c.caps, c.lang)
	if err != nil {
		return err
	}
	cols, err := c.mapColumns(sheet)
	if err != nil {
		return err
	}
	decimal, err := decimalFor(c.decimal, sheet.comma)
	if err != nil {
		return err
	}
	out, skip, closeOut, err := c.openOutput(sheet, cellFormat{lang: c.lang, decimal: decimal}, stdout)
	if err != nil {
		return err
	}
	progress := newRowProgress(stderr, isTerminal(stderr), skip)
	res, closeRes, err := c.resolver(ctx, stderr, progress)
	if err != nil {
		closeOut()
		return err
	}
	defer closeRes()
	if path != "" {
		counting, stop := context.WithCancel(ctx)
		defer stop()
		go countInputRows(counting, path, sheet.comma, c.caps, progress)
	}
	p := &pipeline{sheet: sheet, cols: cols, req: c.request(), res: res, skip: skip, lang: c.lang,
		workers: c.workers, batchSize: c.rowsPerBatch(), progress: progress}
	err = p.run(ctx, out)
	progress.finish()
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		err = fmt.Errorf("interrupted after %d rows: run again with --output FILE --resume to continue where it stopped", skip+progress.rows)
	}
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	return err
}

// sheetColumns are the positions of the mapped columns in a row.
type sheetColumns struct {
	query      int
	properties []int // in propertyColumns' order; -1 unused
}

func (c *resolveConfig) mapColumns(sheet *sheetReader) (sheetColumns, error) {
	cols := sheetColumns{properties: make([]int, len(propertyColumns))}
	i, ok := sheet.column(c.query)
	if !ok {
		return cols, sheet.unknownColumn("query", c.query)
	}
	cols.query = i
	for j, name := range c.properties {
		cols.properties[j] = -1
		if strings.TrimSpace(name) == "" {
			continue
		}
		if cols.properties[j], ok = sheet.column(name); !ok {
			return cols, sheet.unknownColumn(propertyColumns[j].flag, name)
		}
	}
	return cols, nil
}

// openOutput returns the writer of the output rows, how many input rows
// a resumed output holds already, and the function that flushes and
// closes it.
func (c *resolveConfig) openOutput(sheet *sheetReader, format cellFormat, stdout io.Writer) (*sheetWriter, int, func() error, error) {
	header := outputHeader(sheet.header, sheet.bom)
	if c.output == "" {
		w := newSheetWriter(stdout, sheet.comma)
		w.format = format
		return w, 0, w.flush, w.writeHeader(sheet.header, sheet.bom)
	}
	var (
		f     *os.File
		rows  int
		fresh = true
		err   error
	)
	if c.resume {
		f, rows, fresh, err = resumeOutput(c.output, header, sheet.comma, sheet.caps)
	} else {
		f, err = os.Create(c.output)
	}
	if err != nil {
		return nil, 0, nil, err
	}
	w := newSheetWriter(f, sheet.comma)
	w.format = format
	closeOut := func() error {
		err := w.flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if fresh {
		if err := w.writeHeader(sheet.header, sheet.bom); err != nil {
			closeOut()
			return nil, 0, nil, err
		}
	}
	return w, rows, closeOut, nil
}

// request is the search every row starts from.
func (c *resolveConfig) request() resolver.Request {
	return resolver.Request{Mode: c.mode, Discover: c.discover, Limit: resolver.DefaultLimit}
}

func (c *resolveConfig) rowsPerBatch() int {
	if c.server != "" {
		return c.batchSize
	}
	return localBatchSize
}

// resolver returns what resolves a batch of rows: the server's batch
// endpoint, or the index of the data directory.
func (c *resolveConfig) resolver(ctx context.Context, stderr io.Writer, progress *rowProgress) (batchResolver, func(), error) {
	if c.server != "" {
		s := newServerResolver(c.server)
		s.lang, s.waiting = c.lang, progress.waiting
		if key := os.Getenv(apiKeyEnv); key != "" {
			if err := s.signIn(ctx, key); err != nil {
				return nil, nil, err
			}
		}
		return s, func() {}, nil
	}
	live, err := index.OpenLive(c.dataDir, index.LiveOptions{PollInterval: -1, Logger: newLogger(stderr, "auto", "warn")})
	if err != nil {
		return nil, nil, err
	}
	return localResolver{liveSearcher{live}, c.lang}, func() { live.Close() }, nil
}

// batchResolver resolves the searches of a batch of rows, an outcome for
// each in order. An error stops the run: the index or the server failed,
// not one row.
type batchResolver interface {
	resolve(ctx context.Context, reqs []resolver.Request) ([]rowOutcome, error)
}

// localResolver resolves in process on the data directory's index,
// saying a refused clue in lang.
type localResolver struct {
	searcher liveSearcher
	lang     string
}

func (l localResolver) resolve(ctx context.Context, reqs []resolver.Request) ([]rowOutcome, error) {
	outs := make([]rowOutcome, len(reqs))
	for i, req := range reqs {
		res, err := l.searcher.Search(ctx, req)
		switch code := companydocs.ErrorCode(err); {
		case err == nil:
			outs[i] = bestOf(res)
		case code == companydocs.EINVALIDQUERY:
			text, _ := companydocs.ErrorMessageIn(err, l.lang)
			outs[i] = rowOutcome{errCode: code, errText: text}
		default:
			return nil, err
		}
	}
	return outs, nil
}

// bestOf is the outcome of a row's search: its best candidate, or with
// none the notes that say why (query_understanding's).
func bestOf(res *resolver.Result) rowOutcome {
	if len(res.Candidates) == 0 {
		return rowOutcome{notes: res.Understanding.Notes, noteDetails: res.Understanding.NoteDetails}
	}
	return rowOutcome{best: &res.Candidates[0]}
}

// countInputRows counts the data rows of the input file, as the run
// reads them (a quoted cell may hold line breaks), for the progress bar;
// a file it cannot read to its end leaves the total unknown.
func countInputRows(ctx context.Context, path string, comma rune, caps sheetCaps, progress *rowProgress) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sheet, err := openSheet(f, comma, caps, messages.English) // its errors are not said
	if err != nil {
		return
	}
	rows := 0
	var refused *refusedRow
	for ctx.Err() == nil {
		switch _, err := sheet.next(); {
		case err == io.EOF:
			progress.counted(rows)
			return
		case err == nil, errors.As(err, &refused):
			rows++
		default:
			return
		}
	}
}
