package flagops

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"sort"
	"testing"
	"time"
)

// BenchmarkKillToServed measures, against a running service, how long a kill takes to be served by a
// client on the stream: from sending POST .../kill to the client answering reason killed, then the same
// for clearing it. Needs FLAGOPS_TEST_URL and FLAGOPS_TEST_SDK_KEY (the evaluation side), and
// FLAGOPS_TEST_CONTROL_URL and FLAGOPS_TEST_ADMIN_KEY (the control plane); it kills and restores the first
// enabled flag of the key's environment. Reports p50 and p99 in ms over b.N kills (use -benchtime 20x).
func BenchmarkKillToServed(b *testing.B) {
	url, key := os.Getenv("FLAGOPS_TEST_URL"), os.Getenv("FLAGOPS_TEST_SDK_KEY")
	control, admin := os.Getenv("FLAGOPS_TEST_CONTROL_URL"), os.Getenv("FLAGOPS_TEST_ADMIN_KEY")
	if url == "" || key == "" || control == "" || admin == "" {
		b.Skip("FLAGOPS_TEST_URL, FLAGOPS_TEST_SDK_KEY, FLAGOPS_TEST_CONTROL_URL and FLAGOPS_TEST_ADMIN_KEY are not all set")
	}
	c, err := NewClient(Options{URL: url, SDKKey: key, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	env := c.current.Load()
	var flagKey string
	for _, k := range env.keys() {
		if f := env.flags[k]; f.enabled && !f.killed && !f.archived {
			flagKey = k
			break
		}
	}
	if flagKey == "" {
		b.Fatal("no enabled flag to kill")
	}
	call := func(method, path string, body any) *http.Response {
		var payload []byte
		if body != nil {
			payload, _ = json.Marshal(body)
		}
		req, _ := http.NewRequest(method, control+"/api/v1"+path, bytes.NewReader(payload))
		req.Header.Set("Authorization", "Bearer "+admin)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		return res
	}
	decode := func(res *http.Response, into any) {
		defer res.Body.Close()
		if err := json.NewDecoder(res.Body).Decode(into); err != nil || res.StatusCode >= 300 {
			b.Fatalf("control plane answered %d", res.StatusCode)
		}
	}
	var projects struct {
		Projects []struct{ ID string } `json:"projects"`
	}
	decode(call("GET", "/projects", nil), &projects)
	flagID := ""
	for _, p := range projects.Projects {
		var flags struct {
			Flags []struct{ ID, Key string } `json:"flags"`
		}
		decode(call("GET", "/projects/"+p.ID+"/flags", nil), &flags)
		for _, f := range flags.Flags {
			if f.Key == flagKey {
				flagID = f.ID
			}
		}
	}
	if flagID == "" {
		b.Fatalf("flag %s not found on the control plane", flagKey)
	}
	envName := env.environment
	wait := func(killed bool) time.Duration {
		started := time.Now()
		for (c.Evaluate(flagKey, Context{}).Reason == ReasonKilled) != killed {
			if time.Since(started) > 10*time.Second {
				b.Fatalf("the client did not serve killed=%v within 10 s", killed)
			}
			time.Sleep(200 * time.Microsecond)
		}
		return time.Since(started)
	}
	var times []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		started := time.Now()
		res := call("POST", "/flags/"+flagID+"/environments/"+envName+"/kill", map[string]any{})
		res.Body.Close()
		wait(true)
		times = append(times, time.Since(started))
		started = time.Now()
		res = call("PUT", "/flags/"+flagID+"/environments/"+envName+"/config", map[string]any{"clearKill": true})
		res.Body.Close()
		wait(false)
		times = append(times, time.Since(started))
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	ms := func(q float64) float64 { return float64(times[int(q*float64(len(times)-1))].Microseconds()) / 1000 }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
	b.ReportMetric(ms(1), "max-ms")
}
