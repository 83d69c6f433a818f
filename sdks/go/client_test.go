package flagops

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func quietLogger() *log.Logger { return log.New(io.Discard, "", 0) }

func startClient(t *testing.T, f *fakeServer, tweak func(*Options)) *Client {
	t.Helper()
	opts := Options{URL: f.srv.URL, SDKKey: f.key, Logger: quietLogger(), RetryInitial: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond}
	if tweak != nil {
		tweak(&opts)
	}
	c, err := NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	return c
}

var user = Context{UserID: "u-42"}

func TestPollingWithIfNoneMatchAndGzip(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	f.deltas = false // plain full snapshots
	c := startClient(t, f, func(o *Options) { o.DisableStream = true; o.PollInterval = 20 * time.Millisecond })
	if !c.Bool("checkout-v2", false, user) || c.Status() != StatusReady {
		t.Fatalf("first snapshot not served: %v", c.Evaluate("checkout-v2", user))
	}
	// The transport asked for gzip and decompressed the answer; later polls name the held version.
	first := f.snapshotRequests()[0]
	if !strings.Contains(first.Header.Get("Accept-Encoding"), "gzip") {
		t.Errorf("no Accept-Encoding: gzip on the snapshot request")
	}
	eventually(t, "a conditional poll", func() bool { return len(f.snapshotRequests()) >= 3 })
	if got := f.snapshotRequests()[2].Header.Get("If-None-Match"); got != `"v1"` {
		t.Errorf("If-None-Match = %q, want \"v1\"", got)
	}
	f.set(map[string]string{"checkout-v2": flagKilled})
	eventually(t, "the kill is served", func() bool { return !c.Bool("checkout-v2", true, user) })
	if r := c.Evaluate("checkout-v2", user); r.Reason != ReasonKilled || r.Variation != "off" {
		t.Errorf("after the kill: %+v", r)
	}
}

func TestStreamPatchAppliedWithoutFetching(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn, "banner-text": bannerSale})
	var changes sync.Map
	c := startClient(t, f, func(o *Options) {
		o.PollInterval = time.Hour
		o.OnChange = func(e ChangeEvent) { changes.Store(e.Version, strings.Join(e.Keys, ",")) }
	})
	eventually(t, "the stream is open", func() bool { return f.openStreams() == 1 && c.streamUp.Load() })
	before := len(f.snapshotRequests())
	version := f.set(map[string]string{"checkout-v2": flagKilled})
	eventually(t, "the patch is served", func() bool { v, _ := c.Version(); return v == version })
	if c.Bool("checkout-v2", true, user) {
		t.Fatal("the kill in the patch is not served")
	}
	if c.String("banner-text", "", user) != "Spring sale" {
		t.Fatal("a flag the patch did not name was lost")
	}
	if after := len(f.snapshotRequests()); after != before {
		t.Errorf("a patch following the held version caused %d snapshot requests", after-before)
	}
	if keys, _ := changes.Load(version); keys != "checkout-v2" {
		t.Errorf("change event keys = %v, want checkout-v2", keys)
	}
}

func TestStreamWithoutPatchFetchesDelta(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn, "banner-text": bannerSale})
	f.patches = false
	c := startClient(t, f, func(o *Options) { o.PollInterval = time.Hour })
	eventually(t, "the stream is open", func() bool { return c.streamUp.Load() })
	before := len(f.snapshotRequests())
	version := f.set(map[string]string{"checkout-v2": flagKilled, "banner-text": ""})
	eventually(t, "the delta is served", func() bool { v, _ := c.Version(); return v == version })
	if q := f.snapshotRequests()[before].URL.Query().Get("since"); q != "1" {
		t.Errorf("the fetch after an announcement asked since=%q, want 1", q)
	}
	if r := c.Evaluate("checkout-v2", user); r.Reason != ReasonKilled {
		t.Errorf("checkout-v2 after the delta: %+v", r)
	}
	if r := c.Evaluate("banner-text", user); r.Reason != ReasonFlagNotFound {
		t.Errorf("a flag the delta removed is still served: %+v", r)
	}
}

func TestFullSnapshotWhenServerHasNoDelta(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	f.patches, f.deltas = false, false // a server without deltas answers ?since= with the full snapshot
	c := startClient(t, f, func(o *Options) { o.PollInterval = time.Hour })
	eventually(t, "the stream is open", func() bool { return c.streamUp.Load() })
	version := f.set(map[string]string{"new-flag": bannerSale})
	eventually(t, "the new version is served", func() bool { v, _ := c.Version(); return v == version })
	if c.String("new-flag", "", user) != "Spring sale" || !c.Bool("checkout-v2", false, user) {
		t.Fatalf("the full snapshot was not taken: %v", c.Keys())
	}
}

func TestLastGoodSnapshotThroughErrorsAndRestarts(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	c := startClient(t, f, func(o *Options) { o.PollInterval = 20 * time.Millisecond })
	eventually(t, "the stream is open", func() bool { return c.streamUp.Load() })
	// The server restarts: its streams end and it answers 503 for a while.
	f.setFailing(503)
	f.endStreams()
	eventually(t, "the client notices", func() bool { return c.Status() == StatusStale })
	if !c.Bool("checkout-v2", false, user) {
		t.Fatal("the last good snapshot is not served while the server fails")
	}
	f.setFailing(0)
	eventually(t, "the client recovers", func() bool { return c.Status() == StatusReady && f.openStreams() == 1 })
	version := f.set(map[string]string{"checkout-v2": flagKilled})
	eventually(t, "a change after the restart arrives", func() bool { v, _ := c.Version(); return v == version })
	if c.Bool("checkout-v2", true, user) {
		t.Fatal("the kill after the restart is not served")
	}
	// The reconnected stream named the held version, so a server that knows it can send a patch at once.
	f.mu.Lock()
	last := f.streamReq[len(f.streamReq)-1]
	f.mu.Unlock()
	if last.URL.Query().Get("since") != "1" {
		t.Errorf("the reconnected stream asked since=%q, want 1", last.URL.Query().Get("since"))
	}
}

func TestRestartOnTheSamePortFoundWithinASecond(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	// A first retry of 5 to 10 s: a client backing off while nothing listens would still be waiting after the restart.
	slowBackoff := func(o *Options) { o.RetryInitial = 10 * time.Second; o.RetryMax = 20 * time.Second }
	c := startClient(t, f, slowBackoff)
	eventually(t, "the stream is open", func() bool { return f.openStreams() == 1 })
	f.stop()
	eventually(t, "the client notices", func() bool { return c.Status() == StatusStale })
	opts := Options{URL: f.srv.URL, SDKKey: f.key, Logger: quietLogger()}
	slowBackoff(&opts)
	started, err := NewClient(opts) // an application started while the server is down
	if err != nil {
		t.Fatal(err)
	}
	defer started.Close(context.Background())
	time.Sleep(2500 * time.Millisecond) // the outage: every reconnection is refused meanwhile

	f.startAgain()
	back := time.Now()
	f.set(map[string]string{"checkout-v2": flagKilled})
	within := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		for !cond() {
			if time.Since(back) > d {
				t.Fatalf("%s: not within %s of the restart", what, d)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	within("the kill made at once is served", 1500*time.Millisecond, func() bool { return !c.Bool("checkout-v2", true, user) })
	within("the client started meanwhile is ready", 1500*time.Millisecond, func() bool {
		return started.Status() == StatusReady && !started.Bool("checkout-v2", true, user)
	})
	within("both streams are open again", 2*time.Second, func() bool { return f.openStreams() == 2 })
}

func TestStreamIdleTimeoutReconnects(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	c := startClient(t, f, func(o *Options) { o.PollInterval = time.Hour; o.StreamIdleTimeout = 100 * time.Millisecond })
	eventually(t, "a second stream after the first went silent", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.streamReq) >= 2
	})
	_ = c
}

func TestRefusedKey(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	c, err := NewClient(Options{URL: f.srv.URL, SDKKey: "svc_sdk_wrong", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); !errors.Is(err, ErrRefused) {
		t.Fatalf("WaitReady = %v, want ErrRefused", err)
	}
	if c.Status() != StatusError {
		t.Errorf("status %v, want error", c.Status())
	}
	if v, r := c.BoolDetails("checkout-v2", true, user); !v || r.ErrorCode != ErrorProviderNotReady {
		t.Errorf("before any snapshot: %v %+v", v, r)
	}
}

func TestKeyRefusedWhileServingIsError(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	c := startClient(t, f, func(o *Options) { o.PollInterval = 20 * time.Millisecond })
	// The key is revoked: every request is refused from now on, which will not fix itself.
	f.setFailing(401)
	f.endStreams()
	eventually(t, "the client reports the refusal", func() bool { return c.Status() == StatusError })
	if !c.Bool("checkout-v2", false, user) {
		t.Fatal("the last good snapshot is not served after the key was refused")
	}
	f.setFailing(0)
	eventually(t, "the client recovers once the key is taken again", func() bool { return c.Status() == StatusReady })
}

func TestCloseEndsEverythingPromptly(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	c := startClient(t, f, nil)
	eventually(t, "the stream is open", func() bool { return f.openStreams() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	eventually(t, "the server sees the stream closed", func() bool { return f.openStreams() == 0 })
	if !c.Bool("checkout-v2", false, user) {
		t.Error("a closed client stopped answering from its last snapshot")
	}
	if err := c.Close(ctx); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

func TestTypedAccessors(t *testing.T) {
	c := newOfflineClient(t, `{"version":3,"environment":"prod","flags":{
		"b":{"enabled":true,"rolloutPct":100,"valueOn":true,"valueOff":false,"rules":[],"killed":false,"archived":false,"defaultValue":false},
		"s":{"enabled":true,"rolloutPct":100,"valueOn":"x","valueOff":"y","rules":[],"killed":false,"archived":false,"defaultValue":"y"},
		"n":{"enabled":true,"rolloutPct":100,"valueOn":2.5,"valueOff":0,"rules":[],"killed":false,"archived":false,"defaultValue":0},
		"j":{"enabled":true,"rolloutPct":100,"valueOn":{"a":[1]},"valueOff":null,"rules":[],"killed":false,"archived":false,"defaultValue":null},
		"gone":{"enabled":true,"rolloutPct":100,"valueOn":true,"valueOff":false,"rules":[],"killed":false,"archived":true,"defaultValue":null}}}`)
	if !c.Bool("b", false, user) || c.String("s", "", user) != "x" || c.Number("n", 0, user) != 2.5 {
		t.Fatal("typed accessors do not return the flags' values")
	}
	if j, ok := c.JSON("j", nil, user).(map[string]any); !ok || len(j["a"].([]any)) != 1 {
		t.Fatalf("JSON: %v", c.JSON("j", nil, user))
	}
	if v, r := c.StringDetails("b", "def", user); v != "def" || r.Reason != ReasonError || r.ErrorCode != ErrorTypeMismatch {
		t.Errorf("a string asked of a boolean flag: %v %+v", v, r)
	}
	if v, r := c.NumberDetails("missing", 7, user); v != 7 || r.ErrorCode != ErrorFlagNotFound {
		t.Errorf("an unknown flag: %v %+v", v, r)
	}
	if v, r := c.BoolDetails("gone", true, user); !v || r.Reason != ReasonArchived || r.ErrorCode != "" {
		t.Errorf("an archived flag without defaultValue gives the caller's default: %v %+v", v, r)
	}
	if r := c.Evaluate("missing", user); r.Reason != ReasonFlagNotFound || r.Value != nil {
		t.Errorf("Evaluate of an unknown flag: %+v", r)
	}
}

// Evaluations from many goroutines while snapshots are swapped: run with -race.
func TestConcurrentEvaluationDuringUpdates(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	c := startClient(t, f, func(o *Options) { o.PollInterval = time.Hour })
	eventually(t, "the stream is open", func() bool { return c.streamUp.Load() })
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				r := c.Evaluate("checkout-v2", user)
				if r.Reason != ReasonDefault && r.Reason != ReasonKilled {
					t.Errorf("unexpected result %+v", r)
					return
				}
			}
		}()
	}
	var last int64
	for i := 0; i < 20; i++ {
		if i%2 == 0 {
			last = f.set(map[string]string{"checkout-v2": flagKilled})
		} else {
			last = f.set(map[string]string{"checkout-v2": flagOn})
		}
	}
	eventually(t, "the last version is served", func() bool { v, _ := c.Version(); return v == last })
	stop.Store(true)
	wg.Wait()
	if !c.Bool("checkout-v2", false, user) {
		t.Error("the last version (on) is not what is served")
	}
}

func TestWaitReadyAfterCloseWithoutSnapshot(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	f.setFailing(503)
	c, err := NewClient(Options{URL: f.srv.URL, SDKKey: f.key, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- c.WaitReady(context.Background()) }()
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("WaitReady = %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitReady still waits after Close")
	}
}

func TestEvaluationCountsReportedOnClose(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn, "banner-text": bannerSale})
	c := startClient(t, f, func(o *Options) { o.CountsInterval = time.Hour })
	for i := 0; i < 5; i++ {
		c.Bool("checkout-v2", false, user)
	}
	c.Evaluate("banner-text", user)
	c.Bool("banner-text", false, user) // a type mismatch: the caller got its default, not counted
	c.Bool("no-such-flag", false, user)
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := f.countsTaken()
	if got["checkout-v2/on"] != 5 || got["banner-text/on"] != 1 || len(got) != 2 {
		t.Errorf("counts reported: %v", got)
	}
}

func TestEvaluationCountsOfABusyFlagAllReported(t *testing.T) {
	// More evaluations in one interval than the pending bound's 100,000: that bound is on cells, not counts.
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	c := startClient(t, f, func(o *Options) { o.CountsInterval = time.Hour })
	for i := 0; i < 150_000; i++ {
		c.Bool("checkout-v2", false, user)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.countsTaken(); got["checkout-v2/on"] != 150_000 {
		t.Errorf("counts reported: %v", got)
	}
}

func TestEvaluationCountsKeptThroughFailedReports(t *testing.T) {
	f := newFakeServer(t, map[string]string{"checkout-v2": flagOn})
	f.countFail = []int{503, 503}
	c := startClient(t, f, func(o *Options) { o.CountsInterval = 20 * time.Millisecond })
	for i := 0; i < 7; i++ {
		c.Bool("checkout-v2", false, user)
	}
	// A snapshot replacing the flag between evaluations: counts on the old compiled flag still arrive.
	version := f.set(map[string]string{"checkout-v2": flagKilled})
	eventually(t, "the kill is served", func() bool { v, _ := c.Version(); return v == version })
	c.Bool("checkout-v2", true, user)
	eventually(t, "the counts arrive after two failed reports", func() bool {
		got := f.countsTaken()
		return got["checkout-v2/on"] == 7 && got["checkout-v2/off"] == 1
	})
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.countsTaken(); got["checkout-v2/on"] != 7 || got["checkout-v2/off"] != 1 {
		t.Errorf("counts sent twice: %v", got)
	}
}

func TestOptionsChecked(t *testing.T) {
	if _, err := NewClient(Options{URL: "127.0.0.1:4001", SDKKey: "k"}); err == nil {
		t.Error("a URL without a scheme was accepted")
	}
	if _, err := NewClient(Options{URL: "http://127.0.0.1:4001"}); err == nil {
		t.Error("a missing key was accepted")
	}
	if _, err := NewClient(Options{Offline: true, Bootstrap: []byte(`{"flags":{}}`)}); err == nil {
		t.Error("a bootstrap without a version was accepted")
	}
}

func TestLostConnectionRetriedWithinASecondAndRetryAfterFollowed(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/v1/snapshot", Err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	for i := 0; i < 20; i++ {
		if d := retryDelay(refused, 0, time.Second, 10*time.Second); d < 500*time.Millisecond || d > time.Second {
			t.Fatalf("a refused connection waits %s, want 0.5–1 s", d)
		}
		if d := retryDelay(&HTTPError{Status: 500}, 3, time.Second, 10*time.Second); d < 2*time.Second || d > 4*time.Second {
			t.Fatalf("a third 500 waits %s, want 2–4 s", d)
		}
	}
	if d := retryDelay(&HTTPError{Status: 503, RetryAfter: time.Second}, 6, time.Second, 10*time.Second); d != time.Second {
		t.Errorf("a 503 with Retry-After: 1 waits %s", d)
	}
	if d := retryDelay(&HTTPError{Status: 429, RetryAfter: time.Minute}, 1, time.Second, 10*time.Second); d != 10*time.Second {
		t.Errorf("a 429 with Retry-After: 60 waits %s, want RetryMax", d)
	}
}
