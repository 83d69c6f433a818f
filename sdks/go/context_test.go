package flagops

import (
	"encoding/json"
	"math"
	"testing"
)

// A number beyond float64's range is an infinity, as JSON.parse makes it on the server, not a refused context.
func TestContextNumbersBeyondFloat64(t *testing.T) {
	var c Context
	if err := json.Unmarshal([]byte(`{"userId":"u","attributes":{"big":1e400,"small":-1e999,"list":[1e400,2],"plan":"pro","n":31}}`), &c); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if big, ok := c.Attributes["big"].(float64); !ok || !math.IsInf(big, 1) {
		t.Errorf("big = %#v, want +Inf", c.Attributes["big"])
	}
	if small, ok := c.Attributes["small"].(float64); !ok || !math.IsInf(small, -1) {
		t.Errorf("small = %#v, want -Inf", c.Attributes["small"])
	}
	if list, ok := c.Attributes["list"].([]any); !ok || len(list) != 2 || !math.IsInf(list[0].(float64), 1) || list[1] != 2.0 {
		t.Errorf("list = %#v", c.Attributes["list"])
	}
	if c.Attributes["n"] != 31.0 || c.Attributes["plan"] != "pro" {
		t.Errorf("n, plan = %#v, %#v", c.Attributes["n"], c.Attributes["plan"])
	}
	for _, bad := range []string{`{"attributes":[1]}`, `{"attributes":"x"}`} {
		if err := json.Unmarshal([]byte(bad), &c); err == nil || err.Error() != "context.attributes must be an object" {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}

type plan string

type level int

// tier encodes itself, as a type with MarshalJSON may.
type tier struct{ name string }

func (t tier) MarshalJSON() ([]byte, error) { return json.Marshal("tier-" + t.name) }

// Every attribute value is read as the JSON the context encodes to, as the server reads that JSON: a float32
// by its shortest decimal, named types by what they encode to.
func TestAttributesReadAsTheJSONTheyEncodeTo(t *testing.T) {
	cond := func(op, value string) string {
		return `{"enabled":true,"rolloutPct":0,"valueOn":"on","valueOff":"off","killed":false,"archived":false,"defaultValue":"off",
			"rules":[{"id":"r","serve":"on","conditions":[{"attribute":"a","op":"` + op + `","value":` + value + `}]}]}`
	}
	flags := map[string]string{
		"in-numbers": cond("in", `[9007199254740992, 0.1, 3]`),
		"eq-beta":    cond("eq", `"beta"`),
		"eq-tier":    cond("eq", `"tier-gold"`),
		"eq-null":    cond("eq", `null`),
		"neq-beta":   cond("neq", `"beta"`),
		"contains":   cond("contains", `"et"`),
		"gt":         cond("gt", `0.1`),
		"lte":        cond("lte", `0.1`),
		"semver":     cond("semver_gt", `"1.0.0"`),
	}
	body := `{"version":1,"environment":"prod","flags":{`
	first := true
	for key, flag := range flags {
		if !first {
			body += ","
		}
		first = false
		body += `"` + key + `":` + flag
	}
	snap, err := ParseSnapshot([]byte(body + "}}"))
	if err != nil {
		t.Fatal(err)
	}
	betaText := "beta"
	values := []any{
		float32(0.1), float32(3), float32(0.2), plan("beta"), plan("1.2.0"), level(3), &betaText, []plan{"beta"},
		[]float32{0.1}, tier{"gold"}, json.RawMessage(`"beta"`), []byte("beta"), map[string]plan{"x": "beta"},
		[2]level{1, 3}, (*string)(nil), float32(math.NaN()),
	}
	for _, v := range values {
		given := Context{Attributes: map[string]any{"a": v}}
		encoded, err := json.Marshal(given)
		if err != nil {
			// NaN has no JSON: such a value holds for no condition, neq's included.
			for key := range flags {
				if r := snap.Evaluate(key, given); r.Reason == ReasonRuleMatch {
					t.Errorf("%T %v, which has no JSON, matched %s", v, v, key)
				}
			}
			continue
		}
		var decoded Context
		if err := json.Unmarshal(encoded, &decoded); err != nil {
			t.Fatalf("%s: %v", encoded, err)
		}
		for key := range flags {
			got, want := snap.Evaluate(key, given), snap.Evaluate(key, decoded)
			if got.Reason != want.Reason || got.Variation != want.Variation {
				t.Errorf("%s with %T %v (JSON %s): %s/%s, but %s/%s for its JSON", key, v, v, encoded, got.Variation, got.Reason, want.Variation, want.Reason)
			}
		}
	}
	// The two that differed from the server: float32(0.1) is 0.1, plan("beta") is "beta".
	if r := snap.Evaluate("in-numbers", Context{Attributes: map[string]any{"a": float32(0.1)}}); r.Reason != ReasonRuleMatch {
		t.Errorf("float32(0.1) in [.., 0.1]: %s", r.Reason)
	}
	if r := snap.Evaluate("eq-beta", Context{Attributes: map[string]any{"a": plan("beta")}}); r.Reason != ReasonRuleMatch {
		t.Errorf(`plan("beta") eq "beta": %s`, r.Reason)
	}
}
