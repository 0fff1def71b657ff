package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"companydocs/internal/bench"
)

// ingestResult is one timed ingest.
type ingestResult struct {
	Machine       machine       `json:"machine"`
	Files         []string      `json:"files"`
	Profiles      int           `json:"profiles"`
	Wall          time.Duration `json:"wall"`
	CPU           time.Duration `json:"cpu"`
	RecordsPerSec float64       `json:"records_per_sec"`
	// RecordsPerCPUSec is profiles per second of CPU time (user + system).
	RecordsPerCPUSec float64 `json:"records_per_cpu_sec"`
	PeakRSS          int64   `json:"peak_rss_bytes"`
	DiskBytes        int64   `json:"disk_bytes"`
	Command          string  `json:"command"`
}

func runIngest(ctx context.Context, args []string) error {
	fs := newFlags("ingest")
	bin := fs.String("bin", "bin/companydocs", "companydocs binary")
	dataDir := fs.String("data-dir", "", "data directory (must be new or empty)")
	jsonOut := fs.String("json", "", "write the result as JSON here")
	cpuProfile := fs.String("cpu-profile", "", "have the ingest write a CPU profile here")
	cold := fs.Bool("cold", false, "drop the data directory's files from the page cache first, as a daily ingest finds them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dataDir == "" || fs.NArg() == 0 {
		return fmt.Errorf("need -data-dir and dump files")
	}
	if *cold {
		if err := bench.DropFromPageCache(*dataDir); err != nil {
			return err
		}
	}
	files := fs.Args()
	if *cpuProfile != "" {
		files = append([]string{"--cpu-profile", *cpuProfile}, files...)
	}
	res, err := timeIngest(ctx, *bin, *dataDir, files)
	if err != nil {
		return err
	}
	printMachine(res.Machine)
	fmt.Printf("| profiles | wall | records/s | CPU time | records/CPU-s | peak RSS | index on disk |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Printf("| %d | %s | %.0f | %s | %.0f | %s | %s |\n", res.Profiles, res.Wall.Round(time.Second), res.RecordsPerSec,
		res.CPU.Round(time.Second), res.RecordsPerCPUSec, bench.MiB(res.PeakRSS), bench.MiB(res.DiskBytes))
	return writeJSON(*jsonOut, res)
}

func timeIngest(ctx context.Context, bin, dataDir string, files []string) (ingestResult, error) {
	args := append([]string{"ingest", "--data-dir", dataDir, "--log-format", "json"}, files...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	res := ingestResult{Machine: describeMachine(), Files: files, Command: bin + " " + strings.Join(args, " ")}
	run, err := bench.RunProcess(cmd)
	if err != nil {
		return res, fmt.Errorf("%w: %s", err, out.String())
	}
	res.Wall, res.CPU, res.PeakRSS = run.Wall, run.CPU, run.PeakRSS
	res.Profiles = publishedProfiles(out.String())
	res.RecordsPerSec = float64(res.Profiles) / run.Wall.Seconds()
	res.RecordsPerCPUSec = float64(res.Profiles) / run.CPU.Seconds()
	res.DiskBytes, err = bench.DirSize(filepath.Join(dataDir, "index"))
	return res, err
}

// publishedProfiles reads "Index generation X with N profiles is current
// in ...", or "Published index generation X with N profiles." of a binary
// from before ingest stopped calling its generation published.
func publishedProfiles(out string) int {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var id string
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "Index generation %s with %d profiles is current", &id, &n); err == nil {
			return n
		}
		if _, err := fmt.Sscanf(sc.Text(), "Published index generation %s with %d profiles.", &id, &n); err == nil {
			return n
		}
	}
	return 0
}
