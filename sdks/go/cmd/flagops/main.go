// Command flagops checks the Go SDK against a running evaluation API:
//
//	go run ./cmd/flagops evaluate --url <evaluation origin> --sdk-key <key> [--context '<json>'] <flagKey>...
//	go run ./cmd/flagops watch --url <evaluation origin> --sdk-key <key> [--context '<json>'] <flagKey>
//
// evaluate prints one JSON object keyed by flag key, each result computed locally from one snapshot.
// watch prints one JSON line {"flag","result","at"} at start and on every change of the flag's result,
// until it is interrupted.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	flagops "github.com/flagops/flagops/sdks/go"
)

const usage = `usage:
  flagops evaluate --url <evaluation origin> --sdk-key <key> [--context '<json>'] <flagKey>...
  flagops watch --url <evaluation origin> --sdk-key <key> [--context '<json>'] <flagKey>
`

type args struct {
	url, sdkKey string
	context     flagops.Context
	keys        []string
}

// parseArgs reads --name value, --name=value (or one dash) in any order among the flag keys; "--" ends
// the options.
func parseArgs(argv []string) (args, error) {
	var a args
	contextJSON := ""
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" {
			a.keys = append(a.keys, argv[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			a.keys = append(a.keys, arg)
			continue
		}
		name := strings.TrimLeft(arg, "-")
		value, inline := "", false
		if eq := strings.IndexByte(name, '='); eq >= 0 {
			name, value, inline = name[:eq], name[eq+1:], true
		}
		if name != "url" && name != "sdk-key" && name != "context" {
			return a, fmt.Errorf("unknown option %s", arg)
		}
		if !inline {
			if i+1 >= len(argv) {
				return a, fmt.Errorf("%s needs a value", arg)
			}
			i++
			value = argv[i]
		}
		switch name {
		case "url":
			a.url = value
		case "sdk-key":
			a.sdkKey = value
		case "context":
			contextJSON = value
		}
	}
	if a.url == "" || a.sdkKey == "" {
		return a, errors.New("--url and --sdk-key are required")
	}
	if contextJSON != "" {
		if problem := tooLargeForTheServer(contextJSON); problem != "" {
			return a, fmt.Errorf("--context %s", problem)
		}
		if err := json.Unmarshal([]byte(contextJSON), &a.context); err != nil {
			return a, fmt.Errorf("--context: %v", err)
		}
	}
	return a, nil
}

// The server's limits on a request body (1 MiB, arrays and objects nested at most 100 levels) as they
// bear on the context it carries (one level inside the body): what the command must refuse as the
// server would. The reason, or "" when the context is within them.
const (
	maxContextBytes = 1 << 20
	maxContextDepth = 99
)

func tooLargeForTheServer(text string) string {
	if len(text) > maxContextBytes {
		return "is over 1 MiB, which the server refuses"
	}
	depth, deepest, inString, escaped := 0, 0, false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > deepest {
				deepest = depth
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	if deepest > maxContextDepth {
		return fmt.Sprintf("nests arrays and objects more than %d levels deep, which the server refuses", maxContextDepth)
	}
	return ""
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command; watch runs until ctx ends.
func run(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	if len(argv) == 0 || (argv[0] != "evaluate" && argv[0] != "watch") {
		if len(argv) > 0 && (argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") {
			fmt.Fprint(stdout, usage)
			return 0
		}
		if len(argv) > 0 {
			fmt.Fprintf(stderr, "flagops: unknown command %q (evaluate or watch)\n", argv[0])
		}
		fmt.Fprint(stderr, usage)
		return 2
	}
	for _, arg := range argv[1:] {
		if arg == "--" {
			break
		}
		if arg == "--help" || arg == "-h" {
			fmt.Fprint(stdout, usage)
			return 0
		}
	}
	a, err := parseArgs(argv[1:])
	if err == nil {
		// A URL that can never work is a wrong argument (2), found before anything is fetched.
		// A query or fragment would end up before the API's path: no such URL reaches the API.
		if u, perr := url.Parse(a.url); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
			err = fmt.Errorf("--url must be an http(s) origin, such as http://127.0.0.1:4001 (got %q)", a.url)
		}
	}
	if err == nil && len(a.keys) == 0 {
		err = errors.New("name at least one flag key")
	}
	if err == nil && argv[0] == "watch" && len(a.keys) != 1 {
		err = errors.New("watch takes exactly one flag key")
	}
	if err != nil {
		fmt.Fprintf(stderr, "flagops: %v\n%s", err, usage)
		return 2
	}
	if argv[0] == "evaluate" {
		return evaluate(ctx, a, stdout, stderr)
	}
	return watch(ctx, a, stdout, stderr)
}

func evaluate(ctx context.Context, a args, stdout, stderr io.Writer) int {
	snapshot, err := flagops.FetchSnapshot(ctx, flagops.Options{URL: a.url, SDKKey: a.sdkKey})
	if err != nil {
		fail(stderr, err)
		return 1
	}
	// One object keyed by flag key, in the order given, each key once.
	var out bytes.Buffer
	out.WriteByte('{')
	seen := map[string]bool{}
	for _, key := range a.keys {
		if seen[key] {
			continue
		}
		seen[key] = true
		if len(seen) > 1 {
			out.WriteByte(',')
		}
		name, _ := json.Marshal(key)
		result, err := json.Marshal(snapshot.Evaluate(key, a.context))
		if err != nil {
			fail(stderr, err)
			return 1
		}
		out.Write(name)
		out.WriteByte(':')
		out.Write(result)
	}
	out.WriteString("}\n")
	_, _ = stdout.Write(out.Bytes())
	return 0
}

// fail prints err as one line with one "flagops: " prefix (the library's errors carry it already).
func fail(stderr io.Writer, err error) {
	fmt.Fprintf(stderr, "flagops: %s\n", strings.TrimPrefix(err.Error(), "flagops: "))
}

// watchLine is one line of watch's output.
type watchLine struct {
	Flag   string         `json:"flag"`
	Result flagops.Result `json:"result"`
	At     string         `json:"at"`
}

func watch(ctx context.Context, a args, stdout, stderr io.Writer) int {
	// A snapshot that cannot be fetched (a refused key, no server) ends the command as it ends evaluate,
	// rather than leave it waiting silently for a server that may never answer.
	if _, err := flagops.FetchSnapshot(ctx, flagops.Options{URL: a.url, SDKKey: a.sdkKey}); err != nil {
		if ctx.Err() != nil {
			return 0
		}
		fail(stderr, err)
		return 1
	}
	key := a.keys[0]
	changed := make(chan struct{}, 1)
	client, err := flagops.NewClient(flagops.Options{
		URL: a.url, SDKKey: a.sdkKey,
		DisableCounts: true, // checking a flag is not application traffic: keep it out of the stats
		Logger:        log.New(stderr, "[flagops] ", log.LstdFlags),
		OnChange: func(flagops.ChangeEvent) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		fail(stderr, err)
		return 2
	}
	defer func() {
		closing, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = client.Close(closing)
	}()
	if err := client.WaitReady(ctx); err != nil {
		if ctx.Err() != nil {
			return 0
		}
		fail(stderr, err)
		return 1
	}
	var mu sync.Mutex
	last := ""
	print := func() {
		mu.Lock()
		defer mu.Unlock()
		result := client.Evaluate(key, a.context)
		text, _ := json.Marshal(result)
		if string(text) == last {
			return
		}
		last = string(text)
		line, _ := json.Marshal(watchLine{Flag: key, Result: result, At: time.Now().UTC().Format("2006-01-02T15:04:05.000Z")})
		_, _ = stdout.Write(append(line, '\n'))
	}
	print()
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-changed:
			print()
		}
	}
}
