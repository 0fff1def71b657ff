// Package bbolt is the embedded order store: ordering.Store in one bbolt
// file, orders.db in the data directory. It is the only importer of bbolt
// besides the index; the rules live in package ordering and decide the
// same way over this store and over PostgreSQL.
//
// # The file
//
// Open takes the file lock with a timeout, so that a second process (the
// accounts command while the server runs) gets ErrInUse instead of
// hanging. It creates the file only when it is missing; an existing one is
// walked page by page with bounds-checked reads (internal/boltfile) before
// bbolt maps it, then checked by bbolt and record by record (records.go),
// and refused with ErrDamaged, untouched, when damaged (Options.SkipCheck
// and CheckTimeout bound that work). ErrDamaged is ordering.ErrDamaged, so
// that a missing document file and a damaged file are one error to test.
// Snapshot hands out a consistent copy (Tx.WriteTo) for online backups;
// Stats counts the records.
//
// # Buckets
//
// One bucket per kind of record (buckets.go): accounts and their key
// hashes, sessions and the per-account session index (account, creation
// time, token hash: the oldest first, for the cap of 100), orders and
// their indexes (per account, by status for the operator queue, the
// Idempotency-Key per account, the open order per slot), document
// references, the outbox, webhook endpoints, deliveries and their
// schedule (pending, and each endpoint's due order), and the signed body
// of each event with deliveries, once, with the count of deliveries that
// refer to it. Keys built from
// several parts join them with a zero byte. Records are the ordering
// types in JSON. Open builds the indexes a file written before them lacks
// (session index, status index, due order) in the transaction that creates
// their buckets, and moves the bodies out of the delivery records of a
// file written when each carried its own; a file opened read-only is read
// as it is.
//
// # Writes share commits
//
// Update runs through a group commit (commit.go): one goroutine runs every
// write that waits, one after the other, in one transaction and commits
// once, so that concurrent creates share one fsync; bbolt runs one writer
// at a time, so the rules still see each write's predecessors. A write
// that fails after writing is rolled back by running the group again
// without it; one that fails before writing (a refusal: a duplicate, too
// few credits) stays in the group and gets its error once the group has
// committed; a group in which nothing wrote is rolled back, without a
// commit or an fsync. Since one process holds the file, ClaimEvents and
// ClaimDueDeliveries need no row locks, and the latter leaves the schedule
// alone (the dispatcher's busy set keeps one attempt per endpoint).
// EventIDFloor answers from memory inside a write: bbolt's Cursor.Last does
// not return on a bucket whose leaves the same transaction emptied.
package bbolt
