package app

import (
	"os"
	"runtime/debug"
)

// A build allocates a lot of short-lived garbage (decoded records, index
// documents, segment buffers); collecting it at the default GOGC=100 costs
// a quarter of the build's CPU. During a build the GC target is raised to
// buildGCPercent, with a soft memory limit of buildMemoryLimit so that the
// heap stays well inside the memory budget of the appliance.
const (
	buildGCPercent   = 400
	buildMemoryLimit = 1536 << 20
)

// relaxGC applies the build's GC settings unless GOGC or GOMEMLIMIT are set,
// and returns the function that restores the previous ones.
func relaxGC() (restore func()) {
	return setGC(buildGCPercent, buildMemoryLimit)
}

// A search allocates per hit it looks at (postings, candidates, decoded
// profiles) on top of a small live heap; at the default GOGC=100 the
// collector runs so often that it takes a large share of a search's CPU,
// and a higher target saves more than the little heap it costs
// (BENCHMARKS.md, "Figures behind code comments"). The server raises
// the GC target to serveGCPercent, with a soft memory limit of
// serveMemoryLimit: the heap stays small next to the mapped index files,
// which the limit does not count. The price is memory: the heap grows to
// nine times what is live before a collection, and the runtime keeps
// that much from the system afterwards, so what a request holds while a
// slow client reads is paid nine times over after it ended. That is why
// a download holds 32 KiB of its PDF, not a 256 KiB chunk
// (postgres.ReadSize), and never the whole PDF (httpapi bodySize); with
// these, three rounds of 120 slow downloads leave the server's resident
// memory 20 to 40 MiB above the bystander's own (RELIABILITY.md,
// "Document downloads"). A lower target was not needed for that.
const (
	serveGCPercent   = 800
	serveMemoryLimit = 1 << 30
)

// setGC sets the GC target and soft memory limit unless GOGC or GOMEMLIMIT
// are set, and returns the function that restores the previous ones.
func setGC(percent int, limit int64) (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	oldPercent := debug.SetGCPercent(percent)
	oldLimit := debug.SetMemoryLimit(limit)
	return func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	}
}
