package bench

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ProcMemory is what /proc/<pid>/status says about a process's memory.
type ProcMemory struct {
	RSS  int64 // VmRSS, bytes
	Peak int64 // VmHWM, bytes
}

// ReadProcMemory reads VmRSS and VmHWM of a running process.
func ReadProcMemory(pid int) (ProcMemory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcMemory{}, fmt.Errorf("read process status: %w", err)
	}
	defer f.Close()
	var m ProcMemory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch k {
		case "VmRSS":
			m.RSS = kib(v)
		case "VmHWM":
			m.Peak = kib(v)
		}
	}
	return m, sc.Err()
}

func kib(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
	return n << 10
}

// DirSize is the total size of the regular files under dir.
func DirSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	return total, err
}

// MiB formats a byte count in MiB.
func MiB(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
