package flagops

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"sort"
)

// A snapshot compiled once per version: evaluation then only reads fields. Compiled flags do not point at
// each other or at segments (prerequisites and segment conditions are looked up by key), so a delta
// recompiles only the entries it changes and shares the rest with the previous version.

type compiledVariant struct {
	name     string
	value    any
	upTo     int // served for variant buckets (in hundredths) below this cumulative weight
	weighted bool
}

type compiledRule struct {
	id         string
	serveOn    bool
	variant    *compiledVariant // a rule serving a variant by name; nil for on and off
	hasRollout bool
	rolloutPct float64
	conditions []compiledCondition
}

type compiledPrerequisite struct {
	key       string
	variation string
}

type compiledFlag struct {
	key           string
	killed        bool
	archived      bool
	enabled       bool
	rolloutPct    float64
	valueOn       any
	valueOff      any
	defaultValue  any
	rules         []compiledRule
	variants      []compiledVariant // nil: `on` serves valueOn
	firstWeighted *compiledVariant  // what `on` serves without a userId
	prerequisites []compiledPrerequisite
	// MurmurHash3 state after "<key>/" and after "<key>/variant/".
	prefix        murmurState
	variantPrefix murmurState
	// fingerprint of the entry's JSON, to tell which flags a new snapshot changed.
	print uint64
	// evaluation counts of clients (countsReporter); shared by no other compiled flag.
	counts flagCounts
	// the key's hash in the exposure set (events.go)
	keyHash uint64
}

type compiledSegment struct {
	userIDs    map[string]struct{}
	conditions []compiledCondition
	print      uint64
}

// environment is one compiled snapshot; immutable once built, so readers share it without locks.
type environment struct {
	version     int64
	environment string
	flags       map[string]*compiledFlag
	segments    map[string]*compiledSegment
	// bootstrap marks Options.Bootstrap: nothing says its content is what the server served at its version
	// (it may even be another environment's), so no delta or patch applies to it and no request names its
	// version; the first refresh replaces it whole.
	bootstrap bool
}

func hundredths(w jsNumber) int {
	if !w.present || !(w.value > 0) {
		return 0
	}
	return int(math.Round(w.value * 100))
}

// fnv64 fingerprints an entry's bytes.
func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func compileFlag(key string, raw json.RawMessage) (*compiledFlag, error) {
	var w wireFlag
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("the snapshot entry of %s: %w", key, err)
	}
	f := &compiledFlag{
		key:          key,
		killed:       bool(w.Killed),
		archived:     bool(w.Archived),
		enabled:      bool(w.Enabled),
		rolloutPct:   w.RolloutPct.value,
		valueOn:      w.ValueOn,
		valueOff:     w.ValueOff,
		defaultValue: w.DefaultValue,
		prefix:       murmurState{}.absorb(key + "/"),
		print:        fnv64(raw),
		keyHash:      maphash.String(eventSeed, key),
	}
	f.variantPrefix = murmurState{}.absorb(key + "/variant/")
	if len(w.Variants) > 0 {
		f.variants = make([]compiledVariant, len(w.Variants))
		upTo := 0
		for i, v := range w.Variants {
			upTo += hundredths(v.Weight)
			f.variants[i] = compiledVariant{name: v.Name, value: v.Value, upTo: upTo, weighted: v.Weight.present && v.Weight.value > 0}
		}
		for i := range f.variants {
			if f.variants[i].weighted {
				f.firstWeighted = &f.variants[i]
				break
			}
		}
	}
	f.rules = make([]compiledRule, len(w.Rules))
	for i, r := range w.Rules {
		rule := compiledRule{id: r.ID, serveOn: r.Serve == "on", hasRollout: r.RolloutPct.present, rolloutPct: r.RolloutPct.value}
		if !rule.serveOn && r.Serve != "off" {
			// A name that is no variant (refused at write time) serves valueOff: fail closed.
			for j := range f.variants {
				if f.variants[j].name == r.Serve {
					rule.variant = &f.variants[j]
					break
				}
			}
		}
		rule.conditions = make([]compiledCondition, len(r.Conditions))
		for j, c := range r.Conditions {
			rule.conditions[j] = compileCondition(c, false)
		}
		f.rules[i] = rule
	}
	for _, p := range w.Prerequisites {
		f.prerequisites = append(f.prerequisites, compiledPrerequisite{key: p.Flag, variation: p.Variation})
	}
	f.counts = newFlagCounts(f)
	return f, nil
}

func compileSegment(key string, raw json.RawMessage) (*compiledSegment, error) {
	var w wireSegment
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("the snapshot segment %s: %w", key, err)
	}
	s := &compiledSegment{userIDs: make(map[string]struct{}, len(w.UserIDs)), print: fnv64(raw)}
	for _, id := range w.UserIDs {
		if text, ok := id.(string); ok {
			s.userIDs[text] = struct{}{}
		}
	}
	s.conditions = make([]compiledCondition, len(w.Conditions))
	for i, c := range w.Conditions {
		s.conditions[i] = compileCondition(c, true)
	}
	return s, nil
}

func versionOf(f *float64) int64 {
	if f == nil {
		return 0
	}
	return int64(*f)
}

// compileSnapshot compiles a full snapshot.
func compileSnapshot(w *wireSnapshot) (*environment, error) {
	if w.Since != nil {
		return nil, errors.New("a delta is not a full snapshot")
	}
	env := &environment{
		version:     versionOf(w.Version),
		environment: w.Environment,
		flags:       make(map[string]*compiledFlag, len(w.Flags)),
		segments:    make(map[string]*compiledSegment, len(w.Segments)),
	}
	for key, raw := range w.Segments {
		s, err := compileSegment(key, raw)
		if err != nil {
			return nil, err
		}
		env.segments[key] = s
	}
	for key, raw := range w.Flags {
		f, err := compileFlag(key, raw)
		if err != nil {
			return nil, err
		}
		env.flags[key] = f
	}
	return env, nil
}

// applyPatch returns a new environment of `version`: this one with the patch's entries replaced (null:
// removed). The receiver is left as it was.
func (e *environment) applyPatch(version int64, flags, segments map[string]json.RawMessage) (*environment, error) {
	next := &environment{
		version:     version,
		environment: e.environment,
		flags:       make(map[string]*compiledFlag, len(e.flags)+len(flags)),
		segments:    make(map[string]*compiledSegment, len(e.segments)+len(segments)),
	}
	for k, v := range e.flags {
		next.flags[k] = v
	}
	for k, v := range e.segments {
		next.segments[k] = v
	}
	for key, raw := range segments {
		if isNull(raw) {
			delete(next.segments, key)
			continue
		}
		if !isObject(raw) {
			return nil, fmt.Errorf("the patch segment %s is not an object", key)
		}
		s, err := compileSegment(key, raw)
		if err != nil {
			return nil, err
		}
		next.segments[key] = s
	}
	for key, raw := range flags {
		if isNull(raw) {
			delete(next.flags, key)
			continue
		}
		if !isObject(raw) {
			return nil, fmt.Errorf("the patch entry of %s is not an object", key)
		}
		f, err := compileFlag(key, raw)
		if err != nil {
			return nil, err
		}
		next.flags[key] = f
	}
	return next, nil
}

// keys is every flag key, sorted.
func (e *environment) keys() []string {
	out := make([]string, 0, len(e.flags))
	for k := range e.flags {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// changedKeys is the flags whose results may differ between prev and e: entries added, changed or removed,
// flags whose rules name a changed segment, and, transitively, flags with a changed prerequisite.
func (e *environment) changedKeys(prev *environment) []string {
	changed := map[string]bool{}
	segmentChanged := func(key string) bool {
		a, b := prev.segments[key], e.segments[key]
		if a == nil || b == nil {
			return a != b
		}
		return a.print != b.print
	}
	for key, f := range e.flags {
		old := prev.flags[key]
		if old == nil || old.print != f.print {
			changed[key] = true
			continue
		}
	rules:
		for i := range f.rules {
			for j := range f.rules[i].conditions {
				c := &f.rules[i].conditions[j]
				if c.isSegment() && segmentChanged(c.segment) {
					changed[key] = true
					break rules
				}
			}
		}
	}
	for key := range prev.flags {
		if e.flags[key] == nil {
			changed[key] = true
		}
	}
	for grew := len(changed) > 0; grew; {
		grew = false
		for key, f := range e.flags {
			if changed[key] {
				continue
			}
			for _, p := range f.prerequisites {
				if changed[p.key] {
					changed[key] = true
					grew = true
					break
				}
			}
		}
	}
	out := make([]string, 0, len(changed))
	for k := range changed {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
