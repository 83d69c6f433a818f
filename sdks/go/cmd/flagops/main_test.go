package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	flagops "github.com/flagops/flagops/sdks/go"
)

// A server with the snapshot wire format: GET /v1/snapshot, and GET /v1/stream announcing each new version.
type server struct {
	mu      sync.Mutex
	version int
	flag    string
	streams []chan int
}

const checkout = `{"enabled":true,"rolloutPct":50,"valueOn":true,"valueOff":false,"killed":%v,"archived":false,
"defaultValue":false,"rules":[{"id":"beta","conditions":[{"attribute":"plan","op":"eq","value":"beta"}],"serve":"on"}]}`

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer svc_sdk_k" {
		w.WriteHeader(401)
		return
	}
	s.mu.Lock()
	version, flag := s.version, s.flag
	s.mu.Unlock()
	switch r.URL.Path {
	case "/v1/snapshot":
		w.Header().Set("ETag", fmt.Sprintf(`"v%d"`, version))
		fmt.Fprintf(w, `{"version":%d,"environment":"prod","flags":{"checkout-v2":%s}}`, version, flag)
	case "/v1/stream":
		ch := make(chan int, 8)
		s.mu.Lock()
		s.streams = append(s.streams, ch)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: version\ndata: {\"version\":%d}\n\n", version)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case v := <-ch:
				fmt.Fprintf(w, "event: version\ndata: {\"version\":%d}\n\n", v)
				w.(http.Flusher).Flush()
			}
		}
	}
}

func (s *server) kill(killed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
	s.flag = fmt.Sprintf(checkout, killed)
	for _, ch := range s.streams {
		ch <- s.version
	}
}

func newServer(t *testing.T) (*server, string) {
	s := &server{version: 1, flag: fmt.Sprintf(checkout, false)}
	srv := httptest.NewServer(s)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return s, srv.URL
}

func TestEvaluate(t *testing.T) {
	_, url := newServer(t)
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"evaluate", "--url", url, "--sdk-key", "svc_sdk_k",
		"--context", `{"userId":"u-42","attributes":{"plan":"beta"}}`, "checkout-v2", "nope", "checkout-v2"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not one JSON object: %q", out.String())
	}
	want := map[string]any{
		"checkout-v2": map[string]any{"value": true, "reason": "rule_match", "variation": "on", "ruleId": "beta"},
		"nope":        map[string]any{"value": nil, "reason": "flag_not_found"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %s", out.String())
	}
	// Options after the keys, and --name=value, work too.
	out.Reset()
	code = run(context.Background(), []string{"evaluate", "checkout-v2", "--sdk-key=svc_sdk_k", "--url=" + url}, &out, &errs)
	if code != 0 || !strings.Contains(out.String(), `"reason":"rollout"`) {
		t.Errorf("exit %d, %s (no userId: rollout, off)", code, out.String())
	}
}

func TestEvaluateErrors(t *testing.T) {
	_, url := newServer(t)
	cases := map[string][]string{
		"no key":        {"evaluate", "--url", url, "--sdk-key", "svc_sdk_k"},
		"bad context":   {"evaluate", "--url", url, "--sdk-key", "svc_sdk_k", "--context", `{"userId":3}`, "f"},
		"unknown field": {"evaluate", "--url", url, "--sdk-key", "svc_sdk_k", "--context", `{"user":"a"}`, "f"},
		"no url":        {"evaluate", "--sdk-key", "svc_sdk_k", "f"},
		"two watched":   {"watch", "--url", url, "--sdk-key", "svc_sdk_k", "a", "b"},
		"no command":    {},
		"not a url":     {"evaluate", "--url", "notaurl", "--sdk-key", "svc_sdk_k", "f"},
		"not http":      {"watch", "--url", "ftp://127.0.0.1/", "--sdk-key", "svc_sdk_k", "f"},
		"a query":       {"evaluate", "--url", url + "?x=1", "--sdk-key", "svc_sdk_k", "f"},
		"a fragment":    {"evaluate", "--url", url + "#top", "--sdk-key", "svc_sdk_k", "f"},
		"too deep":      {"evaluate", "--url", url, "--sdk-key", "svc_sdk_k", "--context", nested(98), "f"},
		"too big":       {"evaluate", "--url", url, "--sdk-key", "svc_sdk_k", "--context", `{"userId":"` + strings.Repeat("x", 1<<20) + `"}`, "f"},
	}
	// Within the server's limits: evaluated.
	var within bytes.Buffer
	if code := run(context.Background(), []string{"evaluate", "--url", url, "--sdk-key", "svc_sdk_k", "--context", nested(97), "f"}, &within, io.Discard); code != 0 {
		t.Errorf("a context nested 99 levels: exit %d", code)
	}
	for name, argv := range cases {
		var out, errs bytes.Buffer
		if code := run(context.Background(), argv, &out, &errs); code != 2 || out.Len() != 0 {
			t.Errorf("%s: exit %d, stdout %q", name, code, out.String())
		}
	}
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"evaluate", "--url", url, "--sdk-key", "svc_sdk_bad", "f"}, &out, &errs); code != 1 {
		t.Errorf("a refused key: exit %d", code)
	}
	// One line with one prefix, though the library's error has it too.
	if got := errs.String(); !strings.HasPrefix(got, "flagops: ") || strings.Contains(got, "flagops: flagops:") || strings.Count(got, "\n") != 1 {
		t.Errorf("a refused key: stderr %q", got)
	}
}

// A misspelt command is named on the first line, before the usage.
func TestUnknownCommand(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"evaluat", "--url", "http://127.0.0.1:1", "f"}, &out, &errs); code != 2 || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q", code, out.String())
	}
	if first := strings.SplitN(errs.String(), "\n", 2)[0]; first != `flagops: unknown command "evaluat" (evaluate or watch)` {
		t.Errorf("first line %q", first)
	}
}

// The library's errors say "flagops: " themselves; the command's line says it once.
func TestOnePrefix(t *testing.T) {
	var errs bytes.Buffer
	fail(&errs, flagops.ErrRefused)
	if errs.String() != "flagops: the server refused the SDK key\n" {
		t.Errorf("stderr %q", errs.String())
	}
}

// A URL's scheme is case-insensitive: HTTP:// works as http:// does.
func TestUpperCaseScheme(t *testing.T) {
	_, url := newServer(t)
	var out, errs bytes.Buffer
	upper := "HTTP://" + strings.TrimPrefix(url, "http://")
	if code := run(context.Background(), []string{"evaluate", "--url", upper, "--sdk-key", "svc_sdk_k", "checkout-v2"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs.String())
	}
	if !strings.Contains(out.String(), `"checkout-v2":{"value":`) {
		t.Errorf("stdout %q", out.String())
	}
}

// watch ends as evaluate does when the first snapshot cannot be fetched: a refused key, no server.
func TestWatchWithoutASnapshot(t *testing.T) {
	_, url := newServer(t)
	unused := httptest.NewServer(http.NotFoundHandler())
	nothingThere := unused.URL
	unused.Close() // connections to it are refused
	for _, c := range []struct{ url, key string }{{url, "svc_sdk_bad"}, {nothingThere, "svc_sdk_k"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var out, errs bytes.Buffer
		code := run(ctx, []string{"watch", "--url", c.url, "--sdk-key", c.key, "f"}, &out, &errs)
		if ctx.Err() != nil {
			t.Errorf("%s %s: still watching after 20 s", c.url, c.key)
		}
		cancel()
		if code != 1 || out.Len() != 0 || !strings.HasPrefix(errs.String(), "flagops: ") {
			t.Errorf("%s %s: exit %d, stdout %q, stderr %q", c.url, c.key, code, out.String(), errs.String())
		}
	}
}

func TestHelp(t *testing.T) {
	for _, argv := range [][]string{{"--help"}, {"evaluate", "--help"}, {"watch", "-h"}} {
		var out, errs bytes.Buffer
		if code := run(context.Background(), argv, &out, &errs); code != 0 || !strings.Contains(out.String(), "flagops evaluate --url") || errs.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", argv, code, out.String(), errs.String())
		}
	}
}

func TestWatch(t *testing.T) {
	s, url := newServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	reader, writer := io.Pipe()
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"watch", "--url", url, "--sdk-key", "svc_sdk_k", "--context", `{"userId":"u-42","attributes":{"plan":"beta"}}`, "checkout-v2"}, writer, io.Discard)
		writer.Close()
	}()
	lines := bufio.NewScanner(reader)
	next := func() map[string]any {
		t.Helper()
		got := make(chan map[string]any, 1)
		go func() {
			var line map[string]any
			if lines.Scan() {
				_ = json.Unmarshal(lines.Bytes(), &line)
			}
			got <- line
		}()
		select {
		case line := <-got:
			return line
		case <-time.After(10 * time.Second):
			t.Fatal("no line within 10 s")
			return nil
		}
	}
	first := next()
	if first["flag"] != "checkout-v2" || first["result"].(map[string]any)["reason"] != "rule_match" {
		t.Fatalf("first line %v", first)
	}
	if at, err := time.Parse(time.RFC3339Nano, first["at"].(string)); err != nil || time.Since(at) > time.Minute {
		t.Errorf("at = %v", first["at"])
	}
	s.kill(true)
	if line := next(); line["result"].(map[string]any)["reason"] != "killed" {
		t.Fatalf("after the kill: %v", line)
	}
	s.kill(false)
	if line := next(); line["result"].(map[string]any)["reason"] != "rule_match" {
		t.Fatalf("after clearing the kill: %v", line)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop")
	}
}

// A context whose attribute "deep" holds n objects one inside the other: the body carrying it nests n+3 levels.
func nested(n int) string {
	return `{"attributes":{"deep":` + strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) + "}}"
}
