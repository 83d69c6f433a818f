package flagops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// TestAgainstService compares local results with POST /v1/evaluate of a running service for random
// contexts built from the snapshot's own rules. It runs when FLAGOPS_TEST_URL (the evaluation origin) and
// FLAGOPS_TEST_SDK_KEY are set, and is skipped otherwise, so `go test ./...` stays offline.
// FLAGOPS_TEST_CONTEXTS sets how many contexts (default 1000).
func TestAgainstService(t *testing.T) {
	url, key := os.Getenv("FLAGOPS_TEST_URL"), os.Getenv("FLAGOPS_TEST_SDK_KEY")
	if url == "" || key == "" {
		t.Skip("FLAGOPS_TEST_URL and FLAGOPS_TEST_SDK_KEY are not set: no service to compare with")
	}
	count := 1000
	if n, err := strconv.Atoi(os.Getenv("FLAGOPS_TEST_CONTEXTS")); err == nil && n > 0 {
		count = n
	}
	c, err := NewClient(Options{URL: url, SDKKey: key, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	env := c.current.Load()
	keys := env.keys()
	if len(keys) == 0 {
		t.Fatal("the environment has no flags")
	}
	if len(keys) > 1000 {
		keys = keys[:1000]
	}
	gen := newContextGenerator(env, rand.New(rand.NewSource(int64(len(keys)))))
	compared := 0
	served := map[string]int{} // reason/variation, to show what the comparison covered
	for i := 0; i < count; i++ {
		evalCtx := gen.next()
		remote := postEvaluate(t, url, key, keys, evalCtx)
		snapshot := c.Snapshot()
		if snapshot.env != env {
			env, i = snapshot.env, i-1 // the environment changed meanwhile: ask again
			continue
		}
		for _, k := range keys {
			requireServersAnswer(t, k, evalCtx, snapshot.Evaluate(k, evalCtx), remote[k])
			compared++
			if m, ok := remote[k].(map[string]any); ok {
				served[fmt.Sprintf("%v/%v", m["reason"], m["variation"])]++
			}
		}
	}
	t.Logf("%d results compared (%d contexts × %d flags), all identical; served %v", compared, count, len(keys), served)
}

// TestBootstrapAgainstService starts a client from the snapshot in the file FLAGOPS_TEST_BOOTSTRAP, whose
// content need not be what the service serves at its version (another environment's, or edited), and checks
// that once it is ready at the service's version it answers what POST /v1/evaluate answers for every flag.
// It runs when FLAGOPS_TEST_URL, FLAGOPS_TEST_SDK_KEY and FLAGOPS_TEST_BOOTSTRAP are set.
func TestBootstrapAgainstService(t *testing.T) {
	url, key, file := os.Getenv("FLAGOPS_TEST_URL"), os.Getenv("FLAGOPS_TEST_SDK_KEY"), os.Getenv("FLAGOPS_TEST_BOOTSTRAP")
	if url == "" || key == "" || file == "" {
		t.Skip("FLAGOPS_TEST_URL, FLAGOPS_TEST_SDK_KEY and FLAGOPS_TEST_BOOTSTRAP are not set: no service to compare with")
	}
	bootstrap, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	served, err := FetchSnapshot(ctx, Options{URL: url, SDKKey: key})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(Options{URL: url, SDKKey: key, Bootstrap: bootstrap, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	eventually(t, "ready at the service's version", func() bool {
		v, _ := c.Version()
		return c.Status() == StatusReady && v == served.Version()
	})
	keys := served.Keys()
	gen := newContextGenerator(served.env, rand.New(rand.NewSource(7)))
	for i := 0; i < 50; i++ {
		evalCtx := gen.next()
		remote := postEvaluate(t, url, key, keys, evalCtx)
		for _, k := range keys {
			requireServersAnswer(t, k, evalCtx, c.Evaluate(k, evalCtx), remote[k])
		}
	}
}

// requireServersAnswer fails the test unless the local result, as JSON, is the server's answer for flag k.
func requireServersAnswer(t *testing.T, k string, evalCtx Context, result Result, remote any) {
	t.Helper()
	text, _ := json.Marshal(result)
	var local any
	_ = json.Unmarshal(text, &local)
	if !reflect.DeepEqual(local, remote) {
		contextText, _ := json.Marshal(evalCtx)
		want, _ := json.Marshal(remote)
		t.Fatalf("flag %s, context %s:\nlocal  %s\nserver %s", k, contextText, text, want)
	}
}

func postEvaluate(t *testing.T, url, key string, keys []string, evalCtx Context) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"keys": keys, "context": evalCtx})
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/evaluate", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&out) != nil {
		t.Fatalf("POST /v1/evaluate answered %d", res.StatusCode)
	}
	return out
}

// contextGenerator makes contexts that hit and miss the snapshot's conditions: each attribute a condition
// names gets one of the values conditions compare with, a near miss, a value of another type, or nothing.
type contextGenerator struct {
	rnd        *rand.Rand
	attributes map[string][]any
	userIDs    []string
}

func newContextGenerator(env *environment, rnd *rand.Rand) *contextGenerator {
	g := &contextGenerator{rnd: rnd, attributes: map[string][]any{}}
	add := func(c *compiledCondition) {
		if c.isSegment() || c.attribute == "" {
			return
		}
		values := g.attributes[c.attribute]
		switch {
		case c.operand.kind == kindString:
			values = append(values, c.operand.s, c.operand.s+"x")
		case c.operand.kind == kindNumber:
			values = append(values, c.operand.f)
		case c.operand.kind == kindBool:
			values = append(values, c.operand.b)
		}
		for _, m := range c.list {
			if m.kind == kindString {
				values = append(values, m.s)
			} else if m.kind == kindNumber {
				values = append(values, m.f)
			}
		}
		if c.op >= opGt && c.op <= opLte {
			values = append(values, c.num, c.num-1, c.num+0.5, fmt.Sprint(c.num))
		}
		if c.version != nil {
			v := c.version.core
			values = append(values, v[0]+"."+v[1]+"."+v[2], v[0]+"."+v[1]+".99", "0.0.1", v[0]+"."+v[1]+"."+v[2]+"-rc.1", "v1.0.0")
		}
		values = append(values, nil, true, 3.0, []any{"x"})
		g.attributes[c.attribute] = values
	}
	for _, f := range env.flags {
		for i := range f.rules {
			for j := range f.rules[i].conditions {
				add(&f.rules[i].conditions[j])
			}
		}
	}
	for _, s := range env.segments {
		for i := range s.conditions {
			add(&s.conditions[i])
		}
		for id := range s.userIDs {
			if len(g.userIDs) < 200 {
				g.userIDs = append(g.userIDs, id)
			}
		}
	}
	return g
}

func (g *contextGenerator) next() Context {
	var c Context
	switch r := g.rnd.Intn(10); {
	case r == 0: // no userId
	case r == 1:
		c.UserIDSet = true // "userId": ""
	case r == 2 && len(g.userIDs) > 0:
		c.UserID = g.userIDs[g.rnd.Intn(len(g.userIDs))]
	default:
		c.UserID = "user-" + strconv.Itoa(g.rnd.Intn(1_000_000))
	}
	c.Attributes = map[string]any{}
	for name, values := range g.attributes {
		if g.rnd.Intn(5) > 0 {
			c.Attributes[name] = values[g.rnd.Intn(len(values))]
		}
	}
	return c
}
