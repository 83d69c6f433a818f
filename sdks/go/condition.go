package flagops

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Conditions are compiled once per snapshot into one struct with an opcode, so evaluating one is a switch
// over fields already parsed (lists in maps, versions parsed), not a walk of JSON.

const (
	opNever = iota // an unknown operator or an operand of the wrong type: fail closed
	opEq
	opNeq
	opInList
	opInSet
	opNotInList
	opNotInSet
	opContains
	opGt
	opGte
	opLt
	opLte
	opSemverEq
	opSemverGt
	opSemverLt
	opInSegment
	opNotInSegment
)

// Above this many members a map lookup beats a linear scan.
const setThreshold = 8

const (
	kindNull = iota + 1
	kindBool
	kindNumber
	kindString
)

// scalar is a JSON scalar: null, a boolean, a finite number or a string.
type scalar struct {
	kind uint8
	b    bool
	f    float64
	s    string
}

func (a scalar) equal(b scalar) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kindBool:
		return a.b == b.b
	case kindNumber:
		return a.f == b.f
	case kindString:
		return a.s == b.s
	}
	return true // both null
}

// goNumber reads Go's number types (and json.Number) as the JSON numbers they encode to; ok=false for
// anything else. A float32 is read as encoding/json writes it, by its shortest decimal: float32(0.1) is 0.1,
// not 0.10000000149011612.
func goNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		f, err := strconv.ParseFloat(strconv.FormatFloat(float64(n), 'g', -1, 32), 64)
		return f, err == nil
	case int32:
		return float64(n), true
	case int16:
		return float64(n), true
	case int8:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint8:
		return float64(n), true
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil
	}
	return 0, false
}

// toNumber reads v as the JSON number it encodes to (a named number type too); ok=false for anything else.
func toNumber(v any) (float64, bool) {
	if f, ok := goNumber(v); ok {
		return f, true
	}
	f, ok := asJSON(v).(float64)
	return f, ok
}

func finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

// toScalar reads v as the JSON scalar it encodes to; ok=false for arrays, objects, NaN, ±Inf and values
// encoding/json cannot encode.
func toScalar(v any) (scalar, bool) {
	if f, ok := goNumber(v); ok {
		return scalar{kind: kindNumber, f: f}, finite(f)
	}
	switch x := asJSON(v).(type) {
	case nil:
		return scalar{kind: kindNull}, true
	case string:
		return scalar{kind: kindString, s: x}, true
	case bool:
		return scalar{kind: kindBool, b: x}, true
	case float64:
		return scalar{kind: kindNumber, f: x}, finite(x)
	}
	return scalar{}, false
}

type compiledCondition struct {
	attribute string
	readsUser bool // "userId" reads Context.UserID first
	op        uint8
	operand   scalar   // eq, neq, contains
	num       float64  // gt, gte, lt, lte: finite
	list      []scalar // in, not_in: scalar members only
	set       *scalarSet
	version   *semver
	segment   string // in_segment, not_in_segment: the segment's key
}

// scalarSet holds a long in/not_in list for lookups.
type scalarSet struct {
	strings map[string]struct{}
	numbers map[float64]struct{}
	null    bool
	yes, no bool
}

func (s *scalarSet) has(a scalar) bool {
	switch a.kind {
	case kindString:
		_, ok := s.strings[a.s]
		return ok
	case kindNumber:
		_, ok := s.numbers[a.f]
		return ok
	case kindBool:
		if a.b {
			return s.yes
		}
		return s.no
	}
	return s.null
}

func newScalarSet(list []scalar) *scalarSet {
	s := &scalarSet{strings: map[string]struct{}{}, numbers: map[float64]struct{}{}}
	for _, m := range list {
		switch m.kind {
		case kindString:
			s.strings[m.s] = struct{}{}
		case kindNumber:
			s.numbers[m.f] = struct{}{}
		case kindBool:
			if m.b {
				s.yes = true
			} else {
				s.no = true
			}
		default:
			s.null = true
		}
	}
	return s
}

// compileCondition prepares one condition; inSegment says whether it belongs to a segment, where segment
// conditions never hold.
func compileCondition(c wireCondition, inSegment bool) compiledCondition {
	out := compiledCondition{attribute: c.attribute()}
	out.readsUser = out.attribute == "userId"
	switch c.Op {
	case "in_segment", "not_in_segment":
		if key, ok := c.Value.(string); ok && !inSegment {
			out.segment = key
			if c.Op == "in_segment" {
				out.op = opInSegment
			} else {
				out.op = opNotInSegment
			}
		}
	case "eq", "neq", "contains":
		if s, ok := toScalar(c.Value); ok {
			out.operand = s
			out.op = map[string]uint8{"eq": opEq, "neq": opNeq, "contains": opContains}[c.Op]
		}
	case "in", "not_in":
		if members, ok := c.Value.([]any); ok {
			for _, m := range members {
				if s, ok := toScalar(m); ok {
					out.list = append(out.list, s)
				}
			}
			large := len(out.list) > setThreshold
			if large {
				out.set = newScalarSet(out.list)
			}
			switch {
			case c.Op == "in" && large:
				out.op = opInSet
			case c.Op == "in":
				out.op = opInList
			case large:
				out.op = opNotInSet
			default:
				out.op = opNotInList
			}
		}
	case "gt", "gte", "lt", "lte":
		if f, ok := c.Value.(float64); ok && finite(f) {
			out.num = f
			out.op = map[string]uint8{"gt": opGt, "gte": opGte, "lt": opLt, "lte": opLte}[c.Op]
		}
	case "semver_eq", "semver_gt", "semver_lt":
		if s, ok := c.Value.(string); ok {
			if v := parseSemver(s); v != nil {
				out.version = v
				out.op = map[string]uint8{"semver_eq": opSemverEq, "semver_gt": opSemverGt, "semver_lt": opSemverLt}[c.Op]
			}
		}
	}
	return out
}

func (c *compiledCondition) isSegment() bool { return c.op == opInSegment || c.op == opNotInSegment }

// readAttribute is the value a condition tests and whether the context has it: Attributes[attribute], except
// that "userId" reads Context.UserID first, the identity bucketing uses.
func readAttribute(ctx *Context, c *compiledCondition) (any, bool) {
	if c.readsUser && ctx.hasUserID() {
		return ctx.UserID, true
	}
	v, ok := ctx.Attributes[c.attribute]
	return v, ok
}

func isMember(list []scalar, a scalar) bool {
	for i := range list {
		if list[i].equal(a) {
			return true
		}
	}
	return false
}

// holds is whether an attribute condition holds for the value a; a missing attribute fails every operator.
func (c *compiledCondition) holds(a any, present bool) bool {
	if !present {
		return false
	}
	switch c.op {
	case opEq:
		s, ok := toScalar(a)
		return ok && s.equal(c.operand)
	case opNeq:
		s, ok := toScalar(a)
		return ok && !s.equal(c.operand)
	case opInList:
		s, ok := toScalar(a)
		return ok && isMember(c.list, s)
	case opInSet:
		s, ok := toScalar(a)
		return ok && c.set.has(s)
	case opNotInList:
		s, ok := toScalar(a)
		return ok && !isMember(c.list, s)
	case opNotInSet:
		s, ok := toScalar(a)
		return ok && !c.set.has(s)
	case opContains:
		return c.contains(a)
	case opGt, opGte, opLt, opLte:
		f, ok := toNumber(a)
		if !ok || !finite(f) {
			return false
		}
		switch c.op {
		case opGt:
			return f > c.num
		case opGte:
			return f >= c.num
		case opLt:
			return f < c.num
		}
		return f <= c.num
	case opSemverEq, opSemverGt, opSemverLt:
		s, ok := asJSON(a).(string)
		if !ok {
			return false
		}
		cmp, valid := compareSemver(s, c.version)
		if !valid {
			return false
		}
		switch c.op {
		case opSemverEq:
			return cmp == 0
		case opSemverGt:
			return cmp > 0
		}
		return cmp < 0
	}
	return false
}

// contains: a string attribute containing the string operand, or an array attribute with the operand as a
// member (strictly equal, as JSON scalars).
func (c *compiledCondition) contains(a any) bool {
	switch x := a.(type) {
	case string:
		return c.operand.kind == kindString && strings.Contains(x, c.operand.s)
	case []any:
		for _, m := range x {
			if s, ok := toScalar(m); ok && s.equal(c.operand) {
				return true
			}
		}
		return false
	case []string:
		if c.operand.kind != kindString {
			return false
		}
		for _, m := range x {
			if m == c.operand.s {
				return true
			}
		}
		return false
	case nil, bool, float64:
		return false
	}
	rv := reflect.ValueOf(a)
	if !plainList(rv) {
		// A named string type, a pointer, []byte (a base64 string), a type with its own encoding: what it encodes to.
		switch j := asJSON(a).(type) {
		case string, []any:
			return c.contains(j)
		}
		return false
	}
	// Another slice or array type ([]int, []float64, …): its elements as JSON values, without encoding it.
	for i := 0; i < rv.Len(); i++ {
		if s, ok := toScalar(rv.Index(i).Interface()); ok && s.equal(c.operand) {
			return true
		}
	}
	return false
}

// plainList is whether v is a slice or array encoding/json writes as an array of its elements: not []byte
// (a base64 string) and with no encoding of its own.
func plainList(v reflect.Value) bool {
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return false
	}
	if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
		return false
	}
	return !v.Type().Implements(jsonMarshaler) && !v.Type().Implements(textMarshaler)
}

var (
	jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	textMarshaler = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
)
