package index

import (
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"companydocs/internal/boltfile"
	"companydocs/internal/filesum"
)

// A file a node downloaded is checked whole before anything reads it with
// bbolt (openChecked): its SHA-256 only says it is the file the publisher
// named, and a publisher (or whoever wrote the metastore) can name a
// damaged one. bbolt trusts its file and maps it: a page past the file's
// end is a SIGBUS, a page id past the mapping a SIGSEGV, a branch that
// points back up an endless recursion; none of them can be recovered
// unless the goroutine asked for a panic instead, and bbolt's own check
// (Tx.Check) reads the pages on a goroutine of its own, which no
// setting of ours reaches. So the order is:
//
//  1. the meta pages and the file's length, with plain reads: the file
//     holds every page up to its high-water mark (boltfile.Open);
//  2. every page reachable from the meta page, with plain bounds-checked
//     reads: inside the high-water mark, its own id and type, its
//     elements inside its bytes, its keys in order, no page twice
//     (boltfile.Walk);
//  3. bbolt maps the file; on a goroutine that turns a fault into a
//     panic, and recovers every panic, the mapped size is compared with
//     the file's again (it may have shrunk since step 1) and bbolt's
//     check runs (pages lost, or freed twice, or both free and used),
//     over pages step 2 proved lie inside the file and in order. Step 2
//     must find everything bbolt's check of the tree finds: on a file
//     written without its freelist, as the index writes its stores,
//     bbolt's check rebuilds the freelist first and ends the process on
//     a finding (see internal/boltfile).
//
// A generation built here and opened at every start gets step 1 only
// (checkBoltFile): its files were written by this program and are
// checked against their SHA-256. Steps 2 and 3 read every page, the two
// in about equal parts: 250 to 340 MB/s on a 2-core machine, where the
// SHA-256 a download is checked with runs at 900 MB/s
// (BenchmarkOpenChecked; 50 ms for the embedded sample's 16 MB store of
// 36,598 profiles), so 3 to 4 s for a 1 GB store. A download pays that
// once; a start must not (step 1 takes 12 µs). Once means once a
// process for a file: a file found sound is not checked again while it
// is not written (checkedWhole), so the profile store's base, which an
// incremental generation shares by hard link with the one before, is
// walked by the gate's OpenProfileStore and not again by Install, nor at
// the next download that shares it.

// openChecked opens the bbolt file at path read-only after checking all of
// it (checkWholeBoltFile). Damage is a RejectError of RejectStructure, a
// file that cannot be read or mapped now one of RejectOpen (RejectFiles
// when it is missing).
func openChecked(path string) (*bolt.DB, error) {
	if err := checkWholeBoltFile(path); err != nil {
		return nil, err
	}
	return openBolt(path)
}

// checkedWhole holds the bbolt files this process found sound by steps 1
// to 3, by identity (internal/filesum): unwritten since, they are as
// they were checked.
var checkedWhole = filesum.NewMemo[struct{}]()

// checkWholeBoltFile checks all of the bbolt file at path, steps 1 to 3,
// unless this process found it sound before and it was not written since.
// It is openChecked for a file that is not read further here (bleve's
// root.bolt, which bleve opens itself).
func checkWholeBoltFile(path string) error {
	_, err := checkedWhole.Do(path, func() (struct{}, error) { return struct{}{}, checkWhole(path) })
	return err
}

// checkWhole is steps 1 to 3, every time.
func checkWhole(path string) error {
	if err := walkBoltFile(path); err != nil {
		return err
	}
	db, err := openBolt(path)
	if err != nil {
		return err
	}
	if err := checkMapped(db, path); err != nil {
		return err
	}
	return db.Close()
}

// openBolt opens the bbolt file at path read-only, as openChecked says.
func openBolt(path string) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true, Timeout: openTimeout})
	if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch) {
		return nil, reject(RejectStructure, "%s: %w", filepath.Base(path), err)
	} else if err != nil {
		return nil, reject(ioReason(err, RejectFiles), "open %s: %w", filepath.Base(path), err)
	}
	return db, nil
}

// checkBoltFile is step 1 alone: it checks a bbolt file before it is
// mapped, with the same bounds-checked reader the order store uses
// (internal/boltfile): a valid meta page, and a file that holds every page
// up to its high-water mark.
func checkBoltFile(path string) error {
	bf, err := boltfile.Open(path)
	if err != nil {
		return boltfileError(path, err)
	}
	return bf.Close()
}

// walkBoltFile is steps 1 and 2: checkBoltFile and a walk of every page.
func walkBoltFile(path string) error {
	bf, err := boltfile.Open(path)
	if err != nil {
		return boltfileError(path, err)
	}
	defer bf.Close()
	if err := bf.Walk(time.Time{}, nil); err != nil {
		return boltfileError(path, err)
	}
	return nil
}

// boltfileError classifies an error of package boltfile: damage, or a
// failure to read the file.
func boltfileError(path string, err error) error {
	if errors.Is(err, boltfile.ErrDamaged) {
		return reject(RejectStructure, "%s: %w", filepath.Base(path), err)
	}
	return reject(ioReason(err, RejectFiles), "%s: %w", filepath.Base(path), err)
}

// checkMapped is step 3, on a goroutine of its own whose panic-on-fault
// setting no other code shares. On failure db is closed; after a panic in
// the background, since the panic may have left bbolt's locks taken and
// Close would then wait for ever.
func checkMapped(db *bolt.DB, path string) error {
	type result struct {
		err      error
		panicked bool
	}
	done := make(chan result, 1)
	go func() {
		debug.SetPanicOnFault(true)
		defer func() {
			if r := recover(); r != nil {
				done <- result{reject(RejectStructure, "%s: reading the mapped file failed: %s", filepath.Base(path), faultText(r)), true}
			}
		}()
		done <- result{err: db.View(func(tx *bolt.Tx) error { return checkTx(tx, path) })}
	}()
	res := <-done
	switch {
	case res.panicked:
		go db.Close()
	case res.err != nil:
		db.Close()
	}
	return res.err
}

// checkTx compares the size bbolt counts with the file's and runs bbolt's
// check, reporting its first few findings.
func checkTx(tx *bolt.Tx, path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return reject(ioReason(err, RejectFiles), "%s: %w", filepath.Base(path), err)
	}
	if tx.Size() > st.Size() {
		return reject(RejectStructure, "%s is %d bytes, but its meta page (transaction %d) uses %d: it was cut short",
			filepath.Base(path), st.Size(), tx.ID(), tx.Size())
	}
	var errs []error
	for err := range tx.Check() {
		if len(errs) < 10 { // the first few say enough; the rest are drained
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return reject(RejectStructure, "%s fails bbolt's check: %w", filepath.Base(path), err)
	}
	return nil
}
