package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The quick start of docs/sdk-go.md is this file, and prints what the docs show when run against the
// flags the README's tour creates in prod (checkout-v2: 50 % and the beta rule; banner-text: "Spring sale").
const tourSnapshot = `{"version":7,"environment":"prod","flags":{
"checkout-v2":{"enabled":true,"rolloutPct":50,"valueOn":true,"valueOff":false,"killed":false,"archived":false,"defaultValue":false,
  "rules":[{"id":"beta","conditions":[{"attribute":"plan","op":"eq","value":"beta"}],"serve":"on"}]},
"banner-text":{"enabled":true,"rolloutPct":100,"valueOn":"Spring sale","valueOff":"Welcome","killed":false,"archived":false,
  "defaultValue":"Welcome","rules":[]}},"segments":{}}`

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
	if got := block(t, docs(t), "snippet: go-quickstart", "go"); got != string(source) {
		t.Error("the quick start in docs/sdk-go.md differs from examples/quickstart/main.go")
	}
}

func TestQuickStartPrintsWhatDocsShow(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer svc_sdk_tour" {
			w.WriteHeader(401)
			return
		}
		if r.URL.Path == "/v1/snapshot" {
			w.Header().Set("ETag", `"v7"`)
			fmt.Fprint(w, tourSnapshot)
			return
		}
		w.WriteHeader(404) // no stream: the client polls
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
	if want := block(t, docs(t), "output: go-quickstart", "text"); string(printed) != want {
		t.Errorf("the quick start printed\n%s\nthe docs show\n%s", printed, want)
	}
}
