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
