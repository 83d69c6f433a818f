package flagops

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
)

// The benchmark flag of every flagops evaluator (docs/performance.md): country in [DE, FR] and appVersion
// semver_gt 2.0.0, served to 30 % of the users it matches, everyone else off.
const benchSnapshot = `{"version":1,"environment":"prod","flags":{"new-checkout":{"enabled":true,"rolloutPct":0,
"valueOn":true,"valueOff":false,"killed":false,"archived":false,"defaultValue":false,"rules":[{"id":"eu-new",
"serve":"on","rolloutPct":30,"conditions":[{"attribute":"country","op":"in","value":["DE","FR"]},
{"attribute":"appVersion","op":"semver_gt","value":"2.0.0"}]}]}}}`

// benchContexts is a fixed pseudo-random mix of users, as scripts/bench/evaluation.mjs makes them.
func benchContexts(n int) []Context {
	countries := []string{"DE", "FR", "US", "GB", "IT"}
	versions := []string{"1.9.0", "2.0.0", "2.0.1", "2.1.0", "2.0.0-rc.1", "3.0.0-beta.1", "3.2.5", "10.0.0"}
	seed := uint32(42)
	random := func() float64 {
		seed = seed*1664525 + 1013904223
		return float64(seed) / (1 << 32)
	}
	out := make([]Context, n)
	for i := range out {
		id := fmt.Sprintf("user-%d-%x", i, int(random()*1e9))
		out[i] = Context{UserID: id, Attributes: map[string]any{
			"country":    countries[int(random()*float64(len(countries)))],
			"appVersion": versions[int(random()*float64(len(versions)))],
		}}
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
		if share < 0.05 || share > 0.15 { // 2 of 5 countries × 5 of 8 versions × 30 % = 7.5 %
			b.Fatalf("on for %.3f of the users", share)
		}
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

// snapshotOfFlags is a snapshot of n flags as scripts/bench/sdk.mjs makes it for the Node SDK: a quarter
// with the benchmark flag's rule, the rest plain rollouts, keys like real ones.
func snapshotOfFlags(n int) []byte {
	rule := []any{map[string]any{"id": "eu-new", "serve": "on", "rolloutPct": 30, "conditions": []any{
		map[string]any{"attribute": "country", "op": "in", "value": []any{"DE", "FR"}},
		map[string]any{"attribute": "appVersion", "op": "semver_gt", "value": "2.0.0"},
	}}}
	flags := make(map[string]any, n)
	for i := 0; i < n; i++ {
		entry := map[string]any{"enabled": true, "rolloutPct": (i * 7) % 101, "valueOn": true, "valueOff": false,
			"rules": []any{}, "killed": false, "archived": false, "defaultValue": nil}
		if i%4 == 0 {
			entry["rolloutPct"], entry["rules"] = 0, rule
		}
		flags[fmt.Sprintf("team-%d-feature-%d", i%40, i)] = entry
	}
	body, _ := json.Marshal(map[string]any{"version": 1, "environment": "prod", "flags": flags})
	return body
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
