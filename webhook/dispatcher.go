package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"companydocs"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The retry schedule: attempt n failing waits RetryBase·2^(n-1), at most
// RetryMaxDelay, of which the second half is random (jitter, so that a
// receiver coming back is not hit by every queued delivery at once).
// With the defaults: 30s, 1m, 2m, 4m ... 8.5h, then 12h, about 17
// attempts in all; once the next attempt would fall more than RetryFor
// (three days) after the event, the delivery is failed.
const (
	RetryBase     = 30 * time.Second
	RetryMaxDelay = 12 * time.Hour
	RetryFor      = 72 * time.Hour
)

// Defaults of Options.
const (
	DefaultTimeout = 10 * time.Second
	// DefaultWorkers bounds the attempts in flight: one per endpoint, so
	// that up to this many endpoints are served at once. A dead receiver
	// holds one of them for at most the timeout.
	DefaultWorkers = 64
	// statsEvery bounds how often the outbox and pending counts are read
	// for the metrics: counting walks the buckets, and a round runs after
	// every attempt.
	statsEvery = time.Second
	// fanOutBatch is how many outbox events one transaction fans out.
	fanOutBatch = 256
	// idlePoll bounds the sleep between two looks at the store, so that a
	// missed wake-up costs at most this much delay.
	idlePoll = 5 * time.Second
)

// Bounds of what one attempt reads from a receiver, whoever runs it: an
// attempt costs at most these bytes of the answer, and all of it ends
// within Options.Timeout (one deadline covers dialling, the TLS
// handshake, sending, the headers and the body).
const (
	// maxResponseHeader caps the status line and headers of an answer,
	// interim 1xx answers included. Go's default is 10 MB, which a
	// receiver sending endless headers made every attempt allocate;
	// receivers answering a webhook need a few hundred bytes.
	maxResponseHeader = 4 << 10
	// maxResponseRead is how much of an answer's body is read (and
	// thrown away) so that the connection can be reused; a longer body
	// closes the connection instead.
	maxResponseRead = 4 << 10
)

// Outcomes of an attempt, as Options.OnOutcome reports them.
const (
	OutcomeDelivered = "delivered"
	OutcomeRetry     = "retry"
	OutcomeFailed    = "failed"
)

// Store is what the dispatcher needs of the order store.
type Store interface {
	// FanOutEvents turns up to limit outbox events into deliveries, in one
	// transaction, and returns how many it took.
	FanOutEvents(limit int) (int, error)
	// DueWebhooks returns due deliveries, one per endpoint busy does not
	// name, and when the next one falls due.
	DueWebhooks(now time.Time, busy func(endpointID string) bool, limit int) ([]companydocs.WebhookTask, time.Time, error)
	RecordWebhookAttempt(companydocs.WebhookResult) error
	PendingWebhooks() (int, error)
	OutboxStats() (depth int, oldest time.Time, err error)
}

// Options tunes a Dispatcher; the zero value gives the defaults.
type Options struct {
	Workers int
	// Timeout bounds one attempt: connecting, sending, the answer.
	Timeout time.Duration
	// RetryBase and RetryFor override the retry schedule (tests).
	RetryBase, RetryFor time.Duration
	Policy              Policy
	Logger              *slog.Logger
	Now                 func() time.Time
	// OnOutcome is called after each recorded attempt.
	OnOutcome func(outcome string)
	// OnStats is called after each round with the outbox depth, the time
	// of its oldest event and the number of pending deliveries.
	OnStats func(outboxDepth int, oldest time.Time, pending int)
}

// Dispatcher moves events from the outbox to the receivers.
type Dispatcher struct {
	store  Store
	opts   Options
	client *http.Client

	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	loop   sync.WaitGroup
	work   sync.WaitGroup

	mu   sync.Mutex
	busy map[string]bool // endpoints with an attempt in flight

	lastStats time.Time // of the loop goroutine only
}

// New returns a dispatcher; Start runs it.
func New(store Store, opts Options) *Dispatcher {
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = RetryBase
	}
	if opts.RetryFor <= 0 {
		opts.RetryFor = RetryFor
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Dispatcher{store: store, opts: opts, client: newClient(opts), wake: make(chan struct{}, 1),
		ctx: ctx, cancel: cancel, busy: map[string]bool{}}
}

// newClient dials only what the policy allows, through no proxy, and
// follows no redirect. It speaks HTTP/1.1 only, so that
// maxResponseHeader is the cap that applies, and keeps at most one idle
// connection per worker.
func newClient(opts Options) *http.Client {
	dialer := &net.Dialer{Timeout: opts.Timeout, Control: opts.Policy.control}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		Protocols:              protocols,
		TLSHandshakeTimeout:    opts.Timeout,
		ResponseHeaderTimeout:  opts.Timeout,
		MaxResponseHeaderBytes: maxResponseHeader,
		MaxIdleConns:           opts.Workers,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
	}
	return &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// Start runs the dispatch loop until Close.
func (d *Dispatcher) Start() {
	d.loop.Add(1)
	go d.run()
}

// Wake asks for a look at the outbox now (after a commit); it never
// blocks.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Close stops the loop and cancels the attempts in flight; those are not
// recorded and are made again after the next start.
func (d *Dispatcher) Close() error {
	d.cancel()
	d.loop.Wait()
	d.work.Wait()
	d.client.CloseIdleConnections()
	return nil
}

func (d *Dispatcher) run() {
	defer d.loop.Done()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-d.wake:
		case <-timer.C:
		}
		wait := d.round()
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}

// round fans out the outbox, starts the due attempts there are workers
// for, and returns how long to sleep.
func (d *Dispatcher) round() time.Duration {
	defer d.stats()
	for {
		n, err := d.store.FanOutEvents(fanOutBatch)
		if err != nil {
			d.opts.Logger.Error("webhook fan-out failed", "err", err)
			return time.Second
		}
		if n < fanOutBatch {
			break
		}
	}
	free := d.opts.Workers - d.inFlight()
	if free <= 0 {
		return idlePoll // a finishing attempt wakes the loop
	}
	now := d.opts.Now()
	tasks, next, err := d.store.DueWebhooks(now, d.isBusy, free)
	if err != nil {
		d.opts.Logger.Error("webhook scan failed", "err", err)
		return time.Second
	}
	for _, t := range tasks {
		d.start(t)
	}
	if next.IsZero() || next.Sub(now) > idlePoll {
		return idlePoll
	}
	return max(next.Sub(now), time.Millisecond)
}

func (d *Dispatcher) stats() {
	if d.opts.OnStats == nil || time.Since(d.lastStats) < statsEvery {
		return
	}
	d.lastStats = time.Now()
	depth, oldest, err := d.store.OutboxStats()
	pending, err2 := d.store.PendingWebhooks()
	if err == nil && err2 == nil {
		d.opts.OnStats(depth, oldest, pending)
	}
}

func (d *Dispatcher) inFlight() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.busy)
}

func (d *Dispatcher) isBusy(endpoint string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.busy[endpoint]
}

func (d *Dispatcher) start(t companydocs.WebhookTask) {
	d.mu.Lock()
	d.busy[t.EndpointID] = true
	d.mu.Unlock()
	d.work.Add(1)
	go func() {
		defer d.work.Done()
		d.attempt(t)
		d.mu.Lock()
		delete(d.busy, t.EndpointID)
		d.mu.Unlock()
		d.Wake()
	}()
}

// attempt sends one delivery and records the outcome, unless the
// dispatcher is closing (then the attempt is made again after restart).
func (d *Dispatcher) attempt(t companydocs.WebhookTask) {
	at := d.opts.Now()
	status, err := d.send(t, at)
	if d.ctx.Err() != nil {
		return
	}
	r := companydocs.WebhookResult{EndpointID: t.EndpointID, EventID: t.EventID,
		Attempt: companydocs.WebhookAttempt{Attempt: t.Attempt, At: at.UTC(), StatusCode: status}}
	outcome := OutcomeDelivered
	switch {
	case err == nil && status >= 200 && status < 300:
		r.State = companydocs.DeliveryDelivered
	default:
		if err != nil {
			r.Attempt.Error = err.Error()
		} else {
			r.Attempt.Error = "the receiver answered " + strconv.Itoa(status) + " (only 2xx counts as delivered)"
		}
		r.State, r.NextAttempt, outcome = d.retry(t, at)
	}
	if err := d.store.RecordWebhookAttempt(r); err != nil {
		d.opts.Logger.Error("record webhook attempt", "endpoint", t.EndpointID, "event", t.EventID, "err", err)
		return
	}
	d.opts.Logger.Debug("webhook attempt", "endpoint", t.EndpointID, "event", t.EventID, "attempt", t.Attempt, "status", status, "outcome", outcome)
	if d.opts.OnOutcome != nil {
		d.opts.OnOutcome(outcome)
	}
}

// retry schedules the next attempt, or fails the delivery once the
// retry window is over.
func (d *Dispatcher) retry(t companydocs.WebhookTask, at time.Time) (state string, next time.Time, outcome string) {
	delay := d.opts.RetryBase << min(t.Attempt-1, 30)
	if delay <= 0 || delay > RetryMaxDelay {
		delay = RetryMaxDelay
	}
	delay = delay/2 + rand.N(delay/2+1)
	next = at.Add(delay)
	if next.After(t.CreatedAt.Add(d.opts.RetryFor)) {
		return companydocs.DeliveryFailed, time.Time{}, OutcomeFailed
	}
	return companydocs.DeliveryPending, next, OutcomeRetry
}

// send makes the signed POST and returns the receiver's status. The
// attempt's deadline covers the whole exchange, reading the body too, so
// a receiver trickling its answer a byte at a time is cut off at
// Options.Timeout.
func (d *Dispatcher) send(t companydocs.WebhookTask, at time.Time) (int, error) {
	if u, err := url.Parse(t.URL); err != nil || (u.Scheme != "https" && !(u.Scheme == "http" && d.opts.Policy.AllowHTTP)) {
		return 0, fmt.Errorf("the url is not https, and http is not allowed")
	}
	wh, err := standardwebhooks.NewWebhook(t.Secret)
	if err != nil {
		return 0, fmt.Errorf("the endpoint's secret is unusable")
	}
	sig, err := wh.Sign(t.EventID, at, t.Body)
	if err != nil {
		return 0, fmt.Errorf("sign: %w", err)
	}
	ctx, cancel := context.WithTimeout(d.ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(t.Body))
	if err != nil {
		return 0, fmt.Errorf("the url is not usable")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "companydocs-webhooks/1")
	req.Header.Set(standardwebhooks.HeaderWebhookID, t.EventID)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, attemptError(ctx, err)
	}
	defer resp.Body.Close()
	drain(resp.Body)
	return resp.StatusCode, nil
}

// drain reads and throws away at most maxResponseRead bytes of an
// answer's body, so that a short body leaves the connection reusable; an
// error reading it changes nothing, the status has come.
func drain(body io.Reader) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxResponseRead))
}

// attemptError says why no answer came, without the URL (the client
// sees it in the deliveries route; the URL is theirs anyway, but the
// wrapped *url.Error repeats it in every line).
// The attempt's deadline and the transport's header timeout are equal, so
// either may end a receiver that does not answer: both are the timeout.
func attemptError(ctx context.Context, err error) error {
	var ue *url.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, &ue) && ue.Timeout() {
		return fmt.Errorf("no answer within the timeout")
	}
	if headersTooLarge(err) {
		return fmt.Errorf("the receiver's status line and headers were longer than %d bytes, the most that is read; the answer was dropped", maxResponseHeader)
	}
	if ue != nil {
		err = ue.Err
	}
	return err
}

// headersTooLarge reports whether the transport gave up on an answer's
// headers at MaxResponseHeaderBytes. net/http has no error value for
// it, only this text; TestEndlessHeadersAreCutOff fails if it changes.
func headersTooLarge(err error) bool {
	return err != nil && strings.Contains(err.Error(), "server response headers exceeded")
}
