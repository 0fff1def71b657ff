package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dataDirLockName is the file in a data directory that the process owning
// the directory holds an flock on: a serving process for its whole life
// (its start-up ingest included), or the accounts command. Ingest does not
// take it: publishing into a served directory is how a server gets a new
// generation (index/LOCK keeps builds apart). The file stays behind when
// the holder exits; the lock does not.
const dataDirLockName = "LOCK"

// sampleDirPrefix names the private directory the embedded sample is
// written into while serve ingests it.
const sampleDirPrefix = ".sample-"

// DataDirInUseError is returned when another process holds the data
// directory's lock.
type DataDirInUseError struct {
	Dir string
	// Holder is what the holder wrote into the lock file: "PID COMMAND",
	// empty if it has not written it yet.
	Holder string
}

func (e *DataDirInUseError) Error() string {
	pid, command, ok := strings.Cut(e.Holder, " ")
	if _, err := strconv.Atoi(pid); err != nil || !ok {
		return fmt.Sprintf("the data directory %s is in use by another companydocs process", e.Dir)
	}
	return fmt.Sprintf("the data directory %s is in use by companydocs %s (pid %s)", e.Dir, command, pid)
}

// lockDataDir takes the data directory's lock for command without waiting,
// and writes "PID COMMAND" into the lock file for the message a second
// process gets. The directory must exist. The lock lasts until the
// returned file is closed or the process ends.
func lockDataDir(dir, command string) (*os.File, error) {
	path := filepath.Join(dir, dataDirLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the lock of the data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readHolder(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &DataDirInUseError{Dir: dir, Holder: holder}
		}
		return nil, fmt.Errorf("lock the data directory %s: %w", dir, err)
	}
	if err := writeHolder(f, command); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the lock of the data directory %s: %w", dir, err)
	}
	return f, nil
}

func readHolder(f *os.File) string {
	b, _ := io.ReadAll(io.LimitReader(f, 256))
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strings.TrimSpace(string(line))
}

func writeHolder(f *os.File, command string) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+" "+command+"\n"), 0)
	return err
}

// lockDataDir creates the data directory if needed and takes its lock
// before serve touches anything else in it. Private sample directories
// left by a killed server are removed: under the lock, nobody uses them.
func (m *Main) lockDataDir() error {
	if err := os.MkdirAll(m.Config.DataDir, 0o755); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	lock, err := lockDataDir(m.Config.DataDir, "serve")
	var inUse *DataDirInUseError
	if errors.As(err, &inUse) {
		return fmt.Errorf("%w; a second server on it would break the first: stop that one, or give this one its own --data-dir", err)
	} else if err != nil {
		return err
	}
	m.lock = lock
	leftovers, _ := filepath.Glob(filepath.Join(m.Config.DataDir, sampleDirPrefix+"*"))
	for _, dir := range leftovers {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove a leftover sample directory: %w", err)
		}
	}
	return nil
}

// unlockDataDir releases the lock taken by lockDataDir.
func (m *Main) unlockDataDir() error {
	if m.lock == nil {
		return nil
	}
	err := m.lock.Close()
	m.lock = nil
	return err
}
