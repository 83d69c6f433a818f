package flagops

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// The snapshot as GET /v1/snapshot serves it, and its deltas (GET /v1/snapshot?since= and stream patches).

// wireSnapshot is GET /v1/snapshot's body; a delta has Since and null entries for removed keys.
type wireSnapshot struct {
	Version     *float64                   `json:"version"`
	Environment string                     `json:"environment"`
	Since       *float64                   `json:"since"`
	Flags       map[string]json.RawMessage `json:"flags"`
	Segments    map[string]json.RawMessage `json:"segments"`
}

// wirePatch is the patch of a stream `version` event: the flags and segments of a delta.
type wirePatch struct {
	Flags    map[string]json.RawMessage `json:"flags"`
	Segments map[string]json.RawMessage `json:"segments"`
}

// jsTrue is true only for JSON true, as the core reads `enabled`, `killed` and `archived` (=== true).
type jsTrue bool

func (b *jsTrue) UnmarshalJSON(data []byte) error {
	*b = jsTrue(bytes.Equal(data, []byte("true")))
	return nil
}

// jsNumber is a JSON number; anything else reads as absent, so a comparison with it fails closed.
type jsNumber struct {
	value   float64
	present bool
}

func (n *jsNumber) UnmarshalJSON(data []byte) error {
	var f float64
	if !isNull(data) && json.Unmarshal(data, &f) == nil { // null decodes into a float64 without error
		*n = jsNumber{value: f, present: true}
	} else {
		*n = jsNumber{value: math.NaN()}
	}
	return nil
}

type wireCondition struct {
	Attribute *json.RawMessage `json:"attribute"`
	Op        string           `json:"op"`
	Value     any              `json:"value"`
}

// attribute is the condition's attribute name ("" when it has none, as segment conditions).
func (c wireCondition) attribute() string {
	if c.Attribute == nil {
		return ""
	}
	var s string
	if json.Unmarshal(*c.Attribute, &s) == nil {
		return s
	}
	return string(*c.Attribute)
}

type wireRule struct {
	ID         string          `json:"id"`
	Conditions []wireCondition `json:"conditions"`
	Serve      string          `json:"serve"`
	RolloutPct jsNumber        `json:"rolloutPct"`
}

type wireVariant struct {
	Name   string   `json:"name"`
	Value  any      `json:"value"`
	Weight jsNumber `json:"weight"`
}

type wirePrerequisite struct {
	Flag      string `json:"flag"`
	Variation string `json:"variation"`
}

// wireFlag is one snapshot entry.
type wireFlag struct {
	Enabled       jsTrue             `json:"enabled"`
	RolloutPct    jsNumber           `json:"rolloutPct"`
	ValueOn       any                `json:"valueOn"`
	ValueOff      any                `json:"valueOff"`
	Rules         []wireRule         `json:"rules"`
	Killed        jsTrue             `json:"killed"`
	Archived      jsTrue             `json:"archived"`
	DefaultValue  any                `json:"defaultValue"`
	Variants      []wireVariant      `json:"variants"`
	Prerequisites []wirePrerequisite `json:"prerequisites"`
}

type wireSegment struct {
	UserIDs    []any           `json:"userIds"`
	Conditions []wireCondition `json:"conditions"`
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// parseSnapshot reads a snapshot or delta body and checks its outer shape.
func parseSnapshot(body []byte) (*wireSnapshot, error) {
	var w wireSnapshot
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("the snapshot is not JSON: %w", err)
	}
	if w.Version == nil || !finite(*w.Version) || w.Flags == nil {
		return nil, errors.New("the snapshot is not { version, environment, flags }")
	}
	if w.Since == nil {
		for key, raw := range w.Flags {
			if !isObject(raw) {
				return nil, fmt.Errorf("the snapshot entry of %s is not an object", key)
			}
		}
	}
	return &w, nil
}
