package ingest

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"companydocs"
	"companydocs/register"
)

// Kinds of counted outcome other than indexed, linked and discovery.
const (
	KindSkipped  = "skipped"
	KindMerged   = "merged"
	KindConflict = "conflict"
)

// Conflict reasons: a GLEIF record that matches register entries but is
// not linked (and ReasonLEIRecordsDiffer, an LEI whose records differ).
const (
	ReasonSeveralEntries = "register number matches several entries"
	ReasonNameDiffers    = "name clearly differs from the register entry"
)

// Summary accounts for every input line of a Run. For registry files
// Read = Indexed + Merged + Skipped; for GLEIF files Read = Linked +
// Discovery + Conflicts + Merged + NotGerman + Skipped. Blank lines are not
// records and are not counted.
type Summary struct {
	Files    []FileStats
	Registry RegistryCounts
	GLEIF    GLEIFCounts
	// Reasons counts skipped, merged and conflicting records by reason, in
	// the order each reason first occurred.
	Reasons []*ReasonStats
	// Conflicts lists GLEIF records that were not linked because the
	// register says otherwise, or because another record of their LEI
	// differs (up to MaxConflictsListed; GLEIF.Conflicts has the full count).
	Conflicts []Conflict
	Elapsed   time.Duration

	reasonIndex map[string]*ReasonStats
	maxExamples int
}

// MaxConflictsListed bounds Summary.Conflicts.
const MaxConflictsListed = 1000

// FileStats describes one input file of a Run.
type FileStats struct {
	Name        string
	Format      Format
	Compression Compression
	// Bytes is the size of the file on disk.
	Bytes int64
	// Records counts the non-blank lines (rows) read from the file.
	Records int
	Elapsed time.Duration
}

// RegistryCounts accounts for the records of registry files.
type RegistryCounts struct {
	Read, Indexed, Merged, Skipped int
}

// GLEIFCounts accounts for the records of GLEIF files. Every conflict is
// also stored as an unverified discovery candidate, but counted only here
// under Conflicts.
type GLEIFCounts struct {
	Read, Linked, Discovery, DiscoveryVerified, Conflicts, Merged, NotGerman, Skipped int
}

// ReasonStats counts the records of one kind and reason, with the first few
// places where it happened.
type ReasonStats struct {
	Kind     string
	Reason   string
	Count    int
	Examples []Location
}

// Location is a place in the input.
type Location struct {
	File   string
	Line   int
	Detail string
}

// Conflict is a GLEIF record that was not linked to a register entry.
type Conflict struct {
	LEI    register.LEI
	Reason string
	Detail string
	Location
}

func newSummary(maxExamples int) *Summary {
	if maxExamples <= 0 {
		maxExamples = 5
	}
	return &Summary{reasonIndex: map[string]*ReasonStats{}, maxExamples: maxExamples}
}

// count records one skipped, merged or conflicting record.
func (s *Summary) count(kind, reason string, at Location) {
	key := kind + "\x00" + reason
	rs := s.reasonIndex[key]
	if rs == nil {
		rs = &ReasonStats{Kind: kind, Reason: reason}
		s.reasonIndex[key] = rs
		s.Reasons = append(s.Reasons, rs)
	}
	rs.Count++
	if len(rs.Examples) < s.maxExamples {
		rs.Examples = append(rs.Examples, at)
	}
}

// Balanced reports whether every record read is accounted for.
func (s *Summary) Balanced() bool {
	r, g := s.Registry, s.GLEIF
	return r.Read == r.Indexed+r.Merged+r.Skipped &&
		g.Read == g.Linked+g.Discovery+g.Conflicts+g.Merged+g.NotGerman+g.Skipped
}

// String renders the summary as Write does.
func (s *Summary) String() string {
	var b strings.Builder
	s.Write(&b)
	return b.String()
}

// Write prints the summary as readable tables: files, totals, then every
// reason with the first places it occurred.
func (s *Summary) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tFORMAT\tCOMPRESSION\tBYTES\tRECORDS\tTIME")
	for _, f := range s.Files {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", f.Name, f.Format, f.Compression, f.Bytes, f.Records, f.Elapsed.Round(time.Millisecond))
	}
	fmt.Fprintln(tw)
	r, g := s.Registry, s.GLEIF
	fmt.Fprintf(tw, "registry records\tread %d\tindexed %d\tmerged %d\tskipped %d\n", r.Read, r.Indexed, r.Merged, r.Skipped)
	fmt.Fprintf(tw, "GLEIF records\tread %d\tlinked %d\tdiscovery %d (verified %d)\tconflicts %d\tmerged %d\tnot German %d\tskipped %d\n",
		g.Read, g.Linked, g.Discovery, g.DiscoveryVerified, g.Conflicts, g.Merged, g.NotGerman, g.Skipped)
	fmt.Fprintf(tw, "elapsed\t%s\n", s.Elapsed.Round(time.Millisecond))
	if err := tw.Flush(); err != nil {
		return err
	}
	return s.writeReasons(w)
}

func (s *Summary) writeReasons(w io.Writer) error {
	if len(s.Reasons) == 0 {
		return nil
	}
	reasons := append([]*ReasonStats(nil), s.Reasons...)
	sort.SliceStable(reasons, func(i, j int) bool { return reasons[i].Kind < reasons[j].Kind })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nKIND\tREASON\tCOUNT\tFIRST OCCURRENCES")
	for _, rs := range reasons {
		for i, ex := range rs.Examples {
			kind, reason, count := "", "", ""
			if i == 0 {
				kind, reason, count = rs.Kind, rs.Reason, fmt.Sprint(rs.Count)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s:%d %s\n", kind, reason, count, ex.File, ex.Line, companydocs.Shorten(strings.ReplaceAll(ex.Detail, "\t", " "), 120))
		}
	}
	return tw.Flush()
}
