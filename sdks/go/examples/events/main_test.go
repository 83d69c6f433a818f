package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
)

// The events example of docs/sdk-go.md is this file, and prints what the docs show when run against the flags
// the README's tour creates in prod (checkout-v2: 50 % and the beta rule).
const tourSnapshot = `{"version":7,"environment":"prod","flags":{
"checkout-v2":{"enabled":true,"rolloutPct":50,"valueOn":true,"valueOff":false,"killed":false,"archived":false,"defaultValue":false,
  "rules":[{"id":"beta","conditions":[{"attribute":"plan","op":"eq","value":"beta"}],"serve":"on"}]}},"segments":{}}`

func docs(t *testing.T) string {
	body, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "sdk-go.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

func block(t *testing.T, doc, marker, lang string) string {
	m := regexp.MustCompile("(?s)<!-- " + marker + " -->\\s*```" + lang + "\n(.*?)```").FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/sdk-go.md has no block marked %s", marker)
	}
	return m[1]
}

func TestDocsShowThisFile(t *testing.T) {
	source, _ := os.ReadFile("main.go")
	if got := block(t, docs(t), "snippet: go-events", "go"); got != string(source) {
		t.Error("the events example in docs/sdk-go.md differs from examples/events/main.go")
	}
}

func TestEventsExamplePrintsWhatDocsShow(t *testing.T) {
	var mu sync.Mutex
	kinds := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer svc_sdk_tour" {
			w.WriteHeader(401)
			return
		}
		switch r.URL.Path {
		case "/v1/snapshot":
			w.Header().Set("ETag", `"v7"`)
			fmt.Fprint(w, tourSnapshot)
		case "/v1/events":
			var body struct{ Events []struct{ Type, Name string } }
			_ = json.NewDecoder(r.Body).Decode(&body)
			mu.Lock()
			for _, e := range body.Events {
				kinds[e.Type+" "+e.Name]++
			}
			mu.Unlock()
			w.WriteHeader(202)
			fmt.Fprintf(w, `{"accepted":%d}`, len(body.Events))
		case "/v1/counts":
			w.WriteHeader(202)
			fmt.Fprint(w, `{"accepted":0}`)
		default:
			w.WriteHeader(404) // no stream: the client polls
		}
	}))
	defer srv.Close()
	t.Setenv("FLAGOPS_EVAL_URL", srv.URL)
	t.Setenv("FLAGOPS_SDK_KEY", "svc_sdk_tour")

	reader, writer, _ := os.Pipe()
	stdout := os.Stdout
	os.Stdout = writer
	main()
	os.Stdout = stdout
	writer.Close()
	printed, _ := io.ReadAll(reader)
	if want := block(t, docs(t), "output: go-events", "text"); string(printed) != want {
		t.Errorf("the events example printed\n%s\nthe docs show\n%s", printed, want)
	}
	if kinds["exposure "] != 100 || kinds["track signup"] != 1 || kinds["track checkout-completed"] < 1 {
		t.Errorf("the server took %v", kinds)
	}
}
