package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"companydocs/index"
	"companydocs/internal/bench"
)

// listFlag is a comma-separated list of integers, e.g. "1,4,16".
type listFlag []int

func (l *listFlag) String() string { return fmt.Sprint([]int(*l)) }
func (l *listFlag) Set(s string) error {
	*l = nil
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return fmt.Errorf("bad count %q", p)
		}
		*l = append(*l, n)
	}
	return nil
}

// stringsFlag collects a repeated flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func readQueries(path string) ([]bench.Query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open query set: %w", err)
	}
	defer f.Close()
	var out []bench.Query
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var q bench.Query
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("query set %q: %w", path, err)
		}
		out = append(out, q)
	}
	return out, sc.Err()
}

func filterKinds(qs []bench.Query, kinds ...string) []bench.Query {
	var out []bench.Query
	for _, q := range qs {
		for _, k := range kinds {
			if q.Kind == k {
				out = append(out, q)
			}
		}
	}
	return out
}

// withoutKinds returns the queries of the other kinds.
func withoutKinds(qs []bench.Query, kinds ...string) []bench.Query {
	return slices.DeleteFunc(slices.Clone(qs), func(q bench.Query) bool { return slices.Contains(kinds, q.Kind) })
}

func kindsOf(qs []bench.Query) []string {
	seen := map[string]bool{}
	var out []string
	for _, q := range qs {
		if !seen[q.Kind] {
			seen[q.Kind] = true
			out = append(out, q.Kind)
		}
	}
	return out
}

func writeJSON(path string, v any) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// machine describes where a measurement ran.
type machine struct {
	Date    string `json:"date"`
	CPUs    int    `json:"cpus"`
	CPU     string `json:"cpu"`
	MemKiB  string `json:"mem_total"`
	LoadAvg string `json:"load_avg"`
}

func describeMachine() machine {
	m := machine{Date: time.Now().UTC().Format(time.RFC3339), CPUs: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemKiB = strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(b), "\n", 2)[0], "MemTotal:"))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.LoadAvg = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return m
}

func printMachine(m machine) {
	fmt.Printf("\n_%s, %d CPUs (%s), %s memory, load average %s_\n\n", m.Date, m.CPUs, m.CPU, m.MemKiB, m.LoadAvg)
}

func newFlags(name string) *flag.FlagSet {
	return flag.NewFlagSet(name, flag.ContinueOnError)
}

// openQuiet opens the published generation of dataDir for searches in
// process, without polling for new ones and without logs.
func openQuiet(dataDir string) (*index.Live, error) {
	return index.OpenLive(dataDir, index.LiveOptions{PollInterval: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}
