package flagops

import (
	"fmt"
	"hash/maphash"
	"sync/atomic"
)

var notReady = Result{Reason: ReasonError, ErrorCode: ErrorProviderNotReady, ErrorMessage: "no snapshot has been loaded yet"}

// Evaluate is one flag's result, exactly as POST /v1/evaluate answers it for ctx (an unknown key: Value nil,
// reason flag_not_found). Before the first snapshot: reason error, ErrorCode PROVIDER_NOT_READY.
func (c *Client) Evaluate(flagKey string, ctx Context) (r Result) {
	env := c.current.Load()
	if env == nil {
		return notReady
	}
	if f := env.evaluateInto(flagKey, &ctx, nil, &r); f != nil {
		c.served(f, r.Variation, &ctx)
	}
	return
}

// details shapes a result for a typed accessor, into r: a failure gives reason error and an ErrorCode
// (false); an archived flag without a defaultValue gives the caller's default (false, reason archived).
func (c *Client) details(flagKey string, ctx *Context, kind string, accept func(any) bool, r *Result) bool {
	env := c.current.Load()
	if env == nil {
		*r = notReady
		return false
	}
	f := env.evaluateInto(flagKey, ctx, nil, r)
	if f == nil {
		*r = Result{Reason: ReasonError, ErrorCode: ErrorFlagNotFound, ErrorMessage: "this environment has no flag " + flagKey}
		return false
	}
	if r.Value == nil && r.Reason == ReasonArchived {
		c.served(f, r.Variation, ctx)
		return false
	}
	if !accept(r.Value) {
		*r = Result{Reason: ReasonError, ErrorCode: ErrorTypeMismatch, ErrorMessage: fmt.Sprintf("flag %s is %s, not %s", flagKey, describe(r.Value), kind)}
		return false
	}
	c.served(f, r.Variation, ctx)
	return true
}

// served records an evaluation that gave the flag's own answer: counted for the stats, and an exposure when
// the client sends them.
func (c *Client) served(f *compiledFlag, variation string, ctx *Context) {
	if c.counts == nil && c.exposures == nil {
		return
	}
	i := f.variationIndex(variation)
	if i < 0 {
		return
	}
	if c.counts != nil && i < len(f.counts) {
		f.counts[i].Add(1)
	}
	if s := c.exposures; s != nil {
		h := maphash.String(eventSeed, ctx.UserID) ^ f.keyHash ^ uint64(i+1)*0x9E3779B97F4A7C15
		seen := s.seen.Load()
		// A repeat within the window, the common case, is found in its first slot and ends here.
		if atomic.LoadUint32(&seen.slots[h&seen.mask]) != fingerprint(h) {
			s.expose(seen, h, f, variation, ctx.UserID)
		}
	}
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
	var r Result
	if !c.details(flagKey, &ctx, "a boolean", isBool, &r) {
		return def
	}
	return r.Value.(bool)
}

// BoolDetails is the value and the whole result; on a failure the value is def and the result has reason
// error and an ErrorCode (FLAG_NOT_FOUND, TYPE_MISMATCH, PROVIDER_NOT_READY).
func (c *Client) BoolDetails(flagKey string, def bool, ctx Context) (v bool, r Result) {
	if !c.details(flagKey, &ctx, "a boolean", isBool, &r) {
		r.Value = def
		return def, r
	}
	return r.Value.(bool), r
}

// String is a string flag's value for ctx, or def.
func (c *Client) String(flagKey string, def string, ctx Context) string {
	var r Result
	if !c.details(flagKey, &ctx, "a string", isString, &r) {
		return def
	}
	return r.Value.(string)
}

// StringDetails is the value and the whole result, as BoolDetails.
func (c *Client) StringDetails(flagKey string, def string, ctx Context) (v string, r Result) {
	if !c.details(flagKey, &ctx, "a string", isString, &r) {
		r.Value = def
		return def, r
	}
	return r.Value.(string), r
}

// Number is a number flag's value for ctx, or def.
func (c *Client) Number(flagKey string, def float64, ctx Context) float64 {
	var r Result
	if !c.details(flagKey, &ctx, "a number", isNumber, &r) {
		return def
	}
	return r.Value.(float64)
}

// NumberDetails is the value and the whole result, as BoolDetails.
func (c *Client) NumberDetails(flagKey string, def float64, ctx Context) (v float64, r Result) {
	if !c.details(flagKey, &ctx, "a number", isNumber, &r) {
		r.Value = def
		return def, r
	}
	return r.Value.(float64), r
}

// JSON is any flag's value as encoding/json decodes it (map[string]any, []any, string, float64, bool,
// nil), or def. The value is shared with the snapshot: do not modify it.
func (c *Client) JSON(flagKey string, def any, ctx Context) any {
	var r Result
	if !c.details(flagKey, &ctx, "JSON", isAny, &r) {
		return def
	}
	return r.Value
}

// JSONDetails is the value and the whole result, as BoolDetails.
func (c *Client) JSONDetails(flagKey string, def any, ctx Context) (v any, r Result) {
	if !c.details(flagKey, &ctx, "JSON", isAny, &r) {
		r.Value = def
		return def, r
	}
	return r.Value, r
}
