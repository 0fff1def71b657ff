package companydocs

import (
	"errors"
	"time"

	"companydocs/messages"
)

// Error codes of the interface specification, plus the ones the service adds.
// httpapi maps each code to exactly one HTTP status.
const (
	EINVALIDQUERY      = "invalid_query"
	ERATELIMITED       = "rate_limited"
	EVALIDATION        = "validation_error"
	EVERIFIEDREQUIRED  = "verified_company_required"
	EDUPLICATEORDER    = "duplicate_order"
	EPLANMISSING       = "plan_configuration_missing"
	EUNAUTHORIZED      = "unauthorized"
	EINSUFFICIENTFUNDS = "insufficient_credits"
	ENOTFOUND          = "not_found"
	EMETHODNOTALLOWED  = "method_not_allowed" // the path exists, the method does not
	ETOOLARGE          = "payload_too_large"
	EUNSUPPORTEDMEDIA  = "unsupported_media_type" // a body of a media type or encoding the route does not take
	EUNAVAILABLE       = "service_unavailable"
	ETIMEOUT           = "request_timeout" // no request within the read timeout
	EINTERNAL          = "internal"
	EFORBIDDEN         = "forbidden"           // authenticated, but the account's role may not use the route
	EINVALIDTRANSITION = "invalid_transition"  // the order's status does not allow the change
	EWATCHLIMIT        = "watch_limit_reached" // the account watches as many companies as its plans allow
	EINVALIDSIGNATURE  = "invalid_signature"   // a payment provider's event whose signature does not verify
	EINVALIDEVENT      = "invalid_event"       // a payment provider's signed event that is not one this service can read
)

// Hints name what a client does next where a message tells it to; the
// domain knows no transport, so the HTTP layer adds the route that does it.
const (
	HintListPlans     = "list_plans"
	HintCreateSession = "create_session"
)

// Error is an application error: a machine code from the list above and a
// sentence a person can act on. Anything that is not an *Error is internal.
type Error struct {
	Code    string
	Message string
	// Hint, when set, names the action the message asks for (Hint*).
	Hint string
	// Order is set for duplicate_order: the order that already exists.
	Order *Order
	// Key and Args, when Key is set, are the message catalog's sentence
	// that Message says in English, so that a front end can say it in
	// another language (MessageIn).
	Key  string
	Args messages.Args
	// ArgsIn, when set, gives Args in another language: for values that
	// are words themselves (a document's name, a blocker's sentence).
	ArgsIn func(lang string) messages.Args
	// RetryAfter, when set, is how long a client waits before it asks
	// again (a refusal that passes by itself: HTTP's Retry-After).
	RetryAfter time.Duration
}

// Error implements the error interface with the sentence alone: it is
// what a person reads, in the command line's output as in wrapped errors;
// the code travels in Code.
func (e *Error) Error() string {
	return e.Message
}

// Args are the values of a catalog sentence's placeholders.
type Args = messages.Args

// Refusal returns an *Error with the given code whose message is the
// catalog's sentence key (messages) with args, said in English.
func Refusal(code, key string, args messages.Args) *Error {
	return &Error{Code: code, Message: messages.Say(messages.English, key, args), Key: key, Args: args}
}

// MessageIn says e in lang, one of the catalog's languages, and returns
// the language it is said in: the catalog's sentence, or the message as
// it is of an *Error made without a key (English).
func (e *Error) MessageIn(lang string) (message, saidIn string) {
	if e.Key == "" {
		return e.Message, messages.English
	}
	if _, ok := messages.Sentence(lang, e.Key); !ok {
		lang = messages.English
	}
	args := e.Args
	if e.ArgsIn != nil {
		args = e.ArgsIn(lang)
	}
	return messages.Say(lang, e.Key, args), lang
}

// WithHint sets the hint of e and returns it.
func (e *Error) WithHint(hint string) *Error {
	e.Hint = hint
	return e
}

// WithRetryAfter sets how long a client waits before it asks again and
// returns e.
func (e *Error) WithRetryAfter(d time.Duration) *Error {
	e.RetryAfter = d
	return e
}

// ErrorCode returns the code of an application error, or EINTERNAL.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessageIn says an error to a client in lang and returns the
// language it is said in: an application error's sentence (MessageIn);
// internal errors get a generic sentence so that no detail leaks.
func ErrorMessageIn(err error, lang string) (message, saidIn string) {
	var e *Error
	if errors.As(err, &e) {
		return e.MessageIn(lang)
	}
	if _, ok := messages.Sentence(lang, KeyInternal); !ok {
		lang = messages.English
	}
	return messages.Say(lang, KeyInternal, nil), lang
}

// KeyInternal is the catalog's sentence for an internal error: it says
// nothing of the cause.
const KeyInternal = "refusal.internal"
