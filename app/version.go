package app

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// BuildInfo names the build the binary is: its module version and the
// VCS revision the go command stamped into it.
type BuildInfo struct {
	// Version is the module version, "(devel)" for a build from a work
	// tree (and under go test).
	Version string
	// Revision is the VCS commit, "unknown" when none was stamped
	// (go test, -buildvcs=false, a build outside a repository).
	Revision string
	// Time is the commit's time (RFC 3339), empty when unknown.
	Time string
	// Modified reports uncommitted changes in the work tree at build time.
	Modified bool
	// GoVersion is the Go release that built the binary.
	GoVersion string
}

// ReadBuildInfo reads the build information of the running binary.
func ReadBuildInfo() BuildInfo {
	b := BuildInfo{Version: "(devel)", Revision: "unknown", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the line "companydocs version" prints, e.g. "companydocs
// (devel) revision 1a2b3c (2026-01-02T03:04:05Z, modified) go1.26.8".
func (b BuildInfo) String() string {
	var when []string
	if b.Time != "" {
		when = append(when, b.Time)
	}
	if b.Modified {
		when = append(when, "modified")
	}
	rev := b.Revision
	if len(when) > 0 {
		rev += " (" + strings.Join(when, ", ") + ")"
	}
	return fmt.Sprintf("companydocs %s revision %s %s", b.Version, rev, b.GoVersion)
}

// runVersion prints the build information.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stdout, stderr)
	fs.Synopsis = "usage: companydocs version (or companydocs --version)"
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("version takes no arguments, got %q: %w", fs.Args(), errUsage)
	}
	fmt.Fprintln(stdout, ReadBuildInfo())
	return nil
}
