package flagops

import "fmt"

var notReady = Result{Reason: ReasonError, ErrorCode: ErrorProviderNotReady, ErrorMessage: "no snapshot has been loaded yet"}

// Evaluate is one flag's result, exactly as POST /v1/evaluate answers it for ctx (an unknown key: Value nil,
// reason flag_not_found). Before the first snapshot: reason error, ErrorCode PROVIDER_NOT_READY.
func (c *Client) Evaluate(flagKey string, ctx Context) Result {
	env := c.current.Load()
	if env == nil {
		return notReady
	}
	return env.evaluate(flagKey, &ctx, nil)
}

// details shapes a result for a typed accessor: a failure gives the default with reason error and an
// ErrorCode; an archived flag without a defaultValue gives the caller's default.
func (c *Client) details(flagKey string, ctx *Context, kind string, accept func(any) bool) (Result, bool) {
	env := c.current.Load()
	if env == nil {
		return notReady, false
	}
	r := env.evaluate(flagKey, ctx, nil)
	if r.Reason == ReasonFlagNotFound {
		return Result{Reason: ReasonError, ErrorCode: ErrorFlagNotFound, ErrorMessage: "this environment has no flag " + flagKey}, false
	}
	if r.Value == nil && r.Reason == ReasonArchived {
		return r, false
	}
	if !accept(r.Value) {
		return Result{Reason: ReasonError, ErrorCode: ErrorTypeMismatch, ErrorMessage: fmt.Sprintf("flag %s is %s, not %s", flagKey, describe(r.Value), kind)}, false
	}
	return r, true
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case float64:
		return "a number"
	case []any:
		return "an array"
	}
	return "an object"
}

func isBool(v any) bool   { _, ok := v.(bool); return ok }
func isString(v any) bool { _, ok := v.(string); return ok }
func isNumber(v any) bool { _, ok := v.(float64); return ok }
func isAny(any) bool      { return true }

// Bool is a boolean flag's value for ctx, or def when it cannot be given (see BoolDetails).
func (c *Client) Bool(flagKey string, def bool, ctx Context) bool {
	v, _ := c.BoolDetails(flagKey, def, ctx)
	return v
}

// BoolDetails is the value and the whole result; on a failure the value is def and the result has reason
// error and an ErrorCode (FLAG_NOT_FOUND, TYPE_MISMATCH, PROVIDER_NOT_READY).
func (c *Client) BoolDetails(flagKey string, def bool, ctx Context) (bool, Result) {
	r, ok := c.details(flagKey, &ctx, "a boolean", isBool)
	if !ok {
		r.Value = def
		return def, r
	}
	return r.Value.(bool), r
}

// String is a string flag's value for ctx, or def.
func (c *Client) String(flagKey string, def string, ctx Context) string {
	v, _ := c.StringDetails(flagKey, def, ctx)
	return v
}

// StringDetails is the value and the whole result, as BoolDetails.
func (c *Client) StringDetails(flagKey string, def string, ctx Context) (string, Result) {
	r, ok := c.details(flagKey, &ctx, "a string", isString)
	if !ok {
		r.Value = def
		return def, r
	}
	return r.Value.(string), r
}

// Number is a number flag's value for ctx, or def.
func (c *Client) Number(flagKey string, def float64, ctx Context) float64 {
	v, _ := c.NumberDetails(flagKey, def, ctx)
	return v
}

// NumberDetails is the value and the whole result, as BoolDetails.
func (c *Client) NumberDetails(flagKey string, def float64, ctx Context) (float64, Result) {
	r, ok := c.details(flagKey, &ctx, "a number", isNumber)
	if !ok {
		r.Value = def
		return def, r
	}
	return r.Value.(float64), r
}

// JSON is any flag's value as encoding/json decodes it (map[string]any, []any, string, float64, bool,
// nil), or def. The value is shared with the snapshot: do not modify it.
func (c *Client) JSON(flagKey string, def any, ctx Context) any {
	v, _ := c.JSONDetails(flagKey, def, ctx)
	return v
}

// JSONDetails is the value and the whole result, as BoolDetails.
func (c *Client) JSONDetails(flagKey string, def any, ctx Context) (any, Result) {
	r, ok := c.details(flagKey, &ctx, "JSON", isAny)
	if !ok {
		r.Value = def
		return def, r
	}
	return r.Value, r
}
