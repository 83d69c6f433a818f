package flagops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// HTTPError is an answer the client cannot use.
type HTTPError struct {
	Status  int
	Message string
	// RetryAfter is how long the server asked to wait before trying again (Retry-After), 0 when it did not say.
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string { return e.Message }

// httpError reads the server's error body { error: { message } } into an HTTPError.
func httpError(res *http.Response, what string) error {
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var parsed struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	detail := ""
	if json.Unmarshal(body, &parsed) == nil && parsed.Error.Message != "" {
		detail = ": " + parsed.Error.Message
	}
	var retryAfter time.Duration
	if seconds, err := strconv.Atoi(strings.TrimSpace(res.Header.Get("Retry-After"))); err == nil && seconds >= 0 {
		retryAfter = time.Duration(seconds) * time.Second
	}
	return &HTTPError{Status: res.StatusCode, Message: fmt.Sprintf("%s answered %d%s", what, res.StatusCode, detail), RetryAfter: retryAfter}
}

// connectionLost says whether a request got no answer because the connection was refused or reset (or closed
// before the answer was whole): nothing listens there now, the server is restarting, so trying again soon
// costs it nothing.
func connectionLost(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// reconnectMax is the longest wait before trying again a server that refused or reset the connection.
const reconnectMax = time.Second

// reconnectDelay is the wait before reconnecting to a server that is not listening: up to a second (less when
// initial is), half fixed and half random.
func reconnectDelay(initial, max time.Duration) time.Duration {
	if initial > reconnectMax {
		initial = reconnectMax
	}
	return backoff(1, initial, max)
}

// retryDelay is the wait before trying again after err, the answered-th failure in a row the server answered
// (or that timed out). A lost connection is retried within a second, so a restarted server is found at once;
// a server that answers but fails is given room: what its Retry-After asks (at most max), else the doubling
// backoff.
func retryDelay(err error, answered int, initial, max time.Duration) time.Duration {
	if connectionLost(err) {
		return reconnectDelay(initial, max)
	}
	var httpErr *HTTPError
	if errors.As(err, &httpErr) && httpErr.RetryAfter > 0 {
		if httpErr.RetryAfter > max {
			return max
		}
		return httpErr.RetryAfter
	}
	return backoff(answered, initial, max)
}

func etagOf(version int64) string { return `"v` + strconv.FormatInt(version, 10) + `"` }

// backoff is the delay before retry number attempt (1 = the first): doubling from initial up to max, then
// half fixed and half random, so clients cut off by one outage do not come back in lockstep.
func backoff(attempt int, initial, max time.Duration) time.Duration {
	ceiling := max
	if attempt < 1 {
		attempt = 1
	}
	if attempt <= 30 {
		if d := initial << (attempt - 1); d > 0 && d < max {
			ceiling = d
		}
	}
	return ceiling/2 + time.Duration(rand.Int63n(int64(ceiling/2)+1))
}

func (c *Client) newRequest(ctx context.Context, path string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.opts.SDKKey)
	return req, nil
}

// refresh checks the snapshot once: GET /v1/snapshot with If-None-Match and, when the server served the
// version held, ?since= so that a server that knows it answers only what changed; a bootstrap is replaced by
// the whole snapshot. The transport asks for gzip and decompresses. A delta is applied to the held snapshot;
// anything else replaces it.
func (c *Client) refresh(ctx context.Context) error {
	c.updateMu.Lock()
	held := c.current.Load()
	etag := c.etag
	c.updateMu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	path := "/v1/snapshot"
	if held != nil && !held.bootstrap {
		path += "?since=" + strconv.FormatInt(held.version, 10)
	}
	req, err := c.newRequest(ctx, path)
	if err != nil {
		return err
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotModified {
		c.updateMu.Lock()
		if c.current.Load() != nil {
			c.status.Store(int32(StatusReady))
		}
		c.updateMu.Unlock()
		return nil
	}
	if res.StatusCode != http.StatusOK {
		return httpError(res, "GET /v1/snapshot")
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("GET /v1/snapshot: reading the body: %w", err)
	}
	w, err := parseSnapshot(body)
	if err != nil {
		return err
	}

	c.updateMu.Lock()
	defer c.updateMu.Unlock()
	now := c.current.Load()
	if w.Since != nil {
		if held == nil || held.bootstrap || int64(*w.Since) != held.version {
			return errors.New("GET /v1/snapshot answered a delta from a version the client does not hold")
		}
		if now != held { // a stream patch moved on meanwhile: ask again from there if this went further
			if v := versionOf(w.Version); now == nil || v != now.version {
				c.requestRefresh(v)
			}
			return nil
		}
		next, err := now.applyPatch(versionOf(w.Version), w.Flags, w.Segments)
		if err != nil {
			return err
		}
		c.install(next)
		return nil
	}
	env, err := compileSnapshot(w)
	if err != nil {
		return err
	}
	// A stream patch installed a newer version while this request was out: keep that one.
	if now != held && now != nil && env.version < now.version {
		return nil
	}
	c.install(env)
	return nil
}

// pollLoop keeps the snapshot current: at start, on each request (stream announcements, a dropped stream),
// every PollInterval while no stream is connected, and with backoff after failures.
func (c *Client) pollLoop() {
	defer c.wg.Done()
	failures := 0 // in a row, until a refresh succeeds
	answered := 0 // of those, the ones the server answered (or that timed out): they double the delay
	var retryIn time.Duration
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-timer.C:
		case <-c.refreshCh:
			force, announced := c.forceRefresh.Swap(false), c.announced.Swap(0)
			if held := c.current.Load(); !force && failures == 0 && held != nil && !held.bootstrap && held.version == announced {
				continue // already holds what was announced; the poll timer keeps running
			}
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
		if err := c.refresh(c.ctx); err != nil {
			if c.ctx.Err() != nil {
				return
			}
			failures++
			if failures == 1 {
				c.logger.Printf("could not update the flags: %v; retrying", err)
			}
			if connectionLost(err) {
				answered = 0
			} else {
				answered++
			}
			retryIn = retryDelay(err, answered, c.opts.RetryInitial, c.opts.RetryMax)
			c.failed(err)
		} else {
			failures, answered = 0, 0
		}
		var delay time.Duration
		switch {
		case failures > 0:
			delay = retryIn
		case c.streamUp.Load():
			delay = c.opts.PollInterval * 10 // the stream announces every change; a rare check costs a 304
		default:
			delay = c.opts.PollInterval
		}
		timer.Reset(delay)
	}
}
