package flagops

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The repository's shared evaluation vectors, which the JS core, the server and every SDK run.
type vectorCase struct {
	Name       string                     `json:"name"`
	FlagKey    string                     `json:"flagKey"`
	Flag       json.RawMessage            `json:"flag"`
	Flags      map[string]json.RawMessage `json:"flags"`
	Segments   map[string]json.RawMessage `json:"segments"`
	Context    Context                    `json:"context"`
	KilledKeys *[]string                  `json:"killedKeys"`
	Expected   any                        `json:"expected"`
}

func loadVectors(t testing.TB) []vectorCase {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "test", "vectors", "evaluation.json"))
	if err != nil {
		t.Fatalf("reading the shared vectors: %v", err)
	}
	var file struct {
		Cases []vectorCase `json:"cases"`
	}
	if err := json.Unmarshal(body, &file); err != nil {
		t.Fatalf("parsing the shared vectors: %v", err)
	}
	return file.Cases
}

// snapshotOf is the snapshot a case describes: its flag (absent when null), the other flags and segments.
func snapshotOf(t *testing.T, c vectorCase) *Snapshot {
	t.Helper()
	flags := map[string]json.RawMessage{}
	for k, v := range c.Flags {
		flags[k] = v
	}
	if !isNull(c.Flag) {
		flags[c.FlagKey] = c.Flag
	}
	body, _ := json.Marshal(map[string]any{"version": 1, "environment": "prod", "flags": flags, "segments": c.Segments})
	s, err := ParseSnapshot(body)
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	return s
}

func TestSharedVectors(t *testing.T) {
	cases := loadVectors(t)
	if len(cases) < 250 {
		t.Fatalf("only %d vector cases", len(cases))
	}
	for _, c := range cases {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			s := snapshotOf(t, c)
			var overlay killOverlay
			if c.KilledKeys != nil {
				overlay = killOverlay{}
				for _, k := range *c.KilledKeys {
					overlay[k] = true
				}
			}
			result := s.env.evaluate(c.FlagKey, &c.Context, overlay)
			text, err := json.Marshal(result)
			if err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal(text, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.Expected) {
				want, _ := json.Marshal(c.Expected)
				t.Errorf("got  %s\nwant %s", text, want)
			}
		})
	}
}

// Snapshot inputs the vectors do not cover, read as the core reads them.
func TestLenientSnapshotFields(t *testing.T) {
	s, err := ParseSnapshot([]byte(`{"version":2,"environment":"prod","flags":{
		"null-rule-rollout":{"enabled":true,"rolloutPct":0,"valueOn":1,"valueOff":0,"killed":false,"archived":false,
			"defaultValue":0,"rules":[{"id":"all","conditions":[],"serve":"on","rolloutPct":null}]},
		"string-enabled":{"enabled":"true","rolloutPct":100,"valueOn":1,"valueOff":0,"killed":false,"archived":false,"defaultValue":0,"rules":[]},
		"no-values":{"enabled":true,"rolloutPct":100,"killed":false,"archived":false,"rules":[]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	// rolloutPct null is no rollout (typeof null !== "number"): the rule applies to everyone.
	if r := s.Evaluate("null-rule-rollout", Context{}); r.Reason != ReasonRuleMatch || r.HasBucket {
		t.Errorf("a rule with rolloutPct null: %+v", r)
	}
	// Only JSON true is true.
	if r := s.Evaluate("string-enabled", Context{}); r.Reason != ReasonFlagDisabled {
		t.Errorf(`enabled "true": %+v`, r)
	}
	// A missing value is null.
	if r := s.Evaluate("no-values", Context{}); r.Value != nil || r.Variation != "on" {
		t.Errorf("no valueOn: %+v", r)
	}
}
