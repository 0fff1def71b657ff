package ingest

import (
	"fmt"
	"strings"

	"companydocs"
)

// ReasonLEIRecordsDiffer counts the GLEIF records of an LEI that another
// record of the same ingest gives a different legal name or registration.
const ReasonLEIRecordsDiffer = "LEI has records with different names or registrations"

// gleifOutcome is how the first record of an LEI was counted.
type gleifOutcome int

const (
	outcomeLinked gleifOutcome = iota + 1
	outcomeDiscovery
	outcomeDiscoveryVerified
	outcomeConflict
)

// seenLEI is what a Run keeps of the first record of each LEI: enough to
// tell a repeat from a differing record, and to take back what the first
// record did when a differing one turns up.
type seenLEI struct {
	first   GLEIFRecord
	at      Location
	match   gleifMatch // without target
	outcome gleifOutcome
	// linkedTo is the profile this Run added the LEI to, if any.
	linkedTo string
	// differs is set once a record with other data was read.
	differs bool
}

// sameGLEIFRecord reports whether two records of one LEI say the same
// about who it is: the same legal name and the same registration (RA code
// and entity id). Statuses and dates may differ between two snapshots
// (the API file is newer than the golden copy); a discovery candidate
// keeps the record updated last.
func sameGLEIFRecord(a, b *GLEIFRecord) bool {
	return a.LegalName == b.LegalName && strings.EqualFold(a.RACode, b.RACode) && a.RAEntityID == b.RAEntityID
}

// recordsDiffer handles the first record of an LEI that differs from the
// record read before it. Which of the two is right is not known, and a
// wrong LEI on a verified profile is worse than a missing one, so neither
// wins: the link the first record made is taken back, the LEI's discovery
// candidate (the first record's data) is stored unverified, saying why,
// and both records are counted, and listed, as conflicts.
func (r *run) recordsDiffer(seen *seenLEI, rec *GLEIFRecord, at Location) error {
	seen.differs = true
	r.recountFirstAsConflict(seen, rec)
	at.Detail = differDetail(seen, rec)
	r.addConflict(rec.LEI, ReasonLEIRecordsDiffer, at.Detail, at)
	if err := r.unlink(seen, at); err != nil {
		return err
	}
	p := discoveryProfile(&seen.first, seen.match)
	p.Discovery.Missing = append(p.Discovery.Missing, companydocs.VerificationGap{Code: companydocs.GapLEIRecordsDiffer,
		Params: companydocs.GapParams{Listed: []string{describeGLEIF(&seen.first), describeGLEIF(rec)}}})
	p.Verified, p.Documents = false, nil
	return r.put(p, at)
}

// recountFirstAsConflict moves the first record of a differing LEI from
// the count it was given to the conflicts.
func (r *run) recountFirstAsConflict(seen *seenLEI, rec *GLEIFRecord) {
	g := &r.sum.GLEIF
	switch seen.outcome {
	case outcomeConflict:
		return // counted as a conflict with the register already
	case outcomeLinked:
		g.Linked--
	case outcomeDiscoveryVerified:
		g.DiscoveryVerified--
		g.Discovery--
	case outcomeDiscovery:
		g.Discovery--
	}
	at := seen.at
	at.Detail = differDetail(seen, rec)
	r.addConflict(seen.first.LEI, ReasonLEIRecordsDiffer, at.Detail, at)
}

// countAfterDiffering counts a further record of an LEI whose records
// differ: a repeat of the first is merged, anything else is one more
// conflict. The sink keeps the unverified candidate.
func (r *run) countAfterDiffering(seen *seenLEI, rec *GLEIFRecord, at Location) {
	if sameGLEIFRecord(&seen.first, rec) {
		at.Detail = string(rec.LEI)
		r.sum.GLEIF.Merged++
		r.sum.count(KindMerged, ReasonDuplicateLEI, at)
		return
	}
	at.Detail = differDetail(seen, rec)
	r.addConflict(rec.LEI, ReasonLEIRecordsDiffer, at.Detail, at)
}

// unlink takes back the LEI link the first record of a differing LEI
// added to a registry profile.
func (r *run) unlink(seen *seenLEI, at Location) error {
	if seen.linkedTo == "" {
		return nil
	}
	p, err := r.sink.Get(seen.linkedTo)
	if err != nil {
		return fmt.Errorf("%s: line %d: get %s: %w", at.File, at.Line, seen.linkedTo, err)
	} else if p == nil {
		return fmt.Errorf("%s: line %d: profile %s, linked to LEI %s, is gone", at.File, at.Line, seen.linkedTo, seen.first.LEI)
	}
	kept := p.LEIs[:0]
	for _, l := range p.LEIs {
		if l.LEI != seen.first.LEI || l.Method != LinkMethod {
			kept = append(kept, l)
		}
	}
	p.LEIs = kept
	seen.linkedTo = ""
	return r.put(p, at)
}

// differDetail names the LEI and both records with where they were read.
func differDetail(seen *seenLEI, rec *GLEIFRecord) string {
	return fmt.Sprintf("%s: %s at %s:%d, %s", rec.LEI, describeGLEIF(&seen.first), seen.at.File, seen.at.Line, describeGLEIF(rec))
}

// describeGLEIF names a GLEIF record by its quoted legal name and its
// registration.
func describeGLEIF(r *GLEIFRecord) string {
	reg := strings.TrimSpace(r.RACode + " " + r.RAEntityID)
	if reg == "" {
		reg = "no registration"
	}
	return fmt.Sprintf("%q %s", r.LegalName, reg)
}
