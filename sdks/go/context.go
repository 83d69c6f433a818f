package flagops

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Context is who a flag is evaluated for: the user to bucket and the attributes rules test.
//
// UserID is the identity rollouts and variants bucket by; an empty UserID has no bucket. A condition on
// the attribute "userId" reads UserID first and Attributes["userId"] when UserID is absent. UserID counts
// as given when it is non-empty or when UserIDSet is true, which JSON {"userId": ""} sets: it matters only
// to conditions on "userId", exactly as on the server.
//
// Attribute values are JSON values as encoding/json decodes them (string, float64, bool, nil,
// []any, map[string]any); a value of any other Go type is read as the JSON it encodes to: other numbers
// (int, int64, json.Number, float32 by its shortest decimal, so float32(0.1) is 0.1), []string and other
// slices, named types by what they encode to (type Plan string is a string), a type with MarshalJSON by
// what that writes. A value encoding/json cannot encode (a func, NaN) fails every condition. An attribute absent from the map is missing, which makes
// every condition on it false; a nil value is JSON null.
type Context struct {
	UserID     string
	UserIDSet  bool
	Attributes map[string]any
}

// hasUserID is whether context.userId is present (it may still be empty).
func (c *Context) hasUserID() bool { return c.UserID != "" || c.UserIDSet }

// bucketingID is the id rollouts and variants hash: a non-empty UserID, else none.
func (c *Context) bucketingID() (string, bool) { return c.UserID, c.UserID != "" }

// UnmarshalJSON reads { "userId"?: string|null, "attributes"?: object|null } and refuses what
// POST /v1/evaluate refuses: another field, a userId that is not a string, attributes that are not an object.
func (c *Context) UnmarshalJSON(data []byte) error {
	*c = Context{}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return errors.New("context must be an object with userId and attributes")
	}
	for name, raw := range fields {
		switch name {
		case "userId":
			if isNull(raw) {
				continue
			}
			if err := json.Unmarshal(raw, &c.UserID); err != nil {
				return errors.New("context.userId must be a string")
			}
			c.UserIDSet = true
		case "attributes":
			if isNull(raw) {
				continue
			}
			attrs, err := decodeAttributes(raw)
			if err != nil {
				return err
			}
			c.Attributes = attrs
		default:
			return fmt.Errorf("unknown field context.%s; expected userId and attributes", name)
		}
	}
	return nil
}

// MarshalJSON writes the context as POST /v1/evaluate takes it.
func (c Context) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	if c.hasUserID() {
		out["userId"] = c.UserID
	}
	if c.Attributes != nil {
		out["attributes"] = c.Attributes
	}
	return json.Marshal(out)
}

// decodeAttributes reads context.attributes as JavaScript's JSON.parse does on the server: a number beyond
// float64's range is an infinity (which no comparison matches), not an error.
func decodeAttributes(raw json.RawMessage) (map[string]any, error) {
	value, err := decodeValue(raw)
	if err != nil {
		return nil, fmt.Errorf("context.attributes is not valid JSON: %v", err)
	}
	attrs, ok := value.(map[string]any)
	if !ok {
		return nil, errors.New("context.attributes must be an object")
	}
	return attrs, nil
}

// decodeValue reads JSON as the server does: a number beyond float64's range is ±Inf.
func decodeValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var value any
	if err := dec.Decode(&value); err != nil {
		return nil, err
	}
	return withFloats(value), nil
}

// notJSON stands for an attribute value encoding/json cannot encode (a func, a channel, NaN): no condition holds for it.
type notJSON struct{}

// asJSON is an attribute value as the server reads it from the JSON the context encodes to, for values not
// already of the types encoding/json decodes to (those, and []string, are returned as they are, without encoding).
func asJSON(v any) any {
	switch v.(type) {
	case nil, string, bool, float64, []any, map[string]any, []string:
		return v
	}
	data, err := json.Marshal(v)
	if err != nil {
		return notJSON{}
	}
	value, err := decodeValue(data)
	if err != nil {
		return notJSON{}
	}
	return value
}

// withFloats turns the json.Numbers of a decoded value into float64s, out-of-range ones into ±Inf.
func withFloats(value any) any {
	switch v := value.(type) {
	case json.Number:
		// The decoder makes only valid JSON numbers, so the one error is ErrRange, whose value is ±Inf.
		f, _ := strconv.ParseFloat(string(v), 64)
		return f
	case map[string]any:
		for k, item := range v {
			v[k] = withFloats(item)
		}
		return v
	case []any:
		for i, item := range v {
			v[i] = withFloats(item)
		}
		return v
	}
	return value
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
