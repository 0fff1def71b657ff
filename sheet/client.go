package sheet

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"companydocs"
	"companydocs/internal/cli"
	"companydocs/messages"
	"companydocs/resolver"
)

// batchSearchPath is the server's batch endpoint, relative to --server;
// sessionsPath exchanges an API key for a session token.
const (
	batchSearchPath = "/api/v1/documents/companies/search/batch"
	sessionsPath    = "/api/v1/auth/sessions/"
)

// APIKeyEnv holds the API key resolve --server signs in with, so that its
// batches spend the account's search rate (its plan's search_rate), not
// the address's; an environment variable, not a flag, so that the key
// does not show in the process list.
const APIKeyEnv = "COMPANYDOCS_API_KEY"

// Retries of a batch. A 429, and a 503 with Retry-After (the server
// resolves as many batches as it takes at once), is the server pacing a
// long run: it is waited out as often as it comes, each wait as long as
// Retry-After says (at most maxRetryAfter). A 502, a 503 without
// Retry-After, a 504, a broken connection or a search the server did not
// answer in the batch's time is tried again MaxUnavailableRetries times,
// waiting longer each time (retryWait).
const (
	maxRetryAfter         = time.Minute
	defaultRetryAfter     = time.Second
	MaxUnavailableRetries = 5
	batchRequestTimeout   = 5 * time.Minute
	maxBatchAnswerBytes   = 256 << 20
)

// Client resolves rows through a server's batch endpoint.
type Client struct {
	server   string
	endpoint string
	lang     string // Accept-Language: the items' refusals are said in it
	client   *http.Client
	token    string // the session's, "" anonymous
	// waiting hears each wait on the server: how long and why.
	waiting func(d time.Duration, why string)
}

// NewClient returns the client of the server at base URL server,
// anonymous, asking for English sentences.
func NewClient(server string) *Client {
	return &Client{
		server:   strings.TrimRight(server, "/"),
		endpoint: strings.TrimRight(server, "/") + batchSearchPath,
		lang:     messages.English,
		client:   &http.Client{Timeout: batchRequestTimeout},
		waiting:  func(time.Duration, string) {},
	}
}

// checkServerURL is the usage check of --server.
func checkServerURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--server must be the server's base URL, such as http://127.0.0.1:8080, got %q: %w", s, cli.ErrUsage)
	}
	return nil
}

// batchItem is one search of the batch request.
type batchItem struct {
	Query      string               `json:"query"`
	Mode       string               `json:"mode,omitempty"`
	Discover   bool                 `json:"discover,omitempty"`
	Limit      int                  `json:"limit,omitempty"`
	Properties *resolver.Properties `json:"properties,omitempty"`
}

// BatchAnswer is the batch endpoint's answer: one result per search, in
// order, either candidates or an error.
type BatchAnswer struct {
	Results []struct {
		resolver.Result
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"results"`
}

func (s *Client) resolve(ctx context.Context, reqs []resolver.Request) ([]rowOutcome, error) {
	outs := make([]rowOutcome, len(reqs))
	pending := make([]int, len(reqs))
	for i := range pending {
		pending[i] = i
	}
	// A search the server did not answer within the batch's time comes
	// back as service_unavailable: it is sent again, not written.
	for attempt := 1; ; attempt++ {
		answers, err := s.send(ctx, reqs, pending)
		if err != nil {
			return nil, err
		}
		var again []int
		for k, i := range pending {
			if answers[k].errCode == companydocs.EUNAVAILABLE {
				again = append(again, i)
			} else {
				outs[i] = answers[k]
			}
		}
		if len(again) == 0 {
			return outs, nil
		}
		if attempt > MaxUnavailableRetries {
			return nil, fmt.Errorf("the server did not answer %d of a batch's searches in time, %d times (%s); "+
				"send smaller batches (--batch-size) or fewer at once (--workers), and continue with --output FILE --resume",
				len(again), attempt, strings.TrimSuffix(answers[slices.Index(pending, again[0])].errText, "."))
		}
		wait := retryWait(attempt)
		s.waiting(wait, messages.Say(s.lang, "resolve.waitResend", messages.Args{"n": len(again)}))
		if err := sleepContext(ctx, wait); err != nil {
			return nil, err
		}
		pending = again
	}
}

// send posts the searches of reqs at the indexes pending as one batch.
func (s *Client) send(ctx context.Context, reqs []resolver.Request, pending []int) ([]rowOutcome, error) {
	items := make([]batchItem, len(pending))
	for k, i := range pending {
		items[k] = batchItemOf(reqs[i])
	}
	body, err := json.Marshal(struct {
		Queries []batchItem `json:"queries"`
	}{items})
	if err != nil {
		return nil, err
	}
	answer, err := s.Post(ctx, body)
	if err != nil {
		return nil, err
	}
	if len(answer.Results) != len(items) {
		return nil, fmt.Errorf("the server answered %d results for %d searches", len(answer.Results), len(items))
	}
	outs := make([]rowOutcome, len(items))
	for k, r := range answer.Results {
		if r.Error != nil {
			outs[k] = rowOutcome{errCode: r.Error.Code, errText: r.Error.Message}
		} else {
			outs[k] = bestOf(&r.Result)
		}
	}
	return outs, nil
}

// retryWait is the wait before the attempt-th retry: 1, 2, 4, 8, 16
// times RetryBase.
func retryWait(attempt int) time.Duration {
	return time.Duration(1<<(attempt-1)) * RetryBase
}

// RetryBase is the first wait before a retry; tests shorten it.
var RetryBase = time.Second

func batchItemOf(r resolver.Request) batchItem {
	item := batchItem{Query: r.Query, Limit: r.Limit, Discover: r.Discover}
	if r.Mode != resolver.ModeStandard {
		item.Mode = r.Mode
	}
	if r.Properties != (resolver.Properties{}) {
		item.Properties = &r.Properties
	}
	return item
}

// Post sends one batch (the JSON body of the batch endpoint) until it
// is answered, waiting out 429s and
// retrying an unavailable server.
func (s *Client) Post(ctx context.Context, body []byte) (*BatchAnswer, error) {
	unavailable := 0
	for {
		answer, wait, err := s.postOnce(ctx, body)
		var retry *retryableError
		switch {
		case err == nil:
			return answer, nil
		case !errors.As(err, &retry) || ctx.Err() != nil:
			return nil, err
		case !retry.rateLimited:
			unavailable++
			if unavailable > MaxUnavailableRetries {
				return nil, fmt.Errorf("%w (tried %d times)", retry.err, unavailable)
			}
			wait = retryWait(unavailable)
		}
		s.waiting(wait, retry.why(s.lang, s.token != ""))
		if err := sleepContext(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// signIn exchanges apiKey for a session token, which every batch then
// carries: the run spends the account's search budget.
func (s *Client) signIn(ctx context.Context, apiKey string) error {
	body, err := json.Marshal(map[string]string{"api_key": apiKey})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.server+sessionsPath, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Language", s.lang)
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("signing in with %s: the server %s did not answer: %w", APIKeyEnv, s.server, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var session struct {
		Token string `json:"token"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(data, &session) != nil || session.Token == "" {
		return fmt.Errorf("signing in with the API key in %s: %w", APIKeyEnv, serverError(resp.StatusCode, data))
	}
	s.token = session.Token
	return nil
}

// retryableError is an answer worth sending the batch again for.
type retryableError struct {
	err         error
	rateLimited bool
	status      int    // the answer's, 0 without one
	said        string // the answer's sentence, "" without one
}

func (e *retryableError) Error() string { return e.err.Error() }

// why says what the run waits for before sending the batch again.
// The server's own sentence says which of its limits it is: the
// search budget (the address's or the signed-in account's), one batch of
// an address at a time, the batches a node takes at once.
func (e *retryableError) why(lang string, signedIn bool) string {
	args := messages.Args{"status": e.status, "said": strings.TrimSuffix(e.said, "."), "variable": APIKeyEnv, "error": e.err.Error()}
	switch {
	case e.status == http.StatusTooManyRequests && !signedIn:
		return messages.Say(lang, "resolve.waitRateLimitAnonymous", args)
	case e.rateLimited:
		return messages.Say(lang, "resolve.waitRateLimit", args)
	}
	return messages.Say(lang, "resolve.waitNoAnswer", args)
}

func (s *Client) postOnce(ctx context.Context, body []byte) (*BatchAnswer, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Language", s.lang)
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, &retryableError{err: fmt.Errorf("the server %s did not answer: %w", s.endpoint, err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBatchAnswerBytes))
	if err != nil {
		return nil, 0, &retryableError{err: fmt.Errorf("reading the server's answer: %w", err)}
	}
	switch resp.StatusCode {
	case http.StatusOK:
		var answer BatchAnswer
		if err := json.Unmarshal(data, &answer); err != nil {
			return nil, 0, fmt.Errorf("the server's answer is not the batch endpoint's JSON: %w", err)
		}
		return &answer, 0, nil
	case http.StatusTooManyRequests:
		return nil, retryAfter(resp.Header.Get("Retry-After")), &retryableError{err: serverError(resp.StatusCode, data), rateLimited: true, status: resp.StatusCode, said: errorSentence(data)}
	case http.StatusServiceUnavailable:
		// With Retry-After the server is pacing (it resolves as many
		// batches as it takes at once), not failing.
		paced := resp.Header.Get("Retry-After") != ""
		return nil, retryAfter(resp.Header.Get("Retry-After")), &retryableError{err: serverError(resp.StatusCode, data), rateLimited: paced, status: resp.StatusCode, said: errorSentence(data)}
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return nil, 0, &retryableError{err: serverError(resp.StatusCode, data)}
	}
	return nil, 0, serverError(resp.StatusCode, data)
}

// retryAfter reads a Retry-After header of seconds, bounded.
func retryAfter(h string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(h))
	if err != nil || n < 0 {
		return defaultRetryAfter
	}
	return min(time.Duration(n)*time.Second, maxRetryAfter)
}

// serverError turns an error answer into the service's sentence.
func serverError(status int, body []byte) error {
	if code, message := errorBody(body); code != "" {
		return fmt.Errorf("the server answered %d %s: %s", status, code, message)
	}
	return fmt.Errorf("the server answered %d %s", status, http.StatusText(status))
}

// errorBody reads the code and sentence of an error answer ("" when it is
// not the service's error body).
func errorBody(body []byte) (code, message string) {
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", ""
	}
	return e.Error.Code, e.Error.Message
}

// errorSentence is the sentence of an error answer, or its code.
func errorSentence(body []byte) string {
	code, message := errorBody(body)
	return cmp.Or(message, code, "no sentence")
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
