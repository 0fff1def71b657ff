package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

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
	fs := newFlagSet("search", stdout, stderr)
	fs.Synopsis = "usage: companydocs search [flags] QUERY"
	fs.String(&dataDir, "data-dir", defaultDataDir, "data directory")
	fs.StringVar(&mode, "mode", resolver.ModeStandard, "standard or deep")
	fs.BoolVar(&discover, "discover", false, "include discovery candidates")
	fs.IntVar(&limit, "limit", resolver.DefaultLimit, fmt.Sprintf("number of candidates, 1 to %d", resolver.MaxLimit))
	fs.BoolVar(&asJSON, "json", false, "print the API's JSON")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := checkSearchArgs(fs.Args(), mode, limit); err != nil {
		return err
	}
	// Only warnings reach stderr: stdout holds the answer alone.
	logger := newLogger(stderr, "auto", "warn")
	live, err := index.OpenLive(dataDir, index.LiveOptions{PollInterval: -1, Logger: logger})
	if err != nil {
		return err
	}
	defer live.Close()
	res, err := LiveSearcher{live}.Search(ctx, resolver.Request{
		Query: strings.Join(fs.Args(), " "), Mode: mode, Discover: discover, Limit: limit,
	})
	if companydocs.ErrorCode(err) == companydocs.EINVALIDQUERY {
		return fmt.Errorf("%w: %w", err, errUsage)
	} else if err != nil {
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

// checkSearchArgs finds usage errors before the index is opened.
func checkSearchArgs(rest []string, mode string, limit int) error {
	switch {
	case strings.TrimSpace(strings.Join(rest, "")) == "":
		return fmt.Errorf("search needs a query: a company name, city, register number or LEI: %w", errUsage)
	case mode != resolver.ModeStandard && mode != resolver.ModeDeep:
		return fmt.Errorf("--mode must be %s or %s, got %q: %w", resolver.ModeStandard, resolver.ModeDeep, mode, errUsage)
	case limit < 1 || limit > resolver.MaxLimit:
		return fmt.Errorf("--limit must be 1 to %d, got %d: %w", resolver.MaxLimit, limit, errUsage)
	}
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

// TableWidth is the width the search table fits in: long names, courts
// and seats are cut short with "…" rather than wrapped by the terminal.
const TableWidth = 120

// tableGap separates two columns of the table.
const tableGap = "  "

// tableShrinkable are the columns cut short to fit TableWidth (name,
// court, number, seat); the others are short by nature.
var tableShrinkable = []int{4, 5, 6, 7}

// minShrunkWidth is as narrow as a shrinkable column gets.
const minShrunkWidth = 8

func printTable(stdout io.Writer, candidates []companydocs.Candidate) {
	rows := [][]string{{"#", "LABEL", "CONF", "ORDERABLE", "NAME", "COURT", "NUMBER", "SEAT"}}
	for i, c := range candidates {
		rows = append(rows, []string{fmt.Sprint(i + 1), c.ConfidenceLabel, fmt.Sprintf("%.2f", c.Confidence),
			fmt.Sprint(c.OrderingEligible), c.Name, c.Court, c.RegistryNumber, c.City})
	}
	widths := columnWidths(rows)
	indent := 0 // where the name column starts: the reasons go under it
	for _, w := range widths[:4] {
		indent += w + len(tableGap)
	}
	for i, row := range rows {
		cells := make([]string, len(row))
		for j, cell := range row {
			cells[j] = padRight(companydocs.Shorten(cell, widths[j]), widths[j])
		}
		fmt.Fprintln(stdout, strings.TrimRight(strings.Join(cells, tableGap), " "))
		if i == 0 {
			continue
		}
		reasons := strings.Join(candidates[i-1].ConfidenceReasons, "; ")
		for _, line := range wrapWords(reasons, TableWidth-indent-2) {
			fmt.Fprintln(stdout, strings.Repeat(" ", indent+2)+line)
		}
	}
}

// columnWidths returns each column's widest cell, the widest shrinkable
// column narrowed one character at a time until a row fits TableWidth.
func columnWidths(rows [][]string) []int {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for j, cell := range row {
			widths[j] = max(widths[j], utf8.RuneCountInString(cell))
		}
	}
	total := len(tableGap) * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	for total > TableWidth {
		widest := tableShrinkable[0]
		for _, j := range tableShrinkable {
			if widths[j] > widths[widest] {
				widest = j
			}
		}
		if widths[widest] <= minShrunkWidth {
			break
		}
		widths[widest]--
		total--
	}
	return widths
}

// wrapWords breaks text into lines of at most width characters at
// spaces; a word longer than width is cut short.
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		word = companydocs.Shorten(word, width)
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func padRight(s string, n int) string {
	return s + strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
}
