package companydocs

import "fmt"

// MinShareOfLive is the smallest share of the live generation's profiles a
// new generation may hold and still replace it without being asked to. An
// ingest of one chunk into a served data directory once replaced 200,207
// profiles with 5,937 and said nothing; a real refresh of the same
// registers never loses half of them.
const MinShareOfLive = 0.5

// CheckShrink decides whether a new generation of next profiles may
// replace the live generation liveID of live profiles. It is the service's
// rule, not the index's: the index can publish anything, the service must
// not silently answer from a fraction of what it answered from before.
// allow is the operator's explicit consent (ingest --allow-shrink).
func CheckShrink(liveID string, live, next int, allow bool) error {
	if allow || live == 0 || float64(next) >= MinShareOfLive*float64(live) {
		return nil
	}
	return fmt.Errorf("refusing to publish: the live generation %s holds %d profiles and this ingest would replace it with %d (%d%%); "+
		"an ingest publishes the whole index, not an addition to it: ingest every file together, write into another --data-dir, or pass --allow-shrink to publish it anyway",
		liveID, live, next, next*100/live)
}
