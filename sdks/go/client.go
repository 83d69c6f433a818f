package flagops

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Client. URL and SDKKey are required unless Offline.
type Options struct {
	// URL is the evaluation API's origin, e.g. http://127.0.0.1:4001.
	URL string
	// SDKKey fixes the project and environment the client serves.
	SDKKey string
	// PollInterval is how often the snapshot is checked while no stream is connected (default 30 s).
	PollInterval time.Duration
	// DisableStream turns off GET /v1/stream; the client then only polls.
	DisableStream bool
	// RequestTimeout bounds each snapshot request, body included (default 10 s).
	RequestTimeout time.Duration
	// RetryInitial and RetryMax bound the delays between retries after a failure: doubling from the first
	// to the last, half fixed and half random (defaults 1 s and 10 s: after an outage of the server, a client
	// learns of its changes, a kill included, within RetryMax of its return).
	RetryInitial time.Duration
	RetryMax     time.Duration
	// StreamIdleTimeout reopens a stream that sent nothing, not even a heartbeat, for this long (default 60 s).
	StreamIdleTimeout time.Duration
	// HTTPClient sends the requests (default: a client on http.DefaultTransport, which asks for gzip and
	// decompresses). Its Timeout must be zero, or it would cut the stream; RequestTimeout bounds requests.
	HTTPClient *http.Client
	// Logger receives warnings (default: the standard logger on stderr with a "[flagops] " prefix).
	Logger *log.Logger
	// OnChange is called, on the client's own goroutine, after each new snapshot is served, with the keys
	// of the flags whose results may have changed. It must not block for long.
	OnChange func(ChangeEvent)
	// DisableCounts stops counting evaluations; by default they are reported to the flag stats
	// (POST /v1/counts) every CountsInterval (default 10 s) and on Close.
	DisableCounts  bool
	CountsInterval time.Duration
	// SendExposures sends an exposure event (POST /v1/events) for each evaluation that gives a flag's own
	// answer, at most one per flag, variation and user in each ExposureFlushInterval (default 10 s), in
	// batches of up to 1,000, at the end of each interval and on Close. Off by default.
	SendExposures         bool
	ExposureFlushInterval time.Duration
	// EventQueueSize bounds the exposure and track events waiting to be sent (default 10,000); when it is
	// full the oldest event is dropped and counted (EventStats), and evaluation never waits.
	EventQueueSize int
	// Bootstrap is a snapshot (a GET /v1/snapshot body) served until the first one arrives.
	Bootstrap []byte
	// Offline serves Bootstrap only and sends no request.
	Offline bool
}

// ChangeEvent names the flags a new snapshot changed: entries added, changed or removed, and flags whose
// segments or prerequisites changed.
type ChangeEvent struct {
	Version int64
	Keys    []string
}

// Status is the client's state.
type Status int32

const (
	// StatusNotReady: nothing loaded and nothing failed yet.
	StatusNotReady Status = iota
	// StatusReady: serving what the server serves.
	StatusReady
	// StatusStale: the server cannot be reached; serving the last snapshot and retrying.
	StatusStale
	// StatusError: nothing to serve and the server cannot be reached, or the server refused the key.
	StatusError
)

func (s Status) String() string {
	return [...]string{"not_ready", "ready", "stale", "error"}[s]
}

// ErrRefused is returned by WaitReady when the server refused the SDK key (401 or 403).
var ErrRefused = errors.New("flagops: the server refused the SDK key")

// ErrClosed is returned by WaitReady when the client was closed before it had a snapshot.
var ErrClosed = errors.New("flagops: the client was closed before a snapshot arrived")

// Client keeps an environment's snapshot current and evaluates flags locally. Safe for concurrent use:
// evaluations read an immutable compiled snapshot through one atomic pointer, and never block or fail.
type Client struct {
	opts    Options
	base    string
	http    *http.Client
	logger  *log.Logger
	current atomic.Pointer[environment]
	status  atomic.Int32
	refused atomic.Bool

	readyOnce sync.Once
	ready     chan struct{}

	// updateMu serialises installing snapshots (poll, stream patches); etag is the held version's, when the
	// server served it.
	updateMu sync.Mutex
	etag     string

	refreshCh chan struct{}
	counts    *countReporter // nil: not counting
	events    *eventSender   // nil: offline
	exposures *eventSender   // events, when it records exposures; nil otherwise
	// What the pending refresh requests are for: the last version the stream announced, and whether any
	// request needs a check whatever is held (a dropped stream). Lets the loop skip a fetch of a version
	// it already holds (announced at start while the first fetch was out, or applied from a patch).
	announced    atomic.Int64
	forceRefresh atomic.Bool
	streamUp     atomic.Bool
	ctx          context.Context
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	closeOnce    sync.Once
}

func orDefault(d, fallback time.Duration) time.Duration {
	if d <= 0 {
		return fallback
	}
	return d
}

// NewClient starts a client: it fetches the snapshot and opens the stream in the background. It fails only
// for options that cannot work (a missing URL or key, an unreadable Bootstrap).
func NewClient(opts Options) (*Client, error) {
	c, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	if opts.Bootstrap != nil {
		w, err := parseSnapshot(opts.Bootstrap)
		if err != nil {
			return nil, fmt.Errorf("flagops: Bootstrap: %w", err)
		}
		env, err := compileSnapshot(w)
		if err != nil {
			return nil, fmt.Errorf("flagops: Bootstrap: %w", err)
		}
		env.bootstrap = true
		c.current.Store(env)
		c.markReady()
		if opts.Offline {
			c.status.Store(int32(StatusReady))
		} else {
			c.status.Store(int32(StatusStale)) // served, but not yet confirmed by the server
		}
	}
	if !opts.Offline {
		if !opts.DisableCounts {
			c.counts = newCountReporter(c)
			c.wg.Add(1)
			go c.counts.loop()
		}
		c.events = newEventSender(c)
		if opts.SendExposures {
			c.exposures = c.events
		}
		c.wg.Add(1)
		go c.events.loop()
		c.wg.Add(1)
		go c.pollLoop()
		if !opts.DisableStream {
			c.wg.Add(1)
			go c.streamLoop()
		}
	}
	return c, nil
}

// newClient checks the options and fills in defaults; it starts nothing.
func newClient(opts Options) (*Client, error) {
	if !opts.Offline {
		// A URL's scheme is case-insensitive: HTTP://host is http://host, and net/http reads it so.
		lower := strings.ToLower(opts.URL)
		if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
			return nil, errors.New("flagops: URL must be an http(s) URL")
		}
		if opts.SDKKey == "" {
			return nil, errors.New("flagops: SDKKey is required")
		}
	}
	opts.PollInterval = orDefault(opts.PollInterval, 30*time.Second)
	opts.RequestTimeout = orDefault(opts.RequestTimeout, 10*time.Second)
	opts.RetryInitial = orDefault(opts.RetryInitial, time.Second)
	opts.RetryMax = orDefault(opts.RetryMax, 10*time.Second)
	opts.StreamIdleTimeout = orDefault(opts.StreamIdleTimeout, 60*time.Second)
	opts.CountsInterval = orDefault(opts.CountsInterval, 10*time.Second)
	opts.ExposureFlushInterval = orDefault(opts.ExposureFlushInterval, 10*time.Second)
	if opts.EventQueueSize <= 0 {
		opts.EventQueueSize = defaultEventQueueSize
	}
	c := &Client{
		opts:      opts,
		base:      strings.TrimRight(opts.URL, "/"),
		http:      opts.HTTPClient,
		logger:    opts.Logger,
		ready:     make(chan struct{}),
		refreshCh: make(chan struct{}, 1),
	}
	if c.http == nil {
		c.http = &http.Client{Transport: http.DefaultTransport}
	}
	if c.logger == nil {
		c.logger = log.New(os.Stderr, "[flagops] ", log.LstdFlags)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// FetchSnapshot fetches the environment's snapshot once (GET /v1/snapshot), for one-off checks and tools;
// applications use a Client, which keeps it current. Only URL, SDKKey, HTTPClient and RequestTimeout apply.
func FetchSnapshot(ctx context.Context, opts Options) (*Snapshot, error) {
	opts.Offline, opts.Bootstrap = false, nil
	c, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	defer c.cancel()
	if err := c.refresh(ctx); err != nil {
		return nil, err
	}
	return c.Snapshot(), nil
}

func (c *Client) markReady() { c.readyOnce.Do(func() { close(c.ready) }) }

// WaitReady waits until there is a snapshot to serve; it returns ErrRefused at once when the server refused
// the key and nothing is served, ErrClosed when Close came first, and ctx's error when ctx ends first.
func (c *Client) WaitReady(ctx context.Context) error {
	select {
	case <-c.ready:
		if c.current.Load() == nil {
			if c.refused.Load() {
				return ErrRefused
			}
			return ErrClosed
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Status is the client's current state.
func (c *Client) Status() Status { return Status(c.status.Load()) }

// Version is the version of the snapshot served, and false before the first one.
func (c *Client) Version() (int64, bool) {
	env := c.current.Load()
	if env == nil {
		return 0, false
	}
	return env.version, true
}

// Snapshot is the snapshot being served (nil before the first one): evaluate several flags against it for
// results from one version.
func (c *Client) Snapshot() *Snapshot {
	env := c.current.Load()
	if env == nil {
		return nil
	}
	return &Snapshot{env: env}
}

// Keys is every flag key of the snapshot served, sorted.
func (c *Client) Keys() []string {
	env := c.current.Load()
	if env == nil {
		return nil
	}
	return env.keys()
}

// Close stops polling and the stream, sends the last evaluation counts and events, and waits for the
// client's goroutines to end, or for ctx. Evaluations keep answering from the last snapshot. Idempotent.
func (c *Client) Close(ctx context.Context) error {
	first := false
	c.closeOnce.Do(func() {
		first = true
		c.cancel()
		c.markReady()
	})
	done := make(chan struct{})
	go func() {
		c.wg.Wait()
		if first && c.counts != nil {
			c.counts.flush(ctx)
		}
		if first && c.events != nil {
			c.events.flush(ctx)
		}
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// install swaps in a new environment and reports the change; called with updateMu held.
func (c *Client) install(env *environment) {
	prev := c.current.Load()
	c.current.Store(env)
	if prev != nil && c.counts != nil {
		c.counts.retire(prev, env)
	}
	c.etag = etagOf(env.version)
	c.status.Store(int32(StatusReady))
	c.markReady()
	if prev != nil && c.opts.OnChange != nil {
		if keys := env.changedKeys(prev); len(keys) > 0 {
			c.opts.OnChange(ChangeEvent{Version: env.version, Keys: keys})
		}
	}
}

// failed records a failed update: stale while something is served, error otherwise or when the key is refused.
func (c *Client) failed(err error) {
	var httpErr *HTTPError
	if errors.As(err, &httpErr) && (httpErr.Status == 401 || httpErr.Status == 403) {
		// A refused key will not fix itself: error at once, even while the last snapshot is served.
		c.refused.Store(true)
		c.status.Store(int32(StatusError))
		if c.current.Load() == nil {
			c.markReady()
		}
		return
	}
	if c.current.Load() == nil {
		c.status.Store(int32(StatusError))
	} else {
		c.status.Store(int32(StatusStale))
	}
}

// requestRefresh asks the poll loop to check the snapshot now (coalesced); version is the announced
// version it is for, or 0 to check whatever is held.
func (c *Client) requestRefresh(version int64) {
	if version == 0 {
		c.forceRefresh.Store(true)
	} else {
		c.announced.Store(version)
	}
	select {
	case c.refreshCh <- struct{}{}:
	default:
	}
}
