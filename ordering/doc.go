// Package ordering holds plans, accounts, sessions, previews and orders,
// and enforces the verified-profile gate and the ownership of orders. It
// knows no database: the rules run over a Store (store.go), one
// transaction at a time, and a store only persists, atomically. Package
// bbolt is the embedded store (one file, orders.db); package postgres
// shares one database between several nodes. A store's Update may run
// its function more than once (a shared commit run again, a serialization
// failure retried), so the rules only fill variables inside it. The rules
// check every invariant themselves (transitions, ownership, a balance
// never below zero, read with the account's row locked), but for the
// unique keys (Idempotency-Key per account, one open order per slot, ids,
// names): those are claims the store makes atomically, since only the
// database decides two processes claiming one key at once.
//
// Services share a store, one per job, made together by New over one
// core (the store, the clock, the ids, the lifecycle every service moves
// orders by): Orders orders (plans, previews, orders and their
// lifecycle, documents), Payments applies the payment providers' events
// and asks their refunds, Webhooks keeps the endpoints and delivers the
// outbox, Watches keeps the watches and compares them with each new
// generation (Watcher runs the comparisons in the background). Accounts
// stands beside them and authenticates (accounts, API keys, credits,
// sessions and their sweep). Each caller declares the interface it needs
// of them (httpapi.Sessions, httpapi.Orders, httpapi.Payments,
// httpapi.Webhooks, httpapi.Watches, the webhook dispatcher's store);
// cmd/companydocs wires them. The package does no file I/O of its own:
// delivered PDFs go through the Documents port, which each store package
// fills (bbolt.Documents: files; postgres.Documents: rows).
//
// Package storecopy moves every record from one store into another
// through the same Tx methods (one View on the source, one Update on the
// target) and counts a store the same way, so that "store migrate" can
// copy orders.db into PostgreSQL and prove the copy, whatever the stores
// are.
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
//     HD, DK, SI, UT, VÖ), a missing plan_id, any field over its cap
//     (companydocs.MaxRequestField, DiscoveryIDLength), an Idempotency-Key
//     over companydocs.MaxIdempotencyKey or with non-printable characters.
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
// it is made. Since the store keeps no key in clear, EnsureDemoAccount
// rotates the demo key and returns the new one; serve --demo keeps that
// key in the data directory (demo-api-key) and uses it again while
// IsDemoKey says it is still the demo account's.
// Replacing a key ends every session made with the old one, in the same
// transaction (they answer "the key was replaced"): a key is rotated
// because it may have leaked, and its sessions must not outlive it.
// Sessions expire after Options.SessionTTL; a revoked session stays stored,
// marked, until it would have expired, so a client learns why it fails.
// A background sweep (Options.SweepInterval) deletes expired sessions in
// write transactions of at most 500 sessions each. An account keeps at
// most 100 sessions; its 101st ends its oldest (Tx.OldestSessions).
// Live sessions are answered from memory after their first check. Over a
// store only this process writes (bbolt) an entry lives until its session
// ends here or expires; over a SharedStore (PostgreSQL, several nodes)
// for SharedSessionCacheTTL (0.5 s) at most, measured from before the
// read: a session ended on any node is refused by every node at most
// that long after the end committed.
//
// # Orders
//
// Order ids are "ord_" and 26 base32 characters of 48-bit milliseconds
// and 80 random bits, so they sort by creation time and the per-account
// index lists newest first. A create does the duplicate checks
// (Idempotency-Key per account; one open order per account, profile,
// document type and plan), the credit debit and the insert in one write
// transaction: the checks refuse before anything is written, and the
// insert claims the slot and the key, so that a create that lost a race
// to another process is refused too and its debit rolled back; concurrent
// identical requests produce exactly one order and one debit. What does
// not depend on stored state (the gate, the profile snapshot, the keys)
// is prepared before, outside the transaction. A create returns only
// after its commit is durable. Money is held in integer cents and printed
// with two fraction digits.
//
// # Lifecycle
//
// The statuses and the one table of allowed transitions are in the root
// package (companydocs.CanTransition): PREVIEW_READY -> PAID -> REQUESTED
// -> DELIVERED, plus FAILED and CANCELLED; the last three are terminal.
// Anything outside the table is invalid_transition, whose message says the
// current status and what the actor could do. Each change runs in one
// write transaction: the check, the refund, the history entry ({status,
// at, actor, note}), the next step, the stored order (with its status,
// which also serves the operator queue, oldest first), the open-order
// slot (freed once terminal, so the same order can be made again) and the
// outbox event commit together or not at all. Orders stored before
// histories existed get a synthesized creation entry when read.
//
// Payment: a plan says how it is paid (Plan.Payment). A credit plan (or
// one that costs nothing) is paid by the debit at creation: the create
// transaction also moves it to PAID (actor system), and the create answers
// the order as created (PREVIEW_READY), as the specification shows it. An
// operator plan waits in PREVIEW_READY until an operator confirms the
// payment, made outside the service. A plan paid through a
// PaymentProvider (payments.go; Stripe, package stripepay) opens the
// order's hosted payment page before the create transaction, with an
// idempotency key derived from the order id taken beforehand (what the
// transaction would refuse is refused first, so that no page is opened
// for it); the order waits in PREVIEW_READY with the next step "pay" and
// the client's action pay_online. The provider's signed events move it
// (ApplyPaymentEvent): paid (actor system), or cancelled when the page
// expired, its slot freed. The event id is claimed (PaymentTx) in the
// transaction of the change, after the order's row lock, so each event
// is applied at most once on every node; a replay, a late event or an
// unknown session changes nothing. An operator cannot confirm such an
// order's payment by hand.
//
// Refunds: cancelling or failing an order with credits_charged > 0 gives
// the credits back and sets credits_refunded in the same transaction.
// Since a terminal order allows no transition, no retry, race or kill can
// refund twice. A payment taken through a provider is recorded as a
// pending refund and scheduled in the same transaction; the refunder
// (refunds.go, RunRefunds) asks the provider with the order's idempotency
// key and records the answer: refunded (a history entry that changes no
// status, and an order.refunded event), or retried with a backoff. A
// payment made as agreed on an operator plan is refunded by the operator
// outside the service; the history note says so.
//
// Idempotency-Key: the order stores a fingerprint of the request (profile,
// discovery id, document, plan). A repeat with the key is duplicate_order
// with the first order; when the fingerprint differs, the message says the
// key was used for a different request. Orders without a fingerprint
// (older files) answer as a plain replay.
//
// # Roles
//
// An account is a client or an operator (CreateAccountWithRole; a role
// never changes, so it is cached). Every operation checks the role here,
// not in HTTP middleware: clients preview, create, list, get, cancel
// (PREVIEW_READY or PAID) and download their own orders (another
// account's order is not_found); operators list every order
// (OperatorOrders), confirm payment, mark requested, deliver, fail (a
// reason is required) and cancel (OperatorAction, Deliver). The other role
// is forbidden.
//
// Every order this package hands out carries the actions its caller may
// take now (Order.AllowedActions, from AllowedActions): the transitions
// the one table lets the caller's role make, and a client's download of
// its delivered document. A front end offers exactly these; each is
// checked again when it is taken.
//
// # Documents
//
// CheckDelivery refuses, before a byte of the PDF is read, what Deliver
// would refuse for the operator and the order (a front end calls it
// before it accepts a large body). Deliver streams the PDF from an
// io.Reader into a document staged in Options.Documents (a temporary
// file), never whole into memory: the magic "%PDF-" is checked on the
// first bytes and MaxDocumentSize while the bytes arrive (at most the
// cap plus one byte is read), the SHA-256 on the way. Where the store
// keeps documents as files (bbolt.Documents), the staged file is kept as
// documents/<2 hex>/<sha256>.pdf (fsync, rename, directory fsync) before
// the DELIVERED transition commits, which records the document
// reference; a crash in between leaves an unreferenced file, which the
// next start removes, and a start that finds a reference without its
// file is refused with ErrDamaged. Where the store keeps documents in
// its transactions (postgres.Documents), Documents.Attach stores the PDF
// in the transaction of the DELIVERED transition, read from the staged
// file in bounded chunks, so both commit or neither, and every node
// serves what any node delivered. CheckDocuments runs the store's check.
// Document hands out a reader, never the bytes (Documents.Open), which
// must hold no pooled connection while its caller reads slowly. Backups:
// orders.db first, then documents/ (every file the copy refers to
// existed before it was taken and is never deleted). The download_url
// comes from Options.DocumentURL, since this package knows no routes.
//
// # Outbox
//
// The creation and each transition write one Event to the outbox in
// their own transaction: id "evt_" + 26 base32 characters; type
// order.created, order.paid, order.requested, order.delivered,
// order.failed or order.cancelled; the order id and account; the time;
// and the payload, the order JSON exactly as GET shows it after the
// change. A refund through a payment provider, which changes no status,
// writes order.refunded (or order.refund_pending for a payment that came
// after the cancel; order.payment_mismatch for a payment that is not the
// order's price, which changes nothing else). Events survive restarts and kills like every committed write.
// Options.OnTransition is called after each commit (metrics, and a cheap
// wake-up for the dispatcher); OutboxStats gives the depth and the oldest
// event's time.
//
// Order of events. The events of one order sort in the order of its
// changes, by id and by time: the order record keeps its last event id
// (OrderRecord.LastEventID) and the next id is taken above it, under the
// order's row lock, and a change is dated no earlier than the order's
// previous one. That holds across nodes whose clocks differ, across a
// clock going back between runs, and after the outbox let the earlier
// events go (the highest stored id, which ids were once taken above, is
// gone then). Across orders, ids follow creation time and, on bbolt,
// commit order (its writes run one at a time and it returns the highest
// stored id as Tx.EventIDFloor); on PostgreSQL, event-writing
// transactions of all nodes overlap, so a lower id may commit after a
// higher one. Making ids follow commit order there took a lock held from
// the id to the commit: every event-writing transaction of every node
// committed one at a time (the several-node order benchmark), for a promise only an
// id-paging reader needed, and none was left in use.
//
// Readers therefore never page by id across transactions: FanOutEvents
// claims the oldest events it sees (again on every call, so an event
// committed late is taken by the next claim, never skipped) and deletes
// them in the same transaction; claims run one at a time across nodes
// (Tx.ClaimEvents), so no event is claimed twice and no claim takes an
// order's later event while another holds its earlier one. Copy reads
// every event in one snapshot. The id-paging PendingEvents and
// MarkEventDelivered are gone: only tests used them, and keeping their
// "never skips a late commit" would have cost a transaction-id column
// and a horizon filter on a reader nobody calls.
//
// # Webhooks
//
// Endpoints ("wh_" ids) belong to an account, at most
// MaxWebhooksPerAccount each; an operator's is marked AllAccounts at
// creation (roles never change) and receives every account's events. The
// secret ("whsec_" and 32 random bytes in base64) is stored in clear,
// since every delivery is signed with it, and shown only by CreateWebhook.
// CreateWebhook checks the URL's shape here and its network rules through
// Options.CheckWebhookURL (package webhook, wired by cmd/companydocs).
//
// The webhook dispatcher uses FanOutEvents: one write transaction claims
// outbox events, writes the signed body {"type","timestamp","data"} of
// each once (WebhookTx.PutEventBody: fixed once, so every retry to every
// endpoint sends the same bytes, and stored once, not once per endpoint,
// counted with the deliveries that refer to it), one delivery per
// matching endpoint plus its due time (the event's time), and deletes
// the events (claimed, so that two nodes never fan one
// event out twice); a kill leaves either the event or its deliveries,
// never both nor neither. DueWebhooks claims at most one due delivery per
// endpoint that is not busy, oldest due first, then by event id (a store
// shared by several nodes leases it for Options.DeliveryLease): so the
// first attempts of one order's deliveries to an endpoint go out in the
// order of its events; a retried delivery waits for its next time and may
// be overtaken by a later event of the same order. RecordWebhookAttempt
// appends the attempt (the last 20 are kept) and sets pending with the
// next time, delivered or failed. DeleteWebhook drops the endpoint's
// deliveries with it; a body goes with the last delivery referring to it.
//
// # Caps
//
// Every text a client or operator writes that is stored has one cap in
// the root package (limits.go: notes and reasons, account names, webhook
// url and description, the Idempotency-Key, the ids of an order request),
// checked by companydocs.CheckLength before anything is written; so are
// the counts per account (MaxWebhooksPerAccount, MaxSessionsPerAccount).
package ordering
