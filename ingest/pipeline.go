package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"companydocs"
	"companydocs/register"
)

// Sink stores profiles while a generation is built. index.Builder implements it.
type Sink interface {
	// Get returns the stored profile with this id, or nil and no error when there is none.
	Get(id string) (*companydocs.Profile, error)
	// Put inserts or replaces the profile stored under p.ID.
	Put(p *companydocs.Profile) error
	// ByNumber returns every stored profile with this register type and number, at any court, with any suffix or former court.
	ByNumber(t register.Type, number string) ([]*companydocs.Profile, error)
}

// Input is one file to ingest.
type Input struct {
	Path string
	// Format forces a format; FormatAuto detects it from content.
	Format Format
}

// Options tune a Run. The zero value is ready to use.
type Options struct {
	// Progress, if set, is called at most every ProgressInterval while a
	// file is read, and once when each file is done.
	Progress func(Progress)
	// ProgressInterval defaults to 500 ms.
	ProgressInterval time.Duration
	// MaxLineBytes is the longest accepted line (DefaultMaxLineBytes).
	MaxLineBytes int
	// MaxRecords, if positive, stops reading each file after that many
	// records (for samples and tests).
	MaxRecords int
	// MaxExamples is how many places are kept per reason (default 5).
	MaxExamples int
}

// Progress reports how far a Run has come.
type Progress struct {
	File      string
	FileIndex int // 0-based, in processing order
	Files     int
	// Bytes of the current file read so far, as stored (compressed), and
	// the file's size (0 if unknown).
	Bytes, TotalBytes int64
	// Records read so far in this Run, and the rate over the whole Run.
	Records       int
	RecordsPerSec float64
	Elapsed       time.Duration
	// FileDone is set on the report made when a file is finished.
	FileDone bool
}

// Run ingests files into sink: every registry file first (OffeneRegister,
// canonical), then every GLEIF file, so that the order of the files does
// not matter. It returns the summary of what it read, or an error naming
// the file and line of a fatal input problem (unknown format, damaged
// compression, mostly unreadable lines); the caller must then not publish
// what the sink holds.
func Run(ctx context.Context, files []Input, sink Sink, opts Options) (*Summary, error) {
	r := &run{sink: sink, opts: opts, sum: newSummary(opts.MaxExamples), start: time.Now(), seenLEI: map[register.LEI]*seenLEI{}}
	ordered, err := detectAll(files)
	if err != nil {
		return r.sum, err
	}
	for i, in := range ordered {
		if err := r.file(ctx, i, len(ordered), in); err != nil {
			r.sum.Elapsed = time.Since(r.start)
			return r.sum, err
		}
	}
	r.sum.Elapsed = time.Since(r.start)
	if !r.sum.Balanced() {
		// Every record read is indexed, merged or skipped; a summary that
		// does not add up means a record went missing in the pipeline.
		return r.sum, errors.New("the summary does not account for every record read; nothing is published")
	}
	return r.sum, nil
}

// detectAll detects every file's format and orders registry files before
// GLEIF files, keeping the given order within each group.
func detectAll(files []Input) ([]Input, error) {
	var registry, gleif []Input
	for _, in := range files {
		f, err := open(in.Path, in.Format, false)
		if err != nil {
			return nil, err
		}
		in.Format = f.Format
		f.Close()
		if in.Format.IsGLEIF() {
			gleif = append(gleif, in)
		} else {
			registry = append(registry, in)
		}
	}
	return append(registry, gleif...), nil
}

// run is the state of one Run.
type run struct {
	sink    Sink
	opts    Options
	sum     *Summary
	start   time.Time
	records int
	seenLEI map[register.LEI]*seenLEI
}

func (r *run) file(ctx context.Context, index, total int, in Input) error {
	f, err := Open(in.Path, in.Format)
	if err != nil {
		return err
	}
	defer f.Close()
	stats := FileStats{Name: f.Name, Format: f.Format, Compression: f.Compression, Bytes: f.Size}
	fileStart, lastReport := time.Now(), time.Now()
	report := func(done bool) {
		if r.opts.Progress != nil {
			r.opts.Progress(r.progress(f, index, total, done))
		}
	}
	err = readAhead(ctx, f, r.opts.MaxLineBytes, func(item Item) error {
		if r.opts.MaxRecords > 0 && stats.Records >= r.opts.MaxRecords {
			return errStop
		}
		stats.Records++
		r.records++
		if r.opts.Progress != nil && r.records%256 == 0 && time.Since(lastReport) >= r.interval() {
			lastReport = time.Now()
			report(false)
		}
		return r.item(f, item)
	})
	stats.Elapsed = time.Since(fileStart)
	r.sum.Files = append(r.sum.Files, stats)
	if err != nil && err != errStop {
		return err
	}
	report(true)
	return nil
}

// errStop ends reading a file early (Options.MaxRecords).
var errStop = fmt.Errorf("record limit reached")

func (r *run) interval() time.Duration {
	if r.opts.ProgressInterval > 0 {
		return r.opts.ProgressInterval
	}
	return 500 * time.Millisecond
}

func (r *run) progress(f *File, index, total int, done bool) Progress {
	elapsed := time.Since(r.start)
	p := Progress{File: f.Name, FileIndex: index, Files: total, Bytes: f.BytesRead(), TotalBytes: f.Size,
		Records: r.records, Elapsed: elapsed, FileDone: done}
	if s := elapsed.Seconds(); s > 0 {
		p.RecordsPerSec = float64(r.records) / s
	}
	return p
}

// item dispatches one record.
func (r *run) item(f *File, item Item) error {
	at := Location{File: f.Name, Line: item.Line}
	switch {
	case f.Format.IsGLEIF():
		r.sum.GLEIF.Read++
		if item.Skip == nil {
			item.Skip = oversizedGLEIF(item.GLEIF)
		}
		if item.Skip != nil {
			at.Detail = item.Skip.Detail
			r.sum.GLEIF.Skipped++
			r.sum.count(KindSkipped, item.Skip.Reason, at)
			return nil
		}
		return r.gleif(item.GLEIF, at)
	default:
		r.sum.Registry.Read++
		if item.Skip == nil {
			item.Skip = oversizedProfile(item.Profile)
		}
		if item.Skip != nil {
			at.Detail = item.Skip.Detail
			r.sum.Registry.Skipped++
			r.sum.count(KindSkipped, item.Skip.Reason, at)
			return nil
		}
		return r.registry(item.Profile, at)
	}
}

// registry stores a registry-cache profile, merging a duplicate entry.
func (r *run) registry(p *companydocs.Profile, at Location) error {
	existing, err := r.sink.Get(p.ID)
	if err != nil {
		return fmt.Errorf("%s: line %d: get %s: %w", at.File, at.Line, p.ID, err)
	}
	if existing == nil {
		r.sum.Registry.Indexed++
		return r.put(p, at)
	}
	r.sum.Registry.Merged++
	at.Detail = fmt.Sprintf("%s (%s)", p.Ref.String(), p.ID)
	r.sum.count(KindMerged, ReasonDuplicateEntry, at)
	return r.put(mergeDuplicate(existing, p), at)
}

// mergeDuplicate keeps the record retrieved later (on a tie, the one read
// later): it is the register's newer state, documents included, since the
// register's holdings change (a removed entry loses its current printout).
// LEI links are not register state; they are kept from both.
func mergeDuplicate(old, newer *companydocs.Profile) *companydocs.Profile {
	keep, other := newer, old
	if newer.RetrievedAt.Before(old.RetrievedAt) {
		keep, other = old, newer
	}
	for _, l := range other.LEIs {
		if !hasLEI(keep, l.LEI) {
			keep.LEIs = append(keep.LEIs, l)
		}
	}
	return keep
}

func hasLEI(p *companydocs.Profile, lei register.LEI) bool {
	for _, l := range p.LEIs {
		if l.LEI == lei {
			return true
		}
	}
	return false
}

func (r *run) put(p *companydocs.Profile, at Location) error {
	if err := r.sink.Put(p); err != nil {
		return fmt.Errorf("%s: line %d: store %s: %w", at.File, at.Line, p.ID, err)
	}
	return nil
}

// gleif links a GLEIF record to its registry profile or stores it as a
// discovery candidate. A second record with the same LEI (the CSV and the
// API file often overlap) is applied again, idempotently, and counted as
// merged, unless it differs from the first in name or registration (see
// recordsDiffer).
func (r *run) gleif(rec *GLEIFRecord, at Location) error {
	if !rec.IsGerman() {
		at.Detail = fmt.Sprintf("%s %s, jurisdiction %s", rec.LEI, rec.RACode, orNone(rec.Jurisdiction))
		r.sum.GLEIF.NotGerman++
		r.sum.count(KindSkipped, ReasonNotGerman, at)
		return nil
	}
	seen := r.seenLEI[rec.LEI]
	switch {
	case seen != nil && seen.differs:
		r.countAfterDiffering(seen, rec, at)
		return nil
	case seen != nil && !sameGLEIFRecord(&seen.first, rec):
		return r.recordsDiffer(seen, rec, at)
	}
	m, err := matchGLEIF(r.sink, rec)
	if err != nil {
		return fmt.Errorf("%s: line %d: %w", at.File, at.Line, err)
	}
	duplicate := seen != nil
	if duplicate {
		at.Detail = string(rec.LEI)
		r.sum.GLEIF.Merged++
		r.sum.count(KindMerged, ReasonDuplicateLEI, at)
	} else {
		seen = &seenLEI{first: *rec, at: at, match: m}
		seen.match.target = nil // the profile may be stored again; only the identity is kept
		r.seenLEI[rec.LEI] = seen
	}
	if m.target != nil {
		return r.link(m.target, rec, at, seen, duplicate)
	}
	return r.discover(rec, m, at, seen, duplicate)
}

func (r *run) link(p *companydocs.Profile, rec *GLEIFRecord, at Location, seen *seenLEI, duplicate bool) error {
	if !duplicate {
		r.sum.GLEIF.Linked++
		seen.outcome = outcomeLinked
	}
	if !addLEI(p, rec) {
		return nil
	}
	seen.linkedTo = p.ID
	return r.put(p, at)
}

func (r *run) discover(rec *GLEIFRecord, m gleifMatch, at Location, seen *seenLEI, duplicate bool) error {
	p := discoveryProfile(rec, m)
	if !duplicate {
		seen.outcome = r.countDiscovery(rec, m, p, at)
	}
	existing, err := r.sink.Get(p.ID)
	if err != nil {
		return fmt.Errorf("%s: line %d: get %s: %w", at.File, at.Line, p.ID, err)
	}
	if existing != nil && p.RetrievedAt.Before(existing.RetrievedAt) {
		return nil // the stored record is newer
	}
	return r.put(p, at)
}

// countDiscovery counts a discovery candidate and returns how it was counted.
func (r *run) countDiscovery(rec *GLEIFRecord, m gleifMatch, p *companydocs.Profile, at Location) gleifOutcome {
	if m.conflict == "" {
		r.sum.GLEIF.Discovery++
		if p.Verified {
			r.sum.GLEIF.DiscoveryVerified++
			return outcomeDiscoveryVerified
		}
		return outcomeDiscovery
	}
	at.Detail = fmt.Sprintf("%s: %s", rec.LEI, m.detail)
	r.addConflict(rec.LEI, m.conflict, m.detail, at)
	return outcomeConflict
}

// addConflict counts one conflicting GLEIF record and lists it.
func (r *run) addConflict(lei register.LEI, reason, detail string, at Location) {
	r.sum.GLEIF.Conflicts++
	r.sum.count(KindConflict, reason, at)
	if len(r.sum.Conflicts) < MaxConflictsListed {
		r.sum.Conflicts = append(r.sum.Conflicts, Conflict{LEI: lei, Reason: reason, Detail: detail, Location: at})
	}
}

// readAheadBatch is how many decoded items travel together from the
// decoding goroutine to the one that stores them; a batch also ends once
// its items were decoded from readAheadBatchBytes (real records are a few
// kilobytes, so only a dump of huge lines reaches it), which bounds the
// memory of the batches in flight to readAheadBatches of that size.
const (
	readAheadBatch      = 256
	readAheadBatchBytes = 4 << 20
	readAheadBatches    = 4
)

// readAhead reads and decodes f in its own goroutine while fn (which stores
// into the sink) runs in the caller's: with decompression in a third
// goroutine, the three stages overlap. Items reach fn in file order.
func readAhead(ctx context.Context, f *File, maxLine int, fn func(Item) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []Item, readAheadBatches)
	readErr := make(chan error, 1)
	go func() {
		defer close(batches)
		batch := make([]Item, 0, readAheadBatch)
		bytes := 0
		err := f.Read(ctx, func(item Item) error {
			batch = append(batch, item)
			if bytes += item.Bytes; len(batch) < readAheadBatch && bytes < readAheadBatchBytes {
				return nil
			}
			select {
			case batches <- batch:
			case <-ctx.Done():
				return ctx.Err()
			}
			batch, bytes = make([]Item, 0, readAheadBatch), 0
			return nil
		}, WithMaxLineBytes(maxLine))
		if err == nil && len(batch) > 0 {
			select {
			case batches <- batch:
			case <-ctx.Done():
			}
		}
		readErr <- err
	}()
	for batch := range batches {
		for _, item := range batch {
			if err := fn(item); err != nil {
				cancel()
				for range batches { // let the reader finish
				}
				return err
			}
		}
	}
	return <-readErr
}
