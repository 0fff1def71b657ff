package sheet

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"companydocs"
	"companydocs/messages"

	"github.com/schollz/progressbar/v3"
)

// rowProgress says how far a run is, in the run's language (--lang): on
// a terminal a bar of the rows done of the rows in all (counted on a file
// while the run goes on; unknown on stdin), their rate and the time left;
// anywhere, a line when the run waits on the server (its search rate
// limit, or its load) and for how long, and at the end what the rows came
// to (summary).
type rowProgress struct {
	w     io.Writer
	lang  string
	bar   *progressbar.ProgressBar
	total atomic.Int64 // rows of the input after those kept; -1 while unknown

	mu       sync.Mutex // rows are added by the writer, waits said by the workers
	rows     int        // rows written in this run
	kept     int        // rows a resumed output held already
	tally    rowTally   // what the rows of this run came to
	started  time.Time
	lastWait time.Time
}

// rowTally counts the rows of a run by what they came to: found exact,
// to review (a candidate labelled possible or needs_verification), not
// found (no candidate), refused (over a cap, or by the server).
type rowTally struct{ exact, review, none, refused int }

func (t *rowTally) add(o rowOutcome) {
	switch {
	case o.errCode != "":
		t.refused++
	case o.best == nil:
		t.none++
	case o.best.ConfidenceLabel == companydocs.LabelExact:
		t.exact++
	default:
		t.review++
	}
}

// rowsUnknown is the total of an input whose rows are not counted.
const rowsUnknown = -1

func newRowProgress(w io.Writer, lang string, terminal bool, kept int) *rowProgress {
	p := &rowProgress{w: w, lang: lang, kept: kept, started: time.Now()}
	p.total.Store(rowsUnknown)
	if !terminal {
		return p
	}
	p.bar = progressbar.NewOptions64(rowsUnknown,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
	p.bar.Describe(p.status(0))
	return p
}

// say is the catalog's sentence key in the run's language.
func (p *rowProgress) say(key string, args messages.Args) string {
	return messages.Say(p.lang, key, args)
}

// counted sets the rows of the input, once they are counted.
func (p *rowProgress) counted(rows int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total.Store(int64(rows))
	if p.bar != nil {
		p.bar.ChangeMax64(int64(max(rows-p.kept, 1)))
		p.bar.Set64(int64(p.rows))
	}
}

// status is the bar's words: the rows done and their rate.
func (p *rowProgress) status(rate float64) string {
	return p.say("resolve.rate", messages.Args{"done": p.done(), "rate": fmt.Sprintf("%.0f", rate)})
}

// done says the rows done: "120 of 5000 rows" ("120 rows" while the
// total is unknown), and those kept by --resume.
func (p *rowProgress) done() string {
	var b strings.Builder
	if total := p.total.Load(); total >= 0 {
		b.WriteString(p.say("resolve.doneOf", messages.Args{"done": p.kept + p.rows, "total": total}))
	} else {
		b.WriteString(p.say("resolve.done", messages.Args{"done": p.kept + p.rows}))
	}
	if p.kept > 0 {
		b.WriteString(p.say("resolve.kept", messages.Args{"kept": p.kept}))
	}
	return b.String()
}

// add counts the outcomes of rows written.
func (p *rowProgress) add(outs []rowOutcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rows += len(outs)
	for _, o := range outs {
		p.tally.add(o)
	}
	if p.bar == nil {
		return
	}
	p.bar.Describe(p.status(float64(p.rows) / max(time.Since(p.started).Seconds(), 0.001)))
	if p.total.Load() >= 0 {
		p.bar.Set64(int64(p.rows))
	} else {
		p.bar.Add(len(outs))
	}
}

// waiting says that the run waits d on the server and why: a line of its
// own, at most one a second (the workers wait together).
func (p *rowProgress) waiting(d time.Duration, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.lastWait) < time.Second {
		return
	}
	p.lastWait = now
	line := p.say("resolve.waiting", messages.Args{"wait": waitText(d), "why": why, "done": p.done()})
	if p.bar != nil {
		p.bar.Clear()
	}
	fmt.Fprintln(p.w, line)
}

// waitText says a wait in whole seconds, or milliseconds below one.
func waitText(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.0f s", d.Seconds())
}

// finish ends the bar and says what the rows of this run came to.
func (p *rowProgress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tally
	line := p.say("resolve.summary", messages.Args{"rows": p.rows, "exact": t.exact, "review": t.review, "none": t.none})
	if t.refused > 0 {
		line += p.say("resolve.summaryRefused", messages.Args{"refused": t.refused})
	}
	fmt.Fprintln(p.w, line)
}
