package flagops

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer speaks the evaluation API's snapshot wire format: GET /v1/snapshot with ETag "v<version>",
// If-None-Match and 304, gzip when asked, ?since= deltas for versions it remembers, and GET /v1/stream
// version events with since and a patch.
type fakeServer struct {
	t   *testing.T
	srv *httptest.Server
	key string

	mu        sync.Mutex
	version   int64
	flags     map[string]json.RawMessage
	history   map[int64]map[string]json.RawMessage // flags of each version, for deltas
	failWith  int                                  // answer every snapshot request with this status
	deltas    bool                                 // answer ?since= with deltas
	patches   bool                                 // put patches in stream events
	streams   map[chan string]bool
	requests  []*http.Request // snapshot requests, in order
	streamReq []*http.Request
	counts    map[string]int64 // "flag/variation" → count taken by POST /v1/counts
	countFail []int            // statuses to answer the next count reports with
	events    [][]sentEvent    // the batches POST /v1/events took, in order
	eventReqs int              // POST /v1/events requests, answered or failed
	eventFail []int            // statuses to answer the next event requests with
}

// sentEvent is one event of a POST /v1/events body, as the server's schema reads it.
type sentEvent struct {
	Type      string   `json:"type"`
	FlagKey   string   `json:"flagKey"`
	Variation string   `json:"variation"`
	Name      string   `json:"name"`
	UserID    *string  `json:"userId"`
	Value     *float64 `json:"value"`
	At        string   `json:"at"`
}

func newFakeServer(t *testing.T, flags map[string]string) *fakeServer {
	f := &fakeServer{t: t, key: "svc_sdk_test", version: 1, flags: map[string]json.RawMessage{},
		history: map[int64]map[string]json.RawMessage{}, deltas: true, patches: true, streams: map[chan string]bool{}}
	for k, v := range flags {
		f.flags[k] = json.RawMessage(v)
	}
	f.history[1] = copyFlags(f.flags)
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.close)
	return f
}

func copyFlags(m map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (f *fakeServer) close() {
	f.mu.Lock()
	for ch := range f.streams {
		close(ch)
		delete(f.streams, ch)
	}
	f.mu.Unlock()
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// stop stops the server as a restart does: its streams end and nothing listens on its port any more.
func (f *fakeServer) stop() { f.close() }

// startAgain serves again on the port stop freed, with the flags it had.
func (f *fakeServer) startAgain() {
	listener, err := net.Listen("tcp", f.srv.Listener.Addr().String())
	if err != nil {
		f.t.Fatalf("listening again on %s: %v", f.srv.Listener.Addr(), err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	srv.Listener.Close()
	srv.Listener = listener
	srv.Start()
	f.srv = srv
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+f.key {
		w.WriteHeader(401)
		_, _ = w.Write([]byte(`{"error":{"code":"unauthorized","message":"bad key"}}`))
		return
	}
	switch r.URL.Path {
	case "/v1/snapshot":
		f.snapshot(w, r)
	case "/v1/stream":
		f.stream(w, r)
	case "/v1/counts":
		f.takeCounts(w, r)
	case "/v1/events":
		f.takeEvents(w, r)
	default:
		w.WriteHeader(404)
	}
}

func (f *fakeServer) snapshot(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r)
	if f.failWith != 0 {
		status := f.failWith
		f.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"down for the test"}}`))
		return
	}
	version := f.version
	etag := etagOf(version)
	body := map[string]any{"version": version, "environment": "prod", "flags": f.flags, "segments": map[string]any{}}
	if since, err := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64); err == nil && f.deltas {
		if since == version {
			f.mu.Unlock()
			w.WriteHeader(304)
			return
		}
		if old, ok := f.history[since]; ok {
			body = map[string]any{"version": version, "environment": "prod", "since": since, "flags": diff(old, f.flags), "segments": map[string]any{}}
		}
	}
	f.mu.Unlock()
	w.Header().Set("ETag", etag)
	w.Header().Set("Vary", "Accept-Encoding")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(304)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	text, _ := json.Marshal(body)
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		_, _ = gz.Write(text)
		_ = gz.Close()
		return
	}
	_, _ = w.Write(text)
}

func (f *fakeServer) takeCounts(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Counts []struct {
			FlagKey, Variation, Hour string
			Count                    int64
		}
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil {
		w.WriteHeader(400)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.countFail) > 0 {
		status := f.countFail[0]
		f.countFail = f.countFail[1:]
		w.WriteHeader(status)
		return
	}
	if f.counts == nil {
		f.counts = map[string]int64{}
	}
	for _, c := range body.Counts {
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", c.Hour); err != nil || c.Count < 1 {
			f.t.Errorf("a count entry the server refuses: %+v", c)
		}
		f.counts[c.FlagKey+"/"+c.Variation] += c.Count
	}
	w.WriteHeader(202)
	fmt.Fprintf(w, `{"accepted":%d}`, len(body.Counts))
}

// takeEvents checks a POST /v1/events body as the server does (at most 1,000 events, each an exposure
// { flagKey, variation } or a track event { name, value? }, at ISO-8601) and keeps the batch.
func (f *fakeServer) takeEvents(w http.ResponseWriter, r *http.Request) {
	var body struct{ Events []sentEvent }
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(&body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.eventReqs++
	if len(f.eventFail) > 0 {
		status := f.eventFail[0]
		f.eventFail = f.eventFail[1:]
		w.WriteHeader(status)
		return
	}
	if err != nil || len(body.Events) > 1000 {
		f.t.Errorf("an events body the server refuses: %v, %d events", err, len(body.Events))
		w.WriteHeader(400)
		return
	}
	for _, e := range body.Events {
		_, atErr := time.Parse(time.RFC3339, e.At)
		ok := atErr == nil && (e.Type == "exposure" && e.FlagKey != "" && e.Variation != "" && e.Name == "" && e.Value == nil ||
			e.Type == "track" && e.Name != "" && e.FlagKey == "" && e.Variation == "")
		if !ok {
			f.t.Errorf("an event the server refuses: %+v", e)
			w.WriteHeader(400)
			return
		}
	}
	f.events = append(f.events, body.Events)
	w.WriteHeader(202)
	fmt.Fprintf(w, `{"accepted":%d}`, len(body.Events))
}

// eventsTaken is every event the server took, in order, and the number of batches.
func (f *fakeServer) eventsTaken() ([]sentEvent, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []sentEvent
	for _, batch := range f.events {
		out = append(out, batch...)
	}
	return out, len(f.events)
}

func (f *fakeServer) countsTaken() map[string]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int64{}
	for k, v := range f.counts {
		out[k] = v
	}
	return out
}

// diff is the delta from old to now: changed and added entries, null for removed ones.
func diff(old, now map[string]json.RawMessage) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range now {
		if string(old[k]) != string(v) {
			out[k] = v
		}
	}
	for k := range old {
		if _, ok := now[k]; !ok {
			out[k] = json.RawMessage("null")
		}
	}
	return out
}

func (f *fakeServer) stream(w http.ResponseWriter, r *http.Request) {
	flusher := w.(http.Flusher)
	ch := make(chan string, 16)
	f.mu.Lock()
	f.streamReq = append(f.streamReq, r)
	f.streams[ch] = true
	first := fmt.Sprintf("retry: 1000\n\nid: %d\nevent: version\ndata: {\"version\":%d}\n\n", f.version, f.version)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	_, _ = w.Write([]byte(first))
	flusher.Flush()
	defer func() {
		f.mu.Lock()
		delete(f.streams, ch)
		f.mu.Unlock()
	}()
	for {
		select {
		case <-r.Context().Done():
			return
		case text, ok := <-ch:
			if !ok {
				return
			}
			_, _ = w.Write([]byte(text))
			flusher.Flush()
		}
	}
}

// set changes flags (a nil value removes the flag) as one new version, and announces it on every stream.
func (f *fakeServer) set(changes map[string]string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	since := f.version
	f.version++
	for k, v := range changes {
		if v == "" {
			delete(f.flags, k)
		} else {
			f.flags[k] = json.RawMessage(v)
		}
	}
	f.history[f.version] = copyFlags(f.flags)
	event := fmt.Sprintf(`{"version":%d,"since":%d}`, f.version, since)
	if f.patches {
		patch, _ := json.Marshal(map[string]any{"flags": diff(f.history[since], f.flags), "segments": map[string]any{}})
		event = fmt.Sprintf(`{"version":%d,"since":%d,"patch":%s}`, f.version, since, patch)
	}
	for ch := range f.streams {
		ch <- fmt.Sprintf("id: %d\nevent: version\ndata: %s\n\n", f.version, event)
	}
	return f.version
}

// heartbeat sends a comment to every stream.
func (f *fakeServer) heartbeat() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.streams {
		ch <- ": heartbeat\n\n"
	}
}

// endStreams ends every open stream, as a restarting server does.
func (f *fakeServer) endStreams() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.streams {
		close(ch)
		delete(f.streams, ch)
	}
}

func (f *fakeServer) setFailing(status int) {
	f.mu.Lock()
	f.failWith = status
	f.mu.Unlock()
}

func (f *fakeServer) snapshotRequests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.requests...)
}

func (f *fakeServer) openStreams() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.streams)
}

// eventually waits for cond, failing the test after a deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const flagOn = `{"enabled":true,"rolloutPct":100,"valueOn":true,"valueOff":false,"rules":[],"killed":false,"archived":false,"defaultValue":false}`
const flagKilled = `{"enabled":true,"rolloutPct":100,"valueOn":true,"valueOff":false,"rules":[],"killed":true,"archived":false,"defaultValue":false}`
const bannerSale = `{"enabled":true,"rolloutPct":100,"valueOn":"Spring sale","valueOff":"Welcome","rules":[],"killed":false,"archived":false,"defaultValue":"Welcome"}`
