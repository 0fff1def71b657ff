// Package ordering holds plans, accounts, sessions, previews and orders,
// and enforces the verified-profile gate and the ownership of orders. It
// is the only importer of bbolt besides the index: everything lives in one
// file, orders.db, opened with a lock timeout so that a second process
// (the accounts command while the server runs) gets ErrInUse instead of
// hanging. Open creates the file only when it is missing; an existing one
// is walked page by page with bounds-checked reads (internal/boltfile)
// before bbolt maps it, then checked by bbolt and record by record
// (records.go), and refused with ErrDamaged, untouched, when damaged.
// Snapshot hands out a consistent copy (Tx.WriteTo) for online backups.
//
// The gate lives here, not in HTTP middleware, so that any front end gets
// it: CreateOrder accepts a company only through a company_profile_id that
// resolves to a verified profile which is not removed and whose register
// holds the requested document type; the order stores a snapshot of that
// profile, never client-sent company data.
//
// # Malformed request or blocker
//
// Preview is lenient and CreateOrder strict, over one assessment:
//
//   - Malformed (validation_error on both): a body that is not a JSON
//     object, a field of the wrong JSON type, an unknown field (the HTTP
//     layer rejects unknown fields and names them, so that a misspelt
//     "companyProfileId" is not silently read as "no company"), a missing
//     document_type or one that is not a register document type (AD, CD,
//     HD, DK, SI, UT, VÖ), a missing plan_id, any field over 200 bytes, an
//     Idempotency-Key over 255 bytes or with non-printable characters.
//   - Blockers (Preview: ordering_eligible false with the Blocker* codes;
//     CreateOrder: an error): company_profile_id missing or unknown,
//     company not verified, removed, document not held by the register
//     (verified_company_required); a document type this service does not
//     sell (HD ...), an unknown plan, a document type outside the plan
//     (validation_error); no plan configured (plan_configuration_missing);
//     too few credits (insufficient_credits); an open order for the same
//     company, document and plan (duplicate_order).
//
// # Accounts, keys and sessions
//
// API keys ("cdk_...") and session tokens ("cds_...") carry 256 random
// bits and are stored only as SHA-256 hashes; a key is shown once, when
// it is made. Since no key is kept in clear, EnsureDemoAccount (serve
// --demo) rotates the demo key on every start and returns the new one.
// Sessions expire after Options.SessionTTL; a revoked session stays stored,
// marked, until it would have expired, so a client learns why it fails.
// A background sweep (Options.SweepInterval) deletes expired sessions in
// write transactions of at most 500 sessions each. An account keeps at
// most 100 sessions; its 101st ends its oldest, found through the index
// bucket account_sessions (account, creation time, token hash), which
// Open builds for a database written before it existed.
//
// # Orders
//
// Order ids are "ord_" and 26 base32 characters of 48-bit milliseconds
// and 80 random bits, so they sort by creation time and the per-account
// index lists newest first. A create does the duplicate checks
// (Idempotency-Key per account; one open order per account, profile,
// document type and plan), the credit debit and the insert in one bbolt
// write transaction: bbolt runs one writer at a time, and inside a group
// commit (one goroutine runs every create that is waiting in one
// transaction, so that they share one fsync) the creates still run one
// after the other, so concurrent identical requests produce exactly one
// order and one debit. What does not depend on stored state (the gate,
// the profile snapshot, the keys) is prepared before, outside the
// transaction. A create returns only after its commit is on disk. Money is held in integer cents and printed with two
// fraction digits.
package ordering
