package flagops

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/maphash"
	"io"
	"math"
	"net/http"
	"regexp"
	"sync"
	"sync/atomic"
	"time"
)

// Events: exposures (which variation a user was served, for experiment analysis and the sample-ratio
// check) and track events (what users did), sent in batches with POST /v1/events.
//
// Recording an exposure is on the evaluation's path, so it does the least that keeps counts meaningful:
// a hash of (flag, variation, user) looked up in a set of what this flush window already recorded (one
// exposure per user, flag and variation per window: a user evaluated in a loop is one exposure, not
// thousands, so per-variation counts stay close to users, as the sample-ratio check assumes) and, for a new
// one, an append to a bounded ring that drops its oldest event when full. Everything else (timestamps, JSON, HTTP, retries)
// happens on the sender's goroutine.

const (
	eventsMaxBatch         = 1000   // events per request (the server's limit)
	defaultEventQueueSize  = 10_000 // events waiting to be sent
	eventsMaxUserIDLength  = 256    // longer ids are sent without userId (the server refuses them)
	eventsMaxTrackValue    = 1e9
	eventsCloseAttempts    = 3
	eventsCloseRetryDelay  = 250 * time.Millisecond
	exposureSetInitialSize = 1 << 10
	exposureSetMaxSize     = 1 << 19 // 2 MiB: 262,144 distinct exposures per window, then the window's set starts over
)

var trackName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// eventSeed hashes users and flag keys for the exposure set; one per process is enough.
var eventSeed = maphash.MakeSeed()

const (
	kindExposure uint8 = iota
	kindTrack
)

type event struct {
	kind      uint8
	hasValue  bool
	key       string // exposure: the flag key; track: the name
	variation string
	userID    string
	value     float64
	at        int64 // unix ms; 0 for an exposure: stamped with its window's start when drained
}

// EventStats are the client's event counts since it started.
type EventStats struct {
	// Sent: events the server accepted (202).
	Sent int64
	// Dropped: events dropped before sending: the queue was full (the oldest go first), the flag was no longer
	// in the snapshot, or the client closed before they could be sent.
	Dropped int64
	// Rejected: events in requests the server refused (4xx): they are not sent again.
	Rejected int64
}

// exposureSet is what the current window recorded: an open-addressing table of 32-bit fingerprints of
// (flag, variation, user) hashes, the hash's low bits choosing the slot and its high 32 bits stored, so two
// keys are taken for one with a chance of about 1 in 2³² per lookup. Lookups and inserts are atomic loads
// and compare-and-swaps: a repeat, the common case, takes no lock. A window ends by swapping in a new table.
type exposureSet struct {
	slots []uint32 // 0: free
	mask  uint64
	limit int64 // inserts before the table is half full
	n     atomic.Int64
}

func newExposureSet(size int) *exposureSet {
	return &exposureSet{slots: make([]uint32, size), mask: uint64(size - 1), limit: int64(size / 2)}
}

// setSizeFor is the table for a window like one that recorded n: room for twice as many, within bounds.
func setSizeFor(n int64) int {
	size := exposureSetInitialSize
	for int64(size) < 4*n && size < exposureSetMaxSize {
		size *= 2
	}
	return size
}

// fingerprint is what the set keeps of h (its slot is h's low bits); never 0, which marks a free slot.
func fingerprint(h uint64) uint32 {
	if fp := uint32(h >> 32); fp != 0 {
		return fp
	}
	return 1
}

// add is false when the window already holds h.
func (s *exposureSet) add(h uint64) bool {
	fp := fingerprint(h)
	i := h & s.mask
	for probes := 0; probes < 64; probes++ {
		switch atomic.LoadUint32(&s.slots[i]) {
		case fp:
			return false
		case 0:
			if atomic.CompareAndSwapUint32(&s.slots[i], 0, fp) {
				return true
			}
			if atomic.LoadUint32(&s.slots[i]) == fp {
				return false
			}
		}
		i = (i + 1) & s.mask
	}
	return true // a long run (a full table): record it, a duplicate at worst
}

// eventSender queues events and sends them from its own goroutine.
type eventSender struct {
	client  *Client
	max     int // queue bound
	batchAt int // queue length that wakes the sender: a whole batch, or the whole queue

	mu          sync.Mutex
	ring        []event // grows up to max, then the oldest event is overwritten
	head, n     int
	windowStart int64 // unix ms: when the current dedupe window began
	seen        atomic.Pointer[exposureSet]
	closed      bool
	wake        chan struct{} // a batch is ready

	pending []event // drained, not yet accepted; only the sender's goroutine and the final flush touch it

	sent, dropped, rejected atomic.Int64
}

func newEventSender(c *Client) *eventSender {
	s := &eventSender{client: c, max: c.opts.EventQueueSize, batchAt: eventsMaxBatch,
		windowStart: time.Now().UnixMilli(), wake: make(chan struct{}, 1)}
	if s.max < s.batchAt {
		s.batchAt = s.max
	}
	s.seen.Store(newExposureSet(exposureSetInitialSize))
	return s
}

// expose records that f served variation to userID, once per window: h hashes the three, seen is the
// window's set it was looked up in (Client.served looks in its first slot).
func (s *eventSender) expose(seen *exposureSet, h uint64, f *compiledFlag, variation string, userID string) {
	if !seen.add(h) {
		return
	}
	if seen.n.Add(1) == seen.limit {
		// Half full: a larger table for the rest of the window (empty, as fingerprints cannot be moved; the
		// repeats it forgets are recorded once more), or, at the largest size, a fresh one.
		s.seen.CompareAndSwap(seen, newExposureSet(setSizeFor(seen.limit*2)))
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	ready := s.pushLocked(event{kind: kindExposure, key: f.key, variation: variation, userID: userID})
	s.mu.Unlock()
	if ready {
		s.signal()
	}
}

// track queues a track event.
func (s *eventSender) track(e event) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	ready := s.pushLocked(e)
	s.mu.Unlock()
	if ready {
		s.signal()
	}
}

func (s *eventSender) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// pushLocked appends e, dropping the oldest event when the queue is full; true when a whole batch waits.
func (s *eventSender) pushLocked(e event) bool {
	if s.n == len(s.ring) {
		if len(s.ring) < s.max {
			s.growRingLocked()
		} else {
			s.ring[s.head] = event{}
			s.head++
			if s.head == len(s.ring) {
				s.head = 0
			}
			s.n--
			s.dropped.Add(1)
		}
	}
	i := s.head + s.n
	if i >= len(s.ring) {
		i -= len(s.ring)
	}
	s.ring[i] = e
	s.n++
	return s.n == s.batchAt
}

func (s *eventSender) growRingLocked() {
	size := 2 * len(s.ring)
	if size < 256 {
		size = 256
	}
	if size > s.max {
		size = s.max
	}
	ring := make([]event, size)
	for i := 0; i < s.n; i++ {
		ring[i] = s.ring[(s.head+i)%len(s.ring)]
	}
	s.ring, s.head = ring, 0
}

// drain moves the queue into pending; newWindow also starts a new dedupe window. Exposures are stamped with
// the start of the window they were recorded in (the sender starts one at each UTC hour, so the stamp is
// in the evaluation's hour), and those of flags the snapshot no longer has are dropped: the server would
// refuse the whole request for them.
func (s *eventSender) drain(now time.Time, newWindow bool) {
	s.mu.Lock()
	taken := make([]event, 0, s.n)
	for i := 0; i < s.n; i++ {
		j := (s.head + i) % len(s.ring)
		taken = append(taken, s.ring[j])
		s.ring[j] = event{}
	}
	s.head, s.n = 0, 0
	windowStart := s.windowStart
	if newWindow {
		s.seen.Store(newExposureSet(setSizeFor(s.seen.Load().n.Load())))
		s.windowStart = now.UnixMilli()
	}
	s.mu.Unlock()

	env := s.client.current.Load()
	for _, e := range taken {
		if e.kind == kindExposure {
			if env == nil || !env.serves(e.key, e.variation) {
				s.dropped.Add(1)
				continue
			}
			e.at = windowStart
		}
		s.pending = append(s.pending, e)
	}
	if over := len(s.pending) - s.max; over > 0 {
		s.dropped.Add(int64(over))
		s.pending = append(s.pending[:0:0], s.pending[over:]...)
	}
}

// serves is whether the snapshot has flag key and it can serve variation.
func (e *environment) serves(key, variation string) bool {
	f := e.flags[key]
	if f == nil {
		return false
	}
	return f.variationIndex(variation) >= 0
}

type wireEvent struct {
	Type      string   `json:"type"`
	FlagKey   string   `json:"flagKey,omitempty"`
	Variation string   `json:"variation,omitempty"`
	Name      string   `json:"name,omitempty"`
	UserID    string   `json:"userId,omitempty"`
	Value     *float64 `json:"value,omitempty"`
	At        string   `json:"at"`
}

func (e *event) wire() wireEvent {
	w := wireEvent{At: time.UnixMilli(e.at).UTC().Format("2006-01-02T15:04:05.000Z")}
	if len(e.userID) <= eventsMaxUserIDLength {
		w.UserID = e.userID
	}
	if e.kind == kindExposure {
		w.Type, w.FlagKey, w.Variation = "exposure", e.key, e.variation
	} else {
		w.Type, w.Name = "track", e.key
		if e.hasValue {
			v := e.value
			w.Value = &v
		}
	}
	return w
}

type sendOutcome int

const (
	sendDone  sendOutcome = iota // accepted, or refused for good
	sendRetry                    // network, 5xx, 408, 429: try again later
)

// sendPending posts pending in batches of at most eventsMaxBatch, oldest first, and stops at the first
// batch to be retried (it stays pending).
func (s *eventSender) sendPending(ctx context.Context) sendOutcome {
	for len(s.pending) > 0 {
		n := len(s.pending)
		if n > eventsMaxBatch {
			n = eventsMaxBatch
		}
		if s.post(ctx, s.pending[:n]) == sendRetry {
			return sendRetry
		}
		s.pending = s.pending[n:]
	}
	s.pending = nil
	return sendDone
}

// post sends one batch.
func (s *eventSender) post(ctx context.Context, batch []event) sendOutcome {
	c := s.client
	wire := make([]wireEvent, len(batch))
	for i := range batch {
		wire[i] = batch[i].wire()
	}
	body, _ := json.Marshal(map[string]any{"events": wire})
	ctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/events", bytes.NewReader(body))
	if err != nil {
		s.rejected.Add(int64(len(batch)))
		return sendDone
	}
	req.Header.Set("Authorization", "Bearer "+c.opts.SDKKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return sendRetry
	}
	answer, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		s.sent.Add(int64(len(batch)))
		return sendDone
	case res.StatusCode == 408 || res.StatusCode == 429 || res.StatusCode >= 500:
		return sendRetry
	default:
		// A refused batch would be refused again: nothing of it was counted, and it is not sent again.
		c.logger.Printf("POST /v1/events answered %d: %d events dropped: %s", res.StatusCode, len(batch), bytes.TrimSpace(answer))
		s.rejected.Add(int64(len(batch)))
		return sendDone
	}
}

// nextWindow is when the current window ends: after ExposureFlushInterval, or at the next UTC hour.
func (s *eventSender) nextWindow(now time.Time) time.Time {
	next := now.Add(s.client.opts.ExposureFlushInterval)
	if hour := now.UTC().Truncate(time.Hour).Add(time.Hour); hour.Before(next) {
		next = hour
	}
	return next
}

// loop sends a batch as soon as one is full, everything at the end of each window, and retries failed
// requests with backoff, until the client closes.
func (s *eventSender) loop() {
	c := s.client
	defer c.wg.Done()
	windowEnd := s.nextWindow(time.Now())
	var retryAt time.Time
	failures := 0
	for {
		wake := s.wake
		due := windowEnd
		if failures > 0 {
			wake = nil // a full batch waits for the retry; meanwhile the queue keeps the newest events
			if retryAt.Before(due) {
				due = retryAt
			}
		}
		t := time.NewTimer(time.Until(due))
		select {
		case <-c.ctx.Done():
			t.Stop()
			return
		case <-wake:
			t.Stop()
		case <-t.C:
		}
		now := time.Now()
		newWindow := !now.Before(windowEnd)
		if newWindow {
			windowEnd = s.nextWindow(now)
		}
		s.drain(now, newWindow)
		// Not c.ctx: a request cut by Close may have been taken already, and Close would send it again.
		if s.sendPending(context.Background()) == sendRetry {
			failures++
			if failures == 1 {
				c.logger.Printf("POST /v1/events failed; %d events wait for a retry", len(s.pending))
			}
			retryAt = now.Add(backoff(failures, c.opts.RetryInitial, c.opts.RetryMax))
		} else {
			failures = 0
		}
	}
}

// flush sends what is queued (Close): within ctx, and at most eventsCloseAttempts tries a quarter of a second
// apart at most, so that closing does not wait long for a server that is away; what it cannot send is dropped.
func (s *eventSender) flush(ctx context.Context) {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.drain(time.Now(), true)
	c := s.client
	delay := c.opts.RetryInitial
	if delay > eventsCloseRetryDelay {
		delay = eventsCloseRetryDelay
	}
	for attempt := 1; len(s.pending) > 0 && s.sendPending(ctx) == sendRetry && attempt < eventsCloseAttempts; attempt++ {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			attempt = eventsCloseAttempts
		case <-t.C:
		}
	}
	if len(s.pending) > 0 {
		c.logger.Printf("closing: %d events could not be sent", len(s.pending))
		s.dropped.Add(int64(len(s.pending)))
		s.pending = nil
	}
}

func (s *eventSender) stats() EventStats {
	return EventStats{Sent: s.sent.Load(), Dropped: s.dropped.Load(), Rejected: s.rejected.Load()}
}

// Track records that the user of ctx did something (name: 1 to 128 letters, digits, '.', '_', ':' or '-',
// starting with a letter or digit), with an optional value (the first of value; from -1e9 to 1e9) that the
// stats add up per name. It is sent with POST /v1/events in the next batch; a name or value the server would
// refuse is dropped here with a warning, so that it cannot cost the rest of its batch. Without a server
// (Offline) it does nothing.
func (c *Client) Track(name string, ctx Context, value ...float64) {
	s := c.events
	if s == nil {
		return
	}
	if !trackName.MatchString(name) {
		c.logger.Printf("Track: %q is not an event name (1 to 128 letters, digits, '.', '_', ':' or '-'): dropped", name)
		s.dropped.Add(1)
		return
	}
	e := event{kind: kindTrack, key: name, userID: ctx.UserID, at: time.Now().UnixMilli()}
	if len(value) > 0 {
		v := value[0]
		if math.IsNaN(v) || math.Abs(v) > eventsMaxTrackValue {
			c.logger.Printf("Track(%s): the value %v is not a number from -1e9 to 1e9: dropped", name, v)
			s.dropped.Add(1)
			return
		}
		e.value, e.hasValue = v, true
	}
	s.track(e)
}

// EventStats are the client's event counts: sent, dropped, rejected (zero without a server).
func (c *Client) EventStats() EventStats {
	if c.events == nil {
		return EventStats{}
	}
	return c.events.stats()
}
