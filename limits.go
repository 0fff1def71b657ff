package companydocs

import (
	"fmt"
	"unicode/utf8"
)

// Caps on the text a client or an operator writes that the service
// stores, one per kind of text. They are counted in characters (Unicode
// code points), as JSON Schema's maxLength counts them, so that the
// OpenAPI document states them exactly. Stored as JSON, a character takes
// at most 6 bytes (\u003c, \u2028, \ufffd for a byte that is not UTF-8);
// the worst case below uses that. CheckLength and CheckHeaderLength are
// the one check: a text over its cap is refused with validation_error,
// never shortened.
//
// The worst disk one account can fill with them, per free one-off order
// it creates and cancels with a note at the cap (JSON bytes): the order
// keeps the note 4 times (history note and params.note, next_step message
// and params.note), 4 x 6 x MaxNote = 24 kB, plus about 1.2 kB of its own
// and the Idempotency-Key twice (record, index): about 26 kB. Its two
// events leave the outbox at fan-out; each leaves one signed body (the
// order again: about 1.3 and 25 kB), stored once however many endpoints
// get it, and one delivery record per endpoint: 2 x MaxWebhooksPerAccount
// records of 0.3 kB, up to 5 kB each when the receiver fails every
// attempt (20 kept). So 58 kB a cycle (158 kB with a failing receiver),
// up to twice that in bbolt's half-full pages; orders stay, finished
// deliveries and their bodies 30 days. A cycle is two changes, which
// the server's per-account write rate bounds (serve --write-rate, 1 a
// second with a burst of 30 by default: 1,815 cycles in the first hour,
// so at most 1,815 x 316 kB = 574 MB an hour with a failing receiver, 210
// MB with an answering one): see RELIABILITY.md.
const (
	// MaxNote caps a note or reason a person gives with a transition:
	// a client's cancel note, an operator's note, a fail reason.
	MaxNote = 1000
	// MaxAccountName caps an account name (operator-created).
	MaxAccountName = 64
	// MaxWebhookURL caps the url of a webhook endpoint: browsers and
	// proxies handle URLs of 2,000 characters.
	MaxWebhookURL = 2000
	// MaxWebhookDescription caps the description of a webhook endpoint.
	MaxWebhookDescription = 200
	// MaxIdempotencyKey caps the Idempotency-Key header (printable
	// ASCII, so characters are bytes here).
	MaxIdempotencyKey = 255
	// MaxRequestField caps each id an order or preview request names:
	// company_profile_id, document_type and plan_id. A
	// discovery_candidate_id has a fixed length (DiscoveryIDLength).
	MaxRequestField = 200
)

// Caps on how many records of a kind one account keeps.
const (
	// MaxWebhooksPerAccount caps the endpoints of one account, so that no
	// account multiplies the deliveries of every event.
	MaxWebhooksPerAccount = 10
	// MaxSessionsPerAccount bounds the sessions one account keeps: a
	// new session past it ends the account's oldest. A client needs one
	// session per process and renews it once per TTL, so 100 leaves room
	// for a fleet of workers on one key; a client that creates a session
	// per request, or a leaked key run in a loop, ends its own oldest
	// sessions instead of growing the store.
	MaxSessionsPerAccount = 100
)

// CheckLength returns nil when the JSON field's value is within limit
// characters, and otherwise a validation_error that names the field and
// the cap.
func CheckLength(field, value string, limit int) error {
	return checkLength(fmt.Sprintf("Field %q", field), value, limit)
}

// CheckHeaderLength is CheckLength for a header.
func CheckHeaderLength(header, value string, limit int) error {
	return checkLength(fmt.Sprintf("The %s header", header), value, limit)
}

func checkLength(what, value string, limit int) error {
	// len is an upper bound of the count: most values pass without one.
	if len(value) <= limit {
		return nil
	}
	if n := utf8.RuneCountInString(value); n > limit {
		return Refusal(EVALIDATION, "refusal.too_long", Args{"what": what, "limit": limit, "length": n})
	}
	return nil
}

// CheckIdempotencyKey refuses an Idempotency-Key header over
// MaxIdempotencyKey characters or with other than printable ASCII.
func CheckIdempotencyKey(k string) error {
	if err := CheckHeaderLength("Idempotency-Key", k, MaxIdempotencyKey); err != nil {
		return err
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return Refusal(EVALIDATION, "refusal.idempotency_key_ascii", nil)
		}
	}
	return nil
}

// Shorten cuts s to at most n characters (Unicode code points), its last
// then "…", for quoting a client's or a file's text in a message, a log
// line or a table cell of fixed width. It never cuts inside a character,
// so what it returns is as valid UTF-8 as s; n < 1 returns "".
func Shorten(s string, n int) string {
	switch {
	case n < 1:
		return ""
	case utf8.RuneCountInString(s) <= n:
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// SizeText writes a cap in bytes as people read it, the way the messages
// that name a cap write it: "64 KiB", "1 MiB", "1000 bytes". A cap that
// is no whole number of KiB is written in bytes, never rounded.
func SizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
