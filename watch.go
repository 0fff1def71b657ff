package companydocs

import "time"

// EventCompanyChanged is the event of a watch, beside the order events:
// fields of a watched profile that a new index generation changed. A
// profile the new generation no longer holds at all is one such change
// (FieldRemoved), and it ends the watch.
const EventCompanyChanged = "company.changed"

// Watch is an account's standing interest in one verified company
// profile: each index generation that changes the profile's fields sends
// the account a company.changed event and becomes the watch's last change.
type Watch struct {
	ID               string          `json:"id"`
	CompanyProfileID string          `json:"company_profile_id"`
	Company          CompanySnapshot `json:"company"`
	CreatedAt        time.Time       `json:"created_at"`
	// Generation is the index generation the watch was last compared with.
	Generation string `json:"generation"`
	// Ended is set once the profile left the register data (a change of
	// FieldRemoved); an ended watch is never compared again.
	Ended      bool         `json:"ended"`
	LastChange *WatchChange `json:"last_change"`
}

// WatchChange is what one generation changed in a watched profile: the
// data of its company.changed event.
type WatchChange struct {
	WatchID          string        `json:"watch_id"`
	CompanyProfileID string        `json:"company_profile_id"`
	GenerationBefore string        `json:"generation_before"`
	GenerationAfter  string        `json:"generation_after"`
	At               time.Time     `json:"at"`
	Changes          []FieldChange `json:"changes"`
	// WatchEnded is set with the change of FieldRemoved: the watch ends.
	WatchEnded bool `json:"watch_ended"`
}

// WatchCount is how many watches an account has and may have.
type WatchCount struct {
	Count int `json:"count"`
	// Limit is the highest watch_limit of the subscription plans the
	// account may use; 0 when none includes watches.
	Limit int `json:"limit"`
}
