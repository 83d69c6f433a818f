package flagops

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The benchmark flag of the flagops SDK benchmarks (scripts/bench/lib/seed.mjs, ruleFlagConfig): country in
// [DE, FR] and appVersion semver_gt 2.0.0 serve on, everyone else a 30 % rollout.
const ruleFlag = `{"enabled":true,"rolloutPct":30,"valueOn":true,"valueOff":false,"version":1,"killed":false,
"archived":false,"defaultValue":null,"rules":[{"id":"eu-new-app","serve":"on","conditions":[
{"attribute":"country","op":"in","value":["DE","FR"]},{"attribute":"appVersion","op":"semver_gt","value":"2.0.0"}]}]}`

const benchSnapshot = `{"version":1,"environment":"prod","flags":{"new-checkout":` + ruleFlag + `}}`

// benchContexts are the users of scripts/bench/lib/seed.mjs (ruleFlagContexts): the same ids and attributes.
func benchContexts(n int) []Context {
	countries := []string{"DE", "FR", "US", "GB", "IT"}
	versions := []string{"1.9.0", "2.0.0", "2.0.1", "2.1.0", "3.2.5", "10.0.0"}
	seed := uint32(42)
	random := func() float64 {
		seed = seed*1664525 + 1013904223
		return float64(seed) / (1 << 32)
	}
	out := make([]Context, n)
	for i := range out {
		id := "user-" + strconv.Itoa(i) + "-" + strconv.FormatInt(int64(random()*1e9), 36)
		country := countries[int(random()*float64(len(countries)))]
		version := versions[int(random()*float64(len(versions)))]
		out[i] = Context{UserID: id, Attributes: map[string]any{"country": country, "appVersion": version}}
	}
	return out
}

// BenchmarkEvaluateBenchmarkFlag evaluates the benchmark flag for 100,000 distinct users (as the JS
// benchmark does: their contexts do not fit in the CPU's caches) and for 1,000 (they do).
func BenchmarkEvaluateBenchmarkFlag(b *testing.B) {
	for _, users := range []int{100_000, 1_000} {
		b.Run(fmt.Sprintf("users=%d", users), func(b *testing.B) { benchmarkEvaluate(b, users) })
	}
}

func benchmarkEvaluate(b *testing.B, users int) {
	s, err := ParseSnapshot([]byte(benchSnapshot))
	if err != nil {
		b.Fatal(err)
	}
	contexts := benchContexts(users)
	on := 0
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		if s.Evaluate("new-checkout", contexts[i%len(contexts)]).Value == true {
			on++
		}
	}
	b.StopTimer()
	reportCPU(b, cpu)
	if b.N >= len(contexts) {
		share := float64(on) / float64(b.N)
		if share < 0.46 || share > 0.51 { // matching: 2/5 × 4/6; the rest: 30 %; 48.6 % for the Node SDK's users
			b.Fatalf("on for %.3f of the users", share)
		}
		b.ReportMetric(share*100, "%on")
	}
}

// BenchmarkClientBool is the same flag through a client's typed accessor (the atomic snapshot load included).
func BenchmarkClientBool(b *testing.B) {
	c := newOfflineClient(b, benchSnapshot)
	contexts := benchContexts(100_000)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		c.Bool("new-checkout", false, contexts[i%len(contexts)])
	}
	b.StopTimer()
	reportCPU(b, cpu)
}

// reportCPU adds the process CPU time per operation since `since` (cpu-ns/op) beside the wall time.
func reportCPU(b *testing.B, since int64) {
	if now := cpuTime(); now > 0 && b.N > 0 {
		b.ReportMetric(float64(now-since)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkClientBoolCounting is client.Bool with evaluation counting on (the default of a connected client).
func BenchmarkClientBoolCounting(b *testing.B) {
	benchmarkConnectedBool(b, false, 100_000)
}

// BenchmarkClientBoolExposures is client.Bool with counting and exposures on (Options.SendExposures), against
// BenchmarkClientBoolCounting: the cost of recording exposures. With 100,000 users nearly every evaluation is
// a new exposure for the window (the queue fills and drops the oldest: the sender has nowhere to send them);
// with 1,000 nearly every one is a repeat the window already holds.
func BenchmarkClientBoolExposures(b *testing.B) {
	for _, users := range []int{100_000, 1_000} {
		b.Run(fmt.Sprintf("users=%d", users), func(b *testing.B) {
			b.Run("exposures=off", func(b *testing.B) { benchmarkConnectedBool(b, false, users) })
			b.Run("exposures=on", func(b *testing.B) { benchmarkConnectedBool(b, true, users) })
		})
	}
}

func benchmarkConnectedBool(b *testing.B, exposures bool, users int) {
	c, err := NewClient(Options{URL: "http://127.0.0.1:9", SDKKey: "svc_sdk_bench", Bootstrap: []byte(benchSnapshot),
		DisableStream: true, PollInterval: time.Hour, CountsInterval: time.Hour, Logger: quietLogger(),
		SendExposures: exposures, ExposureFlushInterval: time.Hour, RetryInitial: time.Hour, RetryMax: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	contexts := benchContexts(users)
	for i := range contexts { // warm: the exposure set and the queue at their working size
		c.Bool("new-checkout", false, contexts[i])
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		c.Bool("new-checkout", false, contexts[i%len(contexts)])
	}
	b.StopTimer()
	reportCPU(b, cpu)
}

// snapshotOfFlags is a snapshot of n flags as scripts/bench/sdk.mjs makes it for the Node SDK: a quarter
// are the benchmark flag, the rest plain rollouts, keys like real ones.
func snapshotOfFlags(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"version":1,"environment":"prod","flags":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"team-%d-feature-%d":`, i%40, i)
		if i%4 == 0 {
			b.WriteString(ruleFlag)
		} else {
			fmt.Fprintf(&b, `{"killed":false,"archived":false,"defaultValue":null,"enabled":true,"rolloutPct":%d,"valueOn":true,"valueOff":false,"rules":[]}`, (i*7)%101)
		}
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

// BenchmarkSnapshot10000Flags reports the heap a compiled snapshot of 10,000 flags holds (heap-bytes) and
// the time to parse and compile it (ns/op).
func BenchmarkSnapshot10000Flags(b *testing.B) {
	body := snapshotOfFlags(10_000)
	var kept *Snapshot
	var held uint64
	var cpu int64 // parse and compile only (GC included, which runs on other threads too)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		kept = nil
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		started := cpuTime()
		s, err := ParseSnapshot(body)
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - started
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = after.HeapAlloc - before.HeapAlloc
		kept = s
		b.StartTimer()
	}
	runtime.KeepAlive(kept)
	b.ReportMetric(float64(held), "heap-bytes")
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(len(body)), "json-bytes")
}
