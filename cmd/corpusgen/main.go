// Command corpusgen writes a deterministic synthetic corpus of German
// register records in the OffeneRegister JSONL format, drawn from the real
// distributions of the given real dump files: register slots (courts,
// former courts, types, suffixes), seats per court, legal-form spellings
// and name words per register type, officer names and positions, document
// holdings, and the share of live records.
//
// Usage:
//
//	corpusgen [-seed N] [-n COUNT | -total N] [-names DIR] -o OUT.jsonl[.gz] REAL.jsonl.bz2...
//
// With -total the count is N minus the number of real records read, so that
// real plus synthetic records make N. Synthetic register numbers start above
// every real one, so company numbers never collide with real ones.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"companydocs/internal/bench"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "corpusgen:", err)
		}
		os.Exit(1)
	}
}

type options struct {
	seed         uint64
	count, total int
	livePerMille int
	names, out   string
	workers      int
}

func parse(args []string, stderr io.Writer) (options, []string, error) {
	var o options
	fs := flag.NewFlagSet("corpusgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Uint64Var(&o.seed, "seed", 1, "random seed: the same seed and inputs give the same bytes")
	fs.IntVar(&o.count, "n", 0, "number of synthetic records")
	fs.IntVar(&o.total, "total", 0, "make real plus synthetic records this many (instead of -n)")
	fs.IntVar(&o.livePerMille, "live-per-mille", 300, "share of currently registered records, per 1,000")
	fs.StringVar(&o.names, "names", "../shared/data/names", "directory with the officer name frequency files")
	fs.StringVar(&o.out, "o", "", "output file (.jsonl, or .jsonl.gz for gzip)")
	fs.IntVar(&o.workers, "workers", runtime.GOMAXPROCS(0), "parallel workers")
	if err := fs.Parse(args); err != nil {
		return o, nil, err
	}
	if o.out == "" || fs.NArg() == 0 || (o.count == 0) == (o.total == 0) {
		fs.Usage()
		return o, nil, errors.New("need -o, one of -n or -total, and at least one real dump file")
	}
	return o, fs.Args(), nil
}

func run(args []string, stderr io.Writer) error {
	o, real, err := parse(args, stderr)
	if err != nil {
		return err
	}
	start := time.Now()
	m, err := bench.LearnModel(real, o.names, o.workers)
	if err != nil {
		return err
	}
	learned := time.Since(start)
	count := o.count
	if o.total > 0 {
		count = o.total - m.Records
	}
	if count < 1 {
		return fmt.Errorf("nothing to generate: %d real records already reach -total %d", m.Records, o.total)
	}
	if err := write(m, o, count); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "learned from %d real records in %s; wrote %d synthetic records to %s in %s\n",
		m.Records, learned.Round(time.Millisecond), count, o.out, (time.Since(start) - learned).Round(time.Millisecond))
	return nil
}

func write(m *bench.Model, o options, count int) error {
	f, err := os.Create(o.out)
	if err != nil {
		return fmt.Errorf("create output: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	opts := bench.GenOptions{Seed: o.seed, Count: count, LivePerMille: o.livePerMille, Workers: o.workers, Gzip: strings.HasSuffix(o.out, ".gz")}
	err = bench.Generate(m, opts, bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close output: %w", cerr)
	}
	return err
}
