package index

// pageRelease drops the pages a long read of memory-mapped bbolt files
// touched from the process's resident memory as it goes (release, which
// calls releaseResident): a walk once every changeTxBytes of keys and
// values it read, a series of look-ups once every releaseEvery of them.
// The pages stay in the page cache; only the process's share goes.
type pageRelease struct {
	release        func() error
	bytes, lookups int
}

// releaseEvery is how many look-ups a read makes before it drops their
// pages: each fault maps the pages around the one read too (64 KiB), and
// look-ups by id lie all over the file (10,000 of them kept 750 MB of a
// 5M store resident).
const releaseEvery = 64

// walked counts n bytes of keys and values a walk read.
func (r *pageRelease) walked(n int) error {
	if r.bytes += n; r.bytes < changeTxBytes {
		return nil
	}
	r.bytes = 0
	return r.release()
}

// lookedUp counts one look-up.
func (r *pageRelease) lookedUp() error { return r.lookedUpMany(1) }

// lookedUpMany counts n look-ups: a look-up by register number reads
// every profile listed under it, one for each court with that number (a
// hundred and more for a low HRB number; the LEI matching of a 5M
// ingest, 256 such look-ups between two releases, mapped 900 MB of the
// previous store).
func (r *pageRelease) lookedUpMany(n int) error {
	if r.lookups += n; r.lookups < releaseEvery {
		return nil
	}
	r.lookups = 0
	return r.release()
}
