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
