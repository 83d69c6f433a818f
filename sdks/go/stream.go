package flagops

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The /v1/stream feed (Server-Sent Events): each `version` event announces a new version; when it carries
// `since` equal to the version held (served by the server, not a bootstrap) and a `patch`, the client applies
// the patch without a request, otherwise it fetches (GET /v1/snapshot?since=). The connection is reopened
// with backoff when it drops.

type sseEvent struct {
	event string
	data  string
}

// sseReader parses a text/event-stream (WHATWG HTML §9.2): lines end in LF or CRLF; comments (heartbeats)
// are skipped; an event is dispatched at a blank line.
type sseReader struct {
	r         *bufio.Reader
	started   bool
	eventType string
	data      strings.Builder
	hasData   bool
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{r: bufio.NewReaderSize(r, 32<<10)} }

// next returns the next event; touch is called for every line read, heartbeats included.
func (s *sseReader) next(touch func()) (sseEvent, error) {
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return sseEvent{}, err
		}
		touch()
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if !s.started {
			s.started = true
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if line == "" {
			if !s.hasData {
				s.eventType = ""
				continue
			}
			ev := sseEvent{event: s.eventType, data: s.data.String()}
			if ev.event == "" {
				ev.event = "message"
			}
			s.eventType, s.hasData = "", false
			s.data.Reset()
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, ""
		if i := strings.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], strings.TrimPrefix(line[i+1:], " ")
		}
		switch field {
		case "data":
			if s.hasData {
				s.data.WriteByte('\n')
			}
			s.data.WriteString(value)
			s.hasData = true
		case "event":
			s.eventType = value
		}
	}
}

// versionEvent is the data of a `version` event.
type versionEvent struct {
	Version *float64   `json:"version"`
	Since   *float64   `json:"since"`
	Patch   *wirePatch `json:"patch"`
}

// streamLoop keeps one stream open, reconnecting after retryDelay (within a second once it was connected);
// each drop asks for a refresh at once, and polling covers the time it is down.
func (c *Client) streamLoop() {
	defer c.wg.Done()
	drops, answered := 0, 0
	for {
		opened, refused, err := c.streamOnce()
		c.streamUp.Store(false)
		if c.ctx.Err() != nil {
			return
		}
		if opened {
			drops, answered = 0, 0
		}
		drops++
		if drops == 1 {
			c.logger.Printf("the flag stream dropped (%v); polling until it is back", err)
		}
		c.requestRefresh(0)
		var delay time.Duration
		switch {
		case refused:
			delay = c.opts.RetryMax
		case opened: // the server may be restarting, and a reconnection it refuses costs it nothing
			delay = reconnectDelay(c.opts.RetryInitial, c.opts.RetryMax)
		default:
			if connectionLost(err) {
				answered = 0
			} else {
				answered++
			}
			delay = retryDelay(err, answered, c.opts.RetryInitial, c.opts.RetryMax)
		}
		t := time.NewTimer(delay)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// streamOnce reads one connection to GET /v1/stream until it ends; opened says whether it was established.
func (c *Client) streamOnce() (opened, refused bool, err error) {
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	path := "/v1/stream"
	if held := c.current.Load(); held != nil && !held.bootstrap {
		// The server's first event then carries the patch from the held version when it has it.
		path += "?since=" + strconv.FormatInt(held.version, 10)
	}
	req, err := c.newRequest(ctx, path)
	if err != nil {
		return false, false, err
	}
	req.Header.Set("Accept", "text/event-stream")

	// Idle watchdog: nothing at all, not even a heartbeat, for StreamIdleTimeout ends the connection.
	var idleMu sync.Mutex
	idle := false
	watchdog := time.AfterFunc(c.opts.RequestTimeout, func() {
		idleMu.Lock()
		idle = true
		idleMu.Unlock()
		cancel()
	})
	defer watchdog.Stop()
	res, err := c.http.Do(req)
	if err != nil {
		return false, false, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		err := httpError(res, "GET /v1/stream")
		return false, res.StatusCode == 401 || res.StatusCode == 403, err
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return false, false, fmt.Errorf("GET /v1/stream answered %q", ct)
	}
	c.streamUp.Store(true)
	touch := func() { watchdog.Reset(c.opts.StreamIdleTimeout) }
	touch()
	reader := newSSEReader(res.Body)
	for {
		ev, err := reader.next(touch)
		if err != nil {
			idleMu.Lock()
			wasIdle := idle
			idleMu.Unlock()
			if wasIdle {
				return true, false, fmt.Errorf("GET /v1/stream sent nothing for %s", c.opts.StreamIdleTimeout)
			}
			if errors.Is(err, io.EOF) {
				return true, false, errors.New("the server ended the stream")
			}
			return true, false, err
		}
		if ev.event == "version" {
			c.onVersionEvent(ev.data)
		}
	}
}

// onVersionEvent applies an announced version: its patch when it follows the held version, else a fetch.
func (c *Client) onVersionEvent(data string) {
	var ev versionEvent
	if err := json.Unmarshal([]byte(data), &ev); err != nil || ev.Version == nil {
		c.logger.Printf("ignoring a version event that is not {version}: %q", data)
		return
	}
	version := int64(*ev.Version)
	c.updateMu.Lock()
	held := c.current.Load()
	if held != nil && !held.bootstrap && held.version == version {
		c.updateMu.Unlock()
		return
	}
	if held != nil && !held.bootstrap && ev.Since != nil && ev.Patch != nil && int64(*ev.Since) == held.version {
		next, err := held.applyPatch(version, ev.Patch.Flags, ev.Patch.Segments)
		if err == nil {
			c.install(next)
			c.updateMu.Unlock()
			return
		}
		c.logger.Printf("could not apply the patch to version %d: %v; fetching the snapshot", version, err)
	}
	c.updateMu.Unlock()
	c.requestRefresh(version)
}
