// Package postgres is the order store on PostgreSQL (github.com/jackc/pgx/v5,
// pgxpool), so that several nodes share accounts, keys, sessions, orders,
// their lifecycle, the outbox, webhook deliveries and the references to
// delivered documents. Package ordering keeps the rules; this package
// only persists atomically.
//
// # Versions
//
// PostgreSQL 13 and newer: the schema uses nothing newer than 13
// (deferrable foreign keys, partial indexes, FOR UPDATE SKIP LOCKED,
// advisory locks). The tests run on the machine's PostgreSQL 15 (a
// throw-away cluster from internal/pgcluster).
//
// # Schema and migrations
//
// The schema is versioned SQL under migrations/, embedded in the binary
// and applied by goose (github.com/pressly/goose/v3) at Open, under a
// session-level advisory lock, so that nodes starting at once apply each
// version once. A database whose version is newer than the binary's is
// refused with a sentence saying so. A released migration is never
// edited: a change is a new file.
//
// # Transactions and concurrency
//
// Write transactions run at READ COMMITTED. A rule that checks a row and
// then changes it reads the row with SELECT ... FOR NO KEY UPDATE (the
// ordering.Tx contract: Account and Order lock in Update), which
// serialises the writers of one account or order across nodes and lets
// a waiting writer see the row as committed, not as of its snapshot;
// SERIALIZABLE would answer the same conflicts with aborts and reruns,
// costly on the hot row of a busy account. FOR NO KEY UPDATE rather than
// FOR UPDATE lets inserts whose foreign key names the row (an event, a
// delivery, an order of the account) go on meanwhile: the referenced ids
// and names never change, and no order or account is deleted. What spans
// rows is a constraint, so no interleaving can break it: UNIQUE keys for the
// Idempotency-Key of an account and for the one open order per slot. The
// balance is the rules': they read the account locked, check, then change
// it; CHECK (credits >= 0) stands behind them. Deadlocks (40P01) and serialization failures (40001) are run
// again up to maxAttempts times. Read transactions run at REPEATABLE
// READ, read-only: one snapshot for everything they read.
//
// Where the rules count an account's rows before adding one (the
// session cap, the webhook endpoint cap), CountSessions and
// WebhookEndpoints lock the account's row first in Update, so two nodes
// cannot both pass the check. A method that may answer ordering.ErrExists
// inserts with ON CONFLICT DO NOTHING: a failed statement would abort the
// whole PostgreSQL transaction, while the rules may go on after the
// answer. Claims of an Idempotency-Key or an open-order slot do the same
// and then read the holder; the INSERT waits for a concurrent claim on
// another node to commit or roll back, so exactly one wins.
//
// Appending an event takes no lock: the event-writing transactions of
// every node overlap and commit as they finish, so PostgreSQL flushes
// their commits to the WAL together. Ids therefore do not sort in commit
// order across orders (EventIDFloor is ""); those of one order do, since
// the rules take each above the order's last event id, kept in its
// record and read under its row lock. Until this release, a
// transaction-level advisory lock held from the id to the commit made
// ids follow commit order (migration 00001 still says so in a comment),
// for a reader paging by id; it made every event-writing transaction of
// every node commit one at a time, and no such reader is left. Readers
// claim instead: ClaimEvents takes the claim lock (a transaction-level
// advisory lock, pipelined with the read), so claims run one at a time
// across nodes, each reads the oldest events at READ COMMITTED after the
// previous claim ended, and an event committed late is taken by the next
// claim. One claim moves a batch (the dispatcher's 256), so their queue
// is short. Keeping an id-paging reader exact would have needed a
// pg_current_xact_id() column and a filter against
// pg_snapshot_xmin(pg_current_snapshot()), paging by (xid, id); without
// a caller, it was not worth a column on every event.
//
// Due webhook deliveries are claimed with FOR UPDATE SKIP LOCKED and a
// lease (claimed_by, claimed_until): while another node's claim is live
// a node leaves that endpoint alone, the claiming node finds its own
// claim again (its dispatcher keeps one attempt per endpoint), and the
// claim of a node that died runs out after the lease.
//
// # Records
//
// Orders and webhook deliveries keep the record the rules wrote (json,
// its bytes as written, times to the nanosecond; a delivery's signed body
// is kept once per event in webhook_bodies, migration 00004) beside the
// columns that
// constraints, indexes and queries need, derived from it in one place
// (orderColumns, PutDelivery); Check compares them. Accounts, sessions,
// endpoints and events are plain columns; their times are kept to the
// microsecond, as PostgreSQL keeps them.
//
// # Documents
//
// The delivered PDFs are in the database too (migration 00002; since
// 00003 in chunks: table document_chunks holds each PDF in rows of at
// most ChunkSize, 256 KiB, STORAGE EXTERNAL since PDFs are compressed
// already, and documents one row per PDF with its size), so that every
// node serves what any node delivered, and the nodes' data directories
// hold only the index and the temporary files of uploads in flight. DB is
// an ordering.SharedStore: the chunks, then the documents row, are
// inserted in the transaction of the DELIVERED transition
// (ordering.DocumentTx; the chunks' foreign key is checked at the
// commit), so the document, its document_refs row and the order commit
// together or not at all; nothing is ever orphaned, and a start (or
// Check) that finds a reference without its document refuses. Check also
// verifies that each document's chunks are numbered without a gap, add
// up to its size and hash to its name. The choice has limits:
//   - a PDF is at most ordering.MaxDocumentSize (20 MiB, 80 chunks; CHECKs
//     say so too);
//   - an upload holds one connection, and the order's row lock, while its
//     chunks go in one by one from the temporary file (one chunk in
//     memory); it counts against the statement timeout per chunk;
//   - a download (Document) reads an eighth of a chunk (ReadSize, 32 KiB)
//     per short read-only transaction: it holds a pooled connection only
//     for that query, never while its client reads, and those 32 KiB in
//     the node's memory (ReadSize says why not a whole chunk);
//   - the database grows by every delivered PDF, once per distinct
//     content, and its backup (pg_dump, or the server's own backups) holds
//     orders and documents together, consistent by construction.
//
// Chunk rows rather than substring() reads of one bytea (the migration
// says why): a read streams either way, a write only in chunks.
//
// Bytes in PostgreSQL rather than files behind a shared file system or an
// object store: nothing else to run, and one transaction for the document
// and its order. Large objects would stream, but need their own cleanup
// and privileges, and buy nothing at 20 MiB.
//
// # Sessions
//
// Another node cannot drop an entry from this node's session cache, so
// ordering.Accounts trusts a cached session of this store for
// ordering.SharedSessionCacheTTL (0.5 s) only: a session ended on any
// node is refused on every node at most 0.5 s after the end committed.
//
// # Failures
//
// A failure that says nothing about the request (no connection, the
// server restarting, the statement timeout, every pooled connection busy
// for the acquire timeout, a conflict that outlived the retries) is the
// specification's service_unavailable (503), never internal; the cause
// stays in the error's text for the log. The pool replaces broken
// connections by itself, so the store recovers when the server is back.
// Ping is the readiness check. PoolStats feeds the pool's metrics.
package postgres
