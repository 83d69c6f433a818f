package flagops

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"
)

const flagVariants = `{"enabled":true,"rolloutPct":100,"valueOn":"a","valueOff":"off","rules":[],"killed":false,"archived":false,
"defaultValue":null,"variants":[{"name":"blue","value":"b","weight":50},{"name":"green","value":"g","weight":50}]}`

func closeNow(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// exposures is "flag/variation/user" of each exposure, sorted.
func exposures(events []sentEvent) []string {
	var out []string
	for _, e := range events {
		if e.Type == "exposure" {
			user := "-"
			if e.UserID != nil {
				user = *e.UserID
			}
			out = append(out, e.FlagKey+"/"+e.Variation+"/"+user)
		}
	}
	sort.Strings(out)
	return out
}

func TestExposuresAreOffByDefault(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	c := startClient(t, f, nil)
	c.Bool("checkout-v2", false, user)
	closeNow(t, c)
	if events, _ := f.eventsTaken(); len(events) != 0 {
		t.Errorf("events sent without SendExposures: %+v", events)
	}
}

func TestExposuresOncePerUserFlagAndVariationInAWindowAndTrackEvents(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn, "banner-text": bannerSale, "theme": flagVariants})
	c := startClient(t, f, func(o *Options) { o.SendExposures, o.ExposureFlushInterval = true, time.Hour })
	before := time.Now().Add(-time.Second)
	for i := 0; i < 5; i++ {
		for _, id := range []string{"u-1", "u-2"} {
			c.Bool("checkout-v2", false, Context{UserID: id})
			c.Evaluate("theme", Context{UserID: id})
		}
		c.String("banner-text", "x", Context{}) // no user: one exposure without userId
	}
	c.Bool("banner-text", false, user) // a type mismatch: the caller's default, no exposure
	c.Bool("no-such-flag", false, user)
	c.Track("checkout.completed", Context{UserID: "u-1"}, 12.5)
	c.Track("signup", Context{})
	c.Track("bad name!", user) // refused here rather than costing the batch its 400
	closeNow(t, c)

	events, batches := f.eventsTaken()
	if batches != 1 {
		t.Errorf("%d batches, want 1 (on Close)", batches)
	}
	theme := map[string]string{}
	for _, id := range []string{"u-1", "u-2"} {
		theme[id] = c.Evaluate("theme", Context{UserID: id}).Variation
	}
	want := []string{"banner-text/on/-", "checkout-v2/on/u-1", "checkout-v2/on/u-2", "theme/" + theme["u-1"] + "/u-1", "theme/" + theme["u-2"] + "/u-2"}
	sort.Strings(want)
	if got := exposures(events); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("exposures %v, want %v", got, want)
	}
	var tracks []string
	for _, e := range events {
		at, err := time.Parse(time.RFC3339, e.At)
		if err != nil || at.Before(before) || at.After(time.Now()) {
			t.Errorf("event at %q", e.At)
		}
		if e.Type == "track" {
			s := e.Name
			if e.UserID != nil {
				s += " " + *e.UserID
			}
			if e.Value != nil {
				s += fmt.Sprintf(" %v", *e.Value)
			}
			tracks = append(tracks, s)
		}
	}
	if fmt.Sprint(tracks) != "[checkout.completed u-1 12.5 signup]" {
		t.Errorf("track events %q", tracks)
	}
	if s := c.EventStats(); s.Sent != 7 || s.Dropped != 1 || s.Rejected != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestExposuresSentAtTheEndOfEachWindow(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	c := startClient(t, f, func(o *Options) { o.SendExposures, o.ExposureFlushInterval = true, 30*time.Millisecond })
	c.Bool("checkout-v2", false, user)
	c.Bool("checkout-v2", false, user)
	eventually(t, "the window's exposure arrives without Close", func() bool { e, _ := f.eventsTaken(); return len(e) == 1 })
	c.Bool("checkout-v2", false, user) // a new window: the same user is exposed again
	eventually(t, "the next window's exposure", func() bool { e, _ := f.eventsTaken(); return len(e) == 2 })
}

func TestAFullBatchIsSentAtOnceAndNoBatchHoldsMoreThan1000(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	c := startClient(t, f, func(o *Options) { o.SendExposures, o.ExposureFlushInterval = true, time.Hour })
	for i := 0; i < 2500; i++ {
		c.Bool("checkout-v2", false, Context{UserID: fmt.Sprintf("u-%d", i)})
	}
	eventually(t, "full batches sent before the window ends", func() bool { e, _ := f.eventsTaken(); return len(e) >= 1000 })
	closeNow(t, c)
	events, _ := f.eventsTaken()
	if len(events) != 2500 {
		t.Errorf("%d exposures, want 2500", len(events))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, batch := range f.events {
		if len(batch) > 1000 {
			t.Errorf("a batch of %d", len(batch))
		}
	}
}

func TestRetriedAfter5xxButNotAfter400(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	f.eventFail = []int{503, 500}
	c := startClient(t, f, func(o *Options) { o.SendExposures, o.ExposureFlushInterval = true, 20*time.Millisecond })
	c.Bool("checkout-v2", false, Context{UserID: "u-1"})
	c.Track("clicked", Context{UserID: "u-1"})
	eventually(t, "the events arrive after two failures", func() bool { e, _ := f.eventsTaken(); return len(e) == 2 })

	f.mu.Lock()
	f.eventFail = []int{400}
	f.mu.Unlock()
	c.Track("clicked", Context{UserID: "u-2"})
	eventually(t, "the refused batch is counted", func() bool { return c.EventStats().Rejected == 1 })
	f.mu.Lock()
	requests := f.eventReqs
	f.mu.Unlock()
	c.Track("clicked", Context{UserID: "u-3"}) // the next window's batch: the refused event is not in it
	eventually(t, "the next event arrives", func() bool { e, _ := f.eventsTaken(); return len(e) == 3 })
	closeNow(t, c)
	events, _ := f.eventsTaken()
	if last := events[len(events)-1]; *last.UserID != "u-3" {
		t.Errorf("after the 400: %+v", last)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.eventReqs != requests+1 {
		t.Errorf("%d requests after the 400, want 1", f.eventReqs-requests)
	}
	if s := c.EventStats(); s.Sent != 3 || s.Rejected != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestAFullQueueDropsTheOldestAndCountsThem(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	f.eventFail = []int{503} // the first request fails; the retry waits for Close
	c := startClient(t, f, func(o *Options) {
		o.SendExposures, o.ExposureFlushInterval, o.EventQueueSize = true, time.Hour, 100
		o.RetryInitial, o.RetryMax = time.Hour, time.Hour
	})
	for i := 0; i < 250; i++ {
		c.Bool("checkout-v2", false, Context{UserID: fmt.Sprintf("u-%03d", i)})
	}
	closeNow(t, c)
	events, _ := f.eventsTaken()
	got := exposures(events)
	if len(got) != 100 || got[0] != "checkout-v2/on/u-150" || got[99] != "checkout-v2/on/u-249" {
		t.Errorf("sent %d exposures, from %v to %v; want the newest 100", len(got), got[:1], got[len(got)-1:])
	}
	if s := c.EventStats(); s.Sent != 100 || s.Dropped != 150 {
		t.Errorf("stats %+v", s)
	}
}

func TestExposuresOfAFlagNoLongerServedAreNotSent(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn, "old-flag": flagOn})
	c := startClient(t, f, func(o *Options) { o.SendExposures, o.ExposureFlushInterval = true, time.Hour })
	c.Bool("checkout-v2", false, user)
	c.Bool("old-flag", false, user)
	version := f.set(map[string]string{"old-flag": ""})
	eventually(t, "the flag is removed", func() bool { v, _ := c.Version(); return v == version })
	closeNow(t, c)
	events, _ := f.eventsTaken()
	if got := exposures(events); fmt.Sprint(got) != "[checkout-v2/on/u-42]" {
		t.Errorf("exposures %v: the server would refuse the batch for the removed flag", got)
	}
}

func TestCloseGivesUpOnAServerThatIsAway(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	f.eventFail = []int{503, 503, 503, 503}
	c := startClient(t, f, func(o *Options) {
		o.SendExposures, o.ExposureFlushInterval = true, time.Hour
		o.RetryInitial, o.RetryMax = time.Hour, time.Hour
	})
	c.Bool("checkout-v2", false, user)
	closeNow(t, c) // fails the test when Close waits out its 5 s deadline
	if s := c.EventStats(); s.Sent != 0 || s.Dropped != 1 {
		t.Errorf("stats %+v", s)
	}
	c.Bool("checkout-v2", false, Context{UserID: "after-close"}) // still answers; nothing queued
}
