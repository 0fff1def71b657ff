package sheet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"companydocs"
	"companydocs/internal/cli"
	"companydocs/messages"
	"companydocs/resolver"
)

// PropertyColumns are the optional columns of a row that become the
// search's properties (resolver.PropertyIDs, in their order), by flag:
// the id with hyphens, "register" for register_number.
var PropertyColumns = func() []PropertyColumn {
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
	out := make([]PropertyColumn, len(resolver.PropertyIDs))
	for i, id := range resolver.PropertyIDs {
		flag := strings.ReplaceAll(id, "_", "-")
		if id == "register_number" {
			flag = "register"
		}
		if usage[id] == "" {
			panic("resolve: the search's property " + id + " has no column flag")
		}
		out[i] = PropertyColumn{ID: id, Flag: flag, Usage: usage[id]}
	}
	return out
}()

// PropertyColumn is the flag naming the column of one property.
type PropertyColumn struct{ ID, Flag, Usage string }

// Config is one resolve run: the columns it reads, how it writes them,
// and what resolves the rows (Server's batch endpoint, or Local).
type Config struct {
	Server, Output, Delimiter, Mode string
	Query, Lang, Decimal            string
	Properties                      []string // header names, in PropertyColumns' order; "" unused
	Discover, Resume                bool
	Workers, BatchSize              int
	Caps                            Caps
	// Local opens what resolves the rows in process when Server is "";
	// its close function ends it.
	Local func() (Searcher, func(), error)
}

// Searcher resolves one search in process (the data directory's index).
type Searcher interface {
	Search(ctx context.Context, req resolver.Request) (*resolver.Result, error)
}

// Bounds of the run's flags.
const (
	MaxWorkers       = 64
	MaxBatchSize     = 1000 // the batch endpoint's limit
	DefaultBatchSize = 100
	localBatchSize   = 8 // rows a worker resolves in process before handing them on
)

// Check finds usage errors before any file is opened; rest are the
// command line's arguments after the flags.
func (c *Config) Check(rest []string) error {
	if err := c.checkFlags(rest); err != nil {
		return err
	}
	if c.Server != "" {
		if err := checkServerURL(c.Server); err != nil {
			return err
		}
	}
	if err := c.Caps.check(); err != nil {
		return err
	}
	comma, err := parseDelimiter(c.Delimiter)
	if err == nil && c.Decimal != "" {
		_, err = decimalFor(c.Decimal, comma)
	}
	return err
}

// checkFlags checks each flag's value and the input file against the
// output.
func (c *Config) checkFlags(rest []string) error {
	switch {
	case strings.TrimSpace(c.Query) == "":
		return fmt.Errorf("resolve needs --query COLUMN: the header name of the column holding the clue: %w", cli.ErrUsage)
	case len(rest) > 1:
		return fmt.Errorf("resolve takes at most one input file, got %d: %w", len(rest), cli.ErrUsage)
	case c.Workers < 1 || c.Workers > MaxWorkers:
		return fmt.Errorf("--workers must be 1 to %d, got %d: %w", MaxWorkers, c.Workers, cli.ErrUsage)
	case c.BatchSize < 1 || c.BatchSize > MaxBatchSize:
		return fmt.Errorf("--batch-size must be 1 to %d, got %d: %w", MaxBatchSize, c.BatchSize, cli.ErrUsage)
	case c.Mode != resolver.ModeStandard && c.Mode != resolver.ModeDeep:
		return fmt.Errorf("--mode must be %s or %s, got %q: %w", resolver.ModeStandard, resolver.ModeDeep, c.Mode, cli.ErrUsage)
	case !slices.Contains(messages.Languages, c.Lang):
		return fmt.Errorf("--lang must be one of %s, got %q: %w", strings.Join(messages.Languages, ", "), c.Lang, cli.ErrUsage)
	case c.Resume && c.Output == "":
		return fmt.Errorf("--resume needs --output FILE: the file to append to: %w", cli.ErrUsage)
	case len(rest) == 1 && c.Output != "" && sameFile(rest[0], c.Output):
		return fmt.Errorf("--output %s is the input file: choose another: %w", c.Output, cli.ErrUsage)
	}
	return nil
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// OpenInput opens the file argument, or stdin without one (or "-"); path
// is the file's when it is a regular file, whose rows the progress bar
// counts, "" otherwise.
func OpenInput(rest []string, stdin *os.File) (io.ReadCloser, string, error) {
	if len(rest) == 0 || rest[0] == "-" {
		if cli.IsTerminal(stdin) {
			return nil, "", fmt.Errorf("resolve reads the file named, or stdin, which is a terminal here: name a CSV file or pipe one in: %w", cli.ErrUsage)
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

// Run resolves the rows of in and writes them to stdout or --output;
// path names in when it is a regular file, whose rows the progress bar
// counts.
func (c *Config) Run(ctx context.Context, in io.Reader, path string, stdout, stderr io.Writer) error {
	comma, _ := parseDelimiter(c.Delimiter)
	sheet, err := openSheet(in, comma, c.Caps, c.Lang)
	if err != nil {
		return err
	}
	cols, err := c.mapColumns(sheet)
	if err != nil {
		return err
	}
	decimal, err := decimalFor(c.Decimal, sheet.comma)
	if err != nil {
		return err
	}
	out, skip, closeOut, err := c.openOutput(sheet, cellFormat{lang: c.Lang, decimal: decimal}, stdout)
	if err != nil {
		return err
	}
	progress := newRowProgress(stderr, c.Lang, cli.IsTerminal(stderr), skip)
	res, closeRes, err := c.resolver(ctx, progress)
	if err != nil {
		closeOut()
		return err
	}
	defer closeRes()
	if path != "" {
		counting, stop := context.WithCancel(ctx)
		defer stop()
		go countInputRows(counting, path, sheet.comma, c.Caps, progress)
	}
	p := &pipeline{sheet: sheet, cols: cols, req: c.request(), res: res, skip: skip, lang: c.Lang,
		workers: c.Workers, batchSize: c.rowsPerBatch(), progress: progress}
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
	properties []int // in PropertyColumns' order; -1 unused
}

func (c *Config) mapColumns(sheet *sheetReader) (sheetColumns, error) {
	cols := sheetColumns{properties: make([]int, len(PropertyColumns))}
	i, ok := sheet.column(c.Query)
	if !ok {
		return cols, sheet.unknownColumn("query", c.Query)
	}
	cols.query = i
	for j, name := range c.Properties {
		cols.properties[j] = -1
		if strings.TrimSpace(name) == "" {
			continue
		}
		if cols.properties[j], ok = sheet.column(name); !ok {
			return cols, sheet.unknownColumn(PropertyColumns[j].Flag, name)
		}
	}
	return cols, nil
}

// openOutput returns the writer of the output rows, how many input rows
// a resumed output holds already, and the function that flushes and
// closes it.
func (c *Config) openOutput(sheet *sheetReader, format cellFormat, stdout io.Writer) (*sheetWriter, int, func() error, error) {
	header := outputHeader(sheet.header, sheet.bom)
	if c.Output == "" {
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
	if c.Resume {
		f, rows, fresh, err = resumeOutput(c.Output, header, sheet.comma, sheet.caps)
	} else {
		f, err = os.Create(c.Output)
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
func (c *Config) request() resolver.Request {
	return resolver.Request{Mode: c.Mode, Discover: c.Discover, Limit: resolver.DefaultLimit}
}

func (c *Config) rowsPerBatch() int {
	if c.Server != "" {
		return c.BatchSize
	}
	return localBatchSize
}

// resolver returns what resolves a batch of rows: the server's batch
// endpoint, or the index of the data directory.
func (c *Config) resolver(ctx context.Context, progress *rowProgress) (batchResolver, func(), error) {
	if c.Server != "" {
		s := NewClient(c.Server)
		s.lang, s.waiting = c.Lang, progress.waiting
		if key := os.Getenv(APIKeyEnv); key != "" {
			if err := s.signIn(ctx, key); err != nil {
				return nil, nil, err
			}
		}
		return s, func() {}, nil
	}
	searcher, closeSearcher, err := c.Local()
	if err != nil {
		return nil, nil, err
	}
	return localResolver{searcher, c.Lang}, closeSearcher, nil
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
	searcher Searcher
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
func countInputRows(ctx context.Context, path string, comma rune, caps Caps, progress *rowProgress) {
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
