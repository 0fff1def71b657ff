package app

import (
	"companydocs/internal/cli"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"companydocs"
	"companydocs/data"
	"companydocs/index"
	"companydocs/ingest"

	"github.com/schollz/progressbar/v3"
)

// runIngest builds a new index generation from dump files and publishes it.
func runIngest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		dataDir, format, logFormat, cpuProfile string
		keep, maxRecords                       int
		allowShrink, noChanges, full, asked    bool
	)
	fs := newFlagSet("ingest", stdout, stderr)
	fs.Synopsis = "usage: companydocs ingest [flags] FILE..."
	fs.String(&dataDir, "data-dir", defaultDataDir, "data directory")
	fs.String(&format, "format", "auto", "input format: auto, offeneregister, canonical, gleif-csv or gleif-json")
	fs.Int(&keep, "keep", index.DefaultKeep, "number of published index generations to keep")
	fs.IntVar(&maxRecords, "max-records", 0, "read at most this many records of each file (0: all)")
	fs.String(&logFormat, "log-format", "auto", "log format: auto, text or json")
	fs.StringVar(&cpuProfile, "cpu-profile", "", "write a CPU profile of the ingest to this file (go tool pprof)")
	fs.BoolVar(&allowShrink, "allow-shrink", false, "publish even if the new generation holds under half the live generation's profiles")
	fs.BoolVar(&noChanges, "no-changes", false, "do not compare the new profiles with the live generation's: the generation gets no change record (changes.db)")
	fs.BoolVar(&full, "full", false, "index every document anew, instead of building the search index on the live generation's and indexing only the documents that changed (which ingest does unless a tenth of the profiles changed, or a tenth of the index's documents would be deleted ones)")
	fs.BoolVar(&asked, "incremental", false, "build the search index on the live generation's, as ingest does without --full; accepted for scripts that pass it")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := checkIngestFlags(keep, maxRecords, logFormat); err != nil {
		return err
	}
	if full && asked {
		return fmt.Errorf("--full and --incremental ask for opposite builds: pass one of them: %w", errUsage)
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("ingest needs at least one dump file: %w", errUsage)
	}
	f, err := ingest.ParseFormat(format)
	if err != nil {
		return fmt.Errorf("--format (%s): %w: %w", envName("format"), err, errUsage)
	}
	if cpuProfile != "" {
		stop, err := startCPUProfile(cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	inputs, err := ingestInputs(fs.Args(), f)
	if err != nil {
		return err
	}
	logger := newLogger(stderr, logFormat, "info")
	p := newProgressPrinter(stderr, logger)
	opts := BuildOptions{Keep: keep, MaxRecords: maxRecords, AllowShrink: allowShrink, NoChanges: noChanges, Full: full}
	meta, sum, err := BuildGeneration(ctx, dataDir, inputs, opts, p.report, logger)
	p.finish()
	if sum != nil {
		sum.Write(stdout)
	}
	if err != nil {
		return err
	}
	// "Published" would promise the nodes that follow an object store
	// something only companydocs publish does.
	fmt.Fprintf(stdout, "Index generation %s with %d profiles is current in %s (not uploaded: companydocs publish uploads it for the nodes that follow).\n", meta.ID, meta.Profiles, dataDir)
	writeBuildSummary(stdout, meta.Build)
	writeProfileLayers(stdout, meta)
	writeChangeSummary(stdout, meta.Changes)
	return nil
}

// writeBuildSummary tells the operator how the search index was built.
func writeBuildSummary(w io.Writer, b *index.BuildInfo) {
	switch {
	case b == nil:
	case b.Kind == index.BuildIncremental:
		fmt.Fprintf(w, "Search index built on %s: %d documents written, %d deleted, %d segments.\n", b.Base, b.Indexed, b.Deleted, b.Segments)
	case b.Reason == index.ReasonAsked:
		fmt.Fprintln(w, "Search index built anew, as --full asks.")
	default:
		fmt.Fprintf(w, "Search index built anew: %s.\n", b.Reason)
	}
}

// writeProfileLayers tells the operator that the profile store is layered
// on the live generation's, and how many layers it has; nothing when it
// was written whole.
func writeProfileLayers(w io.Writer, m index.Meta) {
	if n := len(m.ProfileLayers); n > 0 && m.Build != nil {
		fmt.Fprintf(w, "Profile store shared with %s, with a layer of the changes on it (%d layers in all).\n", m.Build.Base, n)
	}
}

// writeChangeSummary tells the operator what the change record holds.
func writeChangeSummary(w io.Writer, c *index.ChangeSummary) {
	switch {
	case c == nil:
		fmt.Fprintln(w, "No change record (--no-changes).")
	case c.Previous == "":
		fmt.Fprintf(w, "No changes recorded: %s.\n", c.Note)
	default:
		fields := make([]string, 0, len(c.ByField))
		for _, f := range append(slices.Clone(companydocs.ChangeFields), companydocs.FieldRemoved) {
			if n := c.ByField[f]; n > 0 {
				fields = append(fields, fmt.Sprintf("%s %d", f, n))
			}
		}
		fmt.Fprintf(w, "Changes against %s: %d profiles changed or removed", c.Previous, c.Profiles)
		if len(fields) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(fields, ", "))
		}
		fmt.Fprintf(w, ", %d new.\n", c.Added)
	}
}

// ingestInputs checks that every input file can be opened before anything
// is built, so that a mistyped path fails at once and not after an empty
// summary.
func ingestInputs(paths []string, f ingest.Format) ([]ingest.Input, error) {
	var inputs []ingest.Input
	for _, path := range paths {
		file, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("ingest failed, the live index is unchanged: cannot read input file: %w", err)
		}
		st, err := file.Stat()
		file.Close()
		if err == nil && st.IsDir() {
			return nil, fmt.Errorf("ingest failed, the live index is unchanged: input %s is a directory; name the dump files in it", path)
		}
		inputs = append(inputs, ingest.Input{Path: path, Format: f})
	}
	return inputs, nil
}

// checkIngestFlags finds out-of-range values before anything is opened.
func checkIngestFlags(keep, maxRecords int, logFormat string) error {
	switch err := checkLogFormat(logFormat); {
	case keep < 1:
		return fmt.Errorf("--keep (%s) must be 1 or more, got %d: %w", envName("keep"), keep, errUsage)
	case maxRecords < 0:
		return fmt.Errorf("--max-records must be 0 (all) or more, got %d: %w", maxRecords, errUsage)
	case err != nil:
		return fmt.Errorf("--log-format (%s) %v: %w", envName("log-format"), err, errUsage)
	}
	return nil
}

// startCPUProfile profiles the process into path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// BuildOptions are the ingest's choices beside its inputs.
type BuildOptions struct {
	Keep, MaxRecords int
	// AllowShrink publishes a generation under companydocs.MinShareOfLive
	// of the live one's profiles.
	AllowShrink bool
	// NoChanges leaves out the change record.
	NoChanges bool
	// Full indexes every document anew (--full), where a build otherwise
	// builds the search index on the live generation's (index, "Incremental
	// builds"), which it does unless that generation does not qualify or
	// too much changed.
	Full bool
}

// BuildGeneration ingests inputs into a new generation and publishes it;
// on any error the build is aborted and the live generation stays current.
func BuildGeneration(ctx context.Context, dataDir string, inputs []ingest.Input, opts BuildOptions, progress func(ingest.Progress), logger *slog.Logger) (index.Meta, *ingest.Summary, error) {
	b, err := index.NewBuilder(dataDir, index.BuilderOptions{Keep: opts.Keep, NoChanges: opts.NoChanges, Incremental: !opts.Full, Logger: logger})
	if err != nil {
		return index.Meta{}, nil, err
	}
	restoreGC := relaxGC()
	sum, err := ingest.Run(ctx, inputs, b, ingest.Options{Progress: progress, MaxRecords: opts.MaxRecords})
	// The commit merges the index: its heap is live data rather than the
	// build's short-lived garbage, and at the raised GC target it would
	// count on top of the mapped segments.
	restoreGC()
	if err == nil && sum.Registry.Indexed+sum.GLEIF.Discovery == 0 {
		err = errors.New("the input holds no usable record; nothing was published")
	}
	if err == nil {
		err = checkShrink(dataDir, b.Count(), opts.AllowShrink)
	}
	if err != nil {
		b.Abort()
		return index.Meta{}, sum, fmt.Errorf("ingest failed, the live index is unchanged: %w", err)
	}
	var sources []string
	for _, in := range inputs {
		sources = append(sources, filepath.Base(in.Path))
	}
	meta, err := b.Commit(index.Meta{Sources: sources, Summary: sum.String()})
	if err != nil {
		return meta, sum, fmt.Errorf("publish generation: %w", err)
	}
	return meta, sum, nil
}

// checkShrink applies the service's rule (companydocs.CheckShrink) to the
// generation CURRENT names, read just before the commit.
func checkShrink(dataDir string, next int, allow bool) error {
	name, err := index.ReadCurrent(dataDir)
	if errors.Is(err, index.ErrNoGeneration) {
		return nil
	} else if err != nil {
		return err
	}
	live, err := index.ReadMeta(filepath.Join(dataDir, "index", name))
	if err != nil {
		// An unreadable live generation is no reason to keep serving it.
		return nil
	}
	return companydocs.CheckShrink(name, live.Profiles, next, allow)
}

// ensureGeneration ingests the embedded sample when the data directory
// has no published generation yet.
func (m *Main) ensureGeneration(ctx context.Context) error {
	if name, err := index.ReadCurrent(m.Config.DataDir); err == nil {
		if !m.outdatedSample(name) {
			return nil
		}
		m.Logger.Info("the embedded sample was indexed by an older version; indexing it again", "generation", name)
	} else if !errors.Is(err, index.ErrNoGeneration) {
		return err
	}
	// A private directory: nothing else writes or removes these files.
	sampleDir, err := os.MkdirTemp(m.Config.DataDir, sampleDirPrefix+"*")
	if err != nil {
		return fmt.Errorf("write embedded sample: %w", err)
	}
	defer os.RemoveAll(sampleDir)
	var inputs []ingest.Input
	for _, f := range []struct {
		name    string
		content []byte
	}{{"sample.jsonl.bz2", data.Sample}, {"lei_sample.csv", data.LEISample}} {
		path := filepath.Join(sampleDir, f.name)
		if err := os.WriteFile(path, f.content, 0o644); err != nil {
			return fmt.Errorf("write embedded sample: %w", err)
		}
		inputs = append(inputs, ingest.Input{Path: path})
	}
	fmt.Fprintf(m.Stdout, "No index in %s yet: ingesting the embedded sample of real register and LEI records...\n", m.Config.DataDir)
	p := newProgressPrinter(m.Stderr, m.Logger)
	report := func(pr ingest.Progress) { p.report(pr); m.Metrics.IngestProgress(pr.Records) }
	m.Metrics.IngestStarted()
	meta, sum, err := BuildGeneration(ctx, m.Config.DataDir, inputs, BuildOptions{Keep: m.Config.Keep, AllowShrink: true}, report, m.Logger)
	m.Metrics.IngestFinished()
	p.finish()
	if err != nil {
		return err
	}
	m.Logger.Info("ingested embedded sample", "generation", meta.ID, "profiles", meta.Profiles, "elapsed", sum.Elapsed.Round(time.Millisecond))
	return nil
}

// outdatedSample reports whether generation name holds only the embedded
// sample, built with another index version: such a generation is rebuilt
// instead of refusing to start. Generations built from an operator's dumps
// are never rebuilt behind their back.
func (m *Main) outdatedSample(name string) bool {
	meta, err := index.ReadMeta(filepath.Join(m.Config.DataDir, "index", name))
	if err != nil || meta.Version == index.IndexVersion {
		return false
	}
	for _, src := range meta.Sources {
		if src != "sample.jsonl.bz2" && src != "lei_sample.csv" {
			return false
		}
	}
	return len(meta.Sources) > 0
}

// progressPrinter shows a progress bar on a terminal and log lines
// (at most every 5 s) otherwise.
type progressPrinter struct {
	w       io.Writer
	logger  *slog.Logger
	bar     *progressbar.ProgressBar
	file    string
	lastLog time.Time
}

func newProgressPrinter(w io.Writer, logger *slog.Logger) *progressPrinter {
	return &progressPrinter{w: w, logger: logger}
}

func (p *progressPrinter) report(pr ingest.Progress) {
	if cli.IsTerminal(p.w) {
		p.barReport(pr)
		return
	}
	if time.Since(p.lastLog) < 5*time.Second && !pr.FileDone {
		return
	}
	p.lastLog = time.Now()
	p.logger.Info("ingest progress", "file", filepath.Base(pr.File), "bytes", pr.Bytes, "total_bytes", pr.TotalBytes,
		"records", pr.Records, "records_per_sec", int(pr.RecordsPerSec), "done", pr.FileDone)
}

func (p *progressPrinter) barReport(pr ingest.Progress) {
	if p.bar == nil || p.file != pr.File {
		p.finish()
		p.file = pr.File
		p.bar = progressbar.NewOptions64(pr.TotalBytes,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetDescription(fmt.Sprintf("[%d/%d] %s", pr.FileIndex+1, pr.Files, filepath.Base(pr.File))),
			progressbar.OptionThrottle(200*time.Millisecond))
	}
	p.bar.Describe(fmt.Sprintf("[%d/%d] %s: %d records, %d/s", pr.FileIndex+1, pr.Files, filepath.Base(pr.File), pr.Records, int(pr.RecordsPerSec)))
	p.bar.Set64(pr.Bytes)
}

func (p *progressPrinter) finish() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
		p.bar = nil
	}
}
