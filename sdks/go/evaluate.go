package flagops

// Evaluation, in the order every flagops evaluator uses: killed, archived, disabled, prerequisites, the
// rules top-down, the rollout; a config with variants serves one of them wherever it would serve valueOn.

// killOverlay, when non-nil, alone decides which flags are killed (the server's kill overlay); the SDK
// passes nil and reads each entry's `killed`.
type killOverlay map[string]bool

func (o killOverlay) killed(f *compiledFlag) bool {
	if o == nil {
		return f.killed
	}
	return o[f.key]
}

// evaluation carries what one evaluation shares between a flag and its prerequisites.
type evaluation struct {
	env     *environment
	ctx     *Context
	overlay killOverlay
	// memo: the variation each prerequisite flag served, so a flag required twice is evaluated once; a
	// flag on the current path (a cycle, refused at write time) has "" and fails.
	memo map[*compiledFlag]string
}

// evaluate is one flag key's result; allocates nothing for a flag without prerequisites.
func (e *environment) evaluate(key string, ctx *Context, overlay killOverlay) (r Result) {
	e.evaluateInto(key, ctx, overlay, &r)
	return
}

// evaluateInto writes the result into r (zero): callers pass their own result, as a Result is too large
// to copy for free on the hot path.
func (e *environment) evaluateInto(key string, ctx *Context, overlay killOverlay, r *Result) *compiledFlag {
	f := e.flags[key]
	if f == nil {
		r.Reason = ReasonFlagNotFound
		return nil
	}
	ev := evaluation{env: e, ctx: ctx, overlay: overlay}
	ev.flag(f, r)
	return f
}

// flag writes f's result into r (which starts zero): results are large, and are written once rather
// than copied through each step.
func (ev *evaluation) flag(f *compiledFlag, r *Result) {
	if ev.overlay.killed(f) {
		r.Value, r.Reason, r.Variation = f.valueOff, ReasonKilled, "off"
		return
	}
	if f.archived {
		r.Value, r.Reason, r.Variation = f.defaultValue, ReasonArchived, "default"
		return
	}
	if !f.enabled {
		r.Value, r.Reason, r.Variation = f.valueOff, ReasonFlagDisabled, "off"
		return
	}
	if len(f.prerequisites) > 0 {
		if failed, ok := ev.failedPrerequisite(f); ok {
			r.Value, r.Reason, r.Variation, r.PrerequisiteKey = f.valueOff, ReasonPrerequisiteFailed, "off", failed
			return
		}
	}

	userID, hasUser := ev.ctx.bucketingID()
	bucket := -1.0 // one bucket per evaluation, computed when first needed
	for i := range f.rules {
		rule := &f.rules[i]
		if !ev.ruleMatches(rule) {
			continue
		}
		if !rule.hasRollout {
			f.serveRule(rule, userID, hasUser, -1, r)
			return
		}
		if !hasUser {
			continue
		}
		if bucket < 0 {
			bucket = f.bucket(userID)
		}
		if bucket < rule.rolloutPct {
			f.serveRule(rule, userID, hasUser, bucket, r)
			return
		}
	}

	pct := f.rolloutPct
	if pct >= 100 {
		f.serveOn(ReasonDefault, userID, hasUser, r)
		return
	}
	if !(pct > 0) {
		r.Value, r.Reason, r.Variation = f.valueOff, ReasonDefault, "off"
		return
	}
	if !hasUser {
		r.Value, r.Reason, r.Variation = f.valueOff, ReasonRollout, "off"
		return
	}
	if bucket < 0 {
		bucket = f.bucket(userID)
	}
	r.Bucket, r.HasBucket = bucket, true
	if bucket >= pct {
		r.Value, r.Reason, r.Variation = f.valueOff, ReasonRollout, "off"
		return
	}
	f.serveOn(ReasonRollout, userID, hasUser, r)
}

func (f *compiledFlag) bucket(userID string) float64 {
	return float64(f.prefix.sum(userID)%10000) / 100
}

// serveOn is what the config serves where it serves valueOn: with variants, the one the variant bucket
// picks (without a userId, the first variant with a weight above 0).
func (f *compiledFlag) serveOn(reason Reason, userID string, hasUser bool, r *Result) {
	r.Reason = reason
	if f.variants == nil {
		r.Value, r.Variation = f.valueOn, "on"
		return
	}
	if !hasUser {
		if v := f.firstWeighted; v != nil {
			r.Value, r.Variation = v.value, v.name
		} else {
			r.Value, r.Variation = f.valueOn, "on"
		}
		return
	}
	h := int(f.variantPrefix.sum(userID) % 10000)
	v := f.firstWeighted
	for i := range f.variants {
		if h < f.variants[i].upTo {
			v = &f.variants[i]
			break
		}
	}
	if v == nil {
		r.Value, r.Variation = f.valueOn, "on"
		return
	}
	r.Value, r.Variation, r.VariantBucket, r.HasVariantBucket = v.value, v.name, float64(h)/100, true
}

// serveRule is what an applying rule serves: valueOn (or a variant), its named variant, or valueOff;
// bucket < 0 when none was computed.
func (f *compiledFlag) serveRule(rule *compiledRule, userID string, hasUser bool, bucket float64, r *Result) {
	switch {
	case rule.serveOn:
		f.serveOn(ReasonRuleMatch, userID, hasUser, r)
	case rule.variant != nil:
		r.Value, r.Reason, r.Variation = rule.variant.value, ReasonRuleMatch, rule.variant.name
	default:
		r.Value, r.Reason, r.Variation = f.valueOff, ReasonRuleMatch, "off"
	}
	r.RuleID = rule.id
	if bucket >= 0 {
		r.Bucket, r.HasBucket = bucket, true
	}
}

func (ev *evaluation) ruleMatches(rule *compiledRule) bool {
	for i := range rule.conditions {
		c := &rule.conditions[i]
		if c.isSegment() {
			if !ev.segmentHolds(c) {
				return false
			}
			continue
		}
		if !c.holds(readAttribute(ev.ctx, c)) {
			return false
		}
	}
	return true
}

// segmentHolds: membership of the named segment; a segment the snapshot lacks holds for neither operator.
func (ev *evaluation) segmentHolds(c *compiledCondition) bool {
	s := ev.env.segments[c.segment]
	if s == nil {
		return false
	}
	in := s.contains(ev.ctx)
	if c.op == opInSegment {
		return in
	}
	return !in
}

// segmentUserID is the id a segment's list is matched against: Context.UserID when given, else
// Attributes["userId"] when it is a string.
func segmentUserID(ctx *Context) (string, bool) {
	if ctx.hasUserID() {
		return ctx.UserID, true
	}
	id, ok := asJSON(ctx.Attributes["userId"]).(string)
	return id, ok
}

// contains: the context's user id is listed, or the segment has conditions and all of them hold.
func (s *compiledSegment) contains(ctx *Context) bool {
	if id, ok := segmentUserID(ctx); ok {
		if _, listed := s.userIDs[id]; listed {
			return true
		}
	}
	if len(s.conditions) == 0 {
		return false
	}
	for i := range s.conditions {
		c := &s.conditions[i]
		if c.isSegment() || !c.holds(readAttribute(ctx, c)) {
			return false
		}
	}
	return true
}

// failedPrerequisite is the key of the first prerequisite that does not serve its variation for this
// context (evaluated in the same environment, with the same kills), and ok=false when all do.
func (ev *evaluation) failedPrerequisite(f *compiledFlag) (string, bool) {
	if ev.memo == nil {
		ev.memo = make(map[*compiledFlag]string, 4)
	}
	ev.memo[f] = "" // on the path: a cycle back to it fails
	for _, p := range f.prerequisites {
		required := ev.env.flags[p.key]
		if required == nil {
			return p.key, true
		}
		variation, seen := ev.memo[required]
		if !seen {
			var pr Result
			ev.flag(required, &pr)
			variation = pr.Variation
			ev.memo[required] = variation
		}
		if variation != p.variation {
			return p.key, true
		}
	}
	delete(ev.memo, f)
	return "", false
}
