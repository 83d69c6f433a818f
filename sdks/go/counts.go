package flagops

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Evaluation counts: the server never sees local evaluations, so the client counts them per flag and
// variation and reports them (POST /v1/counts) for the flag stats. Counting is one atomic increment on a
// counter the compiled flag carries; the reporter drains every compiled flag's counters each interval.

const (
	countsMaxEntries  = 1000      // entries per report
	countsMaxPerEntry = 1_000_000 // count per entry
	countsMaxReports  = 100       // reports per interval; the rest waits
	countsMaxPending  = 100_000   // cells kept through failed reports; the oldest hours go first
)

// flagCounts are one compiled flag's counters: on, off, default, then one per variant.
type flagCounts []atomic.Int64

func newFlagCounts(f *compiledFlag) flagCounts { return make(flagCounts, 3+len(f.variants)) }

// variationIndex is variation's counter index in f (on, off, default, then the variants), or -1.
func (f *compiledFlag) variationIndex(variation string) int {
	switch variation {
	case "on":
		return 0
	case "off":
		return 1
	case "default":
		return 2
	}
	for j := range f.variants {
		if f.variants[j].name == variation {
			return 3 + j
		}
	}
	return -1
}

func (f *compiledFlag) variationAt(i int) string {
	switch i {
	case 0:
		return "on"
	case 1:
		return "off"
	case 2:
		return "default"
	}
	return f.variants[i-3].name
}

type countCell struct {
	flag, variation string
	hour            int64 // unix ms of the UTC hour's start
}

// countReporter drains the counters of every compiled flag the client served and sends them.
type countReporter struct {
	client   *Client
	mu       sync.Mutex
	retired  []*compiledFlag // replaced by a newer snapshot, drained once more
	pending  map[countCell]int64
	lastHour int64 // the hour counts drained now are filed under: that of the previous drain
}

func hourOf(t time.Time) int64 { return t.UTC().Truncate(time.Hour).UnixMilli() }

func newCountReporter(c *Client) *countReporter {
	return &countReporter{client: c, pending: map[countCell]int64{}, lastHour: hourOf(time.Now())}
}

// retire keeps the flags a new snapshot replaced until their counters are drained.
func (r *countReporter) retire(prev, next *environment) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, f := range prev.flags {
		if next.flags[key] != f {
			r.retired = append(r.retired, f)
		}
	}
}

// drain moves every counter into pending, filed under the hour of the previous drain (the reporter drains
// at each hour's start, so that hour is the one the evaluations happened in).
func (r *countReporter) drain(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	hour := r.lastHour
	r.lastHour = hourOf(now)
	take := func(f *compiledFlag) {
		for i := range f.counts {
			if n := f.counts[i].Swap(0); n > 0 {
				r.pending[countCell{f.key, f.variationAt(i), hour}] += n
			}
		}
	}
	if env := r.client.current.Load(); env != nil {
		for _, f := range env.flags {
			take(f)
		}
	}
	for _, f := range r.retired {
		take(f)
	}
	r.retired = nil
	r.trim()
}

// trim drops the oldest hours' counts beyond countsMaxPending cells (flag, variation and hour), which bounds
// memory while the server cannot be reached. It bounds cells, not counts: a busy flag's one cell may hold
// millions of evaluations.
func (r *countReporter) trim() {
	if len(r.pending) <= countsMaxPending {
		return
	}
	cells := make([]countCell, 0, len(r.pending))
	for cell := range r.pending {
		cells = append(cells, cell)
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].hour < cells[j].hour })
	for _, cell := range cells[:len(cells)-countsMaxPending] {
		delete(r.pending, cell)
	}
}

type countEntry struct {
	FlagKey   string `json:"flagKey"`
	Variation string `json:"variation"`
	Hour      string `json:"hour"`
	Count     int64  `json:"count"`
}

// send posts what is pending, in reports of at most 1000 entries of at most 1,000,000 each. What the
// server took or refused (4xx) is done with; what could not be sent stays for the next time.
func (r *countReporter) send(ctx context.Context) {
	for reports := 0; reports < countsMaxReports; reports++ {
		r.mu.Lock()
		var entries []countEntry
		taken := map[countCell]int64{}
		for cell, n := range r.pending {
			if len(entries) == countsMaxEntries {
				break
			}
			if n > countsMaxPerEntry {
				n = countsMaxPerEntry
			}
			taken[cell] = n
			entries = append(entries, countEntry{cell.flag, cell.variation, time.UnixMilli(cell.hour).UTC().Format("2006-01-02T15:04:05.000Z"), n})
		}
		for cell, n := range taken {
			if r.pending[cell] -= n; r.pending[cell] <= 0 {
				delete(r.pending, cell)
			}
		}
		r.mu.Unlock()
		if len(entries) == 0 {
			return
		}
		if !r.post(ctx, entries) {
			r.mu.Lock()
			for cell, n := range taken {
				r.pending[cell] += n
			}
			r.trim()
			r.mu.Unlock()
			return
		}
	}
}

// post sends one report; false when it should be sent again later (network, 5xx).
func (r *countReporter) post(ctx context.Context, entries []countEntry) bool {
	body, _ := json.Marshal(map[string]any{"counts": entries})
	ctx, cancel := context.WithTimeout(ctx, r.client.opts.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.client.base+"/v1/counts", bytes.NewReader(body))
	if err != nil {
		return true
	}
	req.Header.Set("Authorization", "Bearer "+r.client.opts.SDKKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := r.client.http.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	if res.StatusCode >= 400 && res.StatusCode < 500 {
		r.client.logger.Printf("POST /v1/counts answered %d: %d counts dropped", res.StatusCode, len(entries))
		return true
	}
	return res.StatusCode < 300
}

// loop reports every CountsInterval and at each hour's start, until the client closes; then once more.
func (r *countReporter) loop() {
	c := r.client
	defer c.wg.Done()
	for {
		now := time.Now()
		delay := c.opts.CountsInterval
		if untilHour := time.Unix(0, hourOf(now)*int64(time.Millisecond)).Add(time.Hour).Sub(now); untilHour < delay {
			delay = untilHour + time.Millisecond
		}
		t := time.NewTimer(delay)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		r.drain(time.Now())
		// Not c.ctx: a report cut by Close may have been taken already, and Close would send it again.
		r.send(context.Background())
	}
}

// flush drains and sends what is left, within ctx (Close).
func (r *countReporter) flush(ctx context.Context) {
	r.drain(time.Now())
	r.send(ctx)
}
