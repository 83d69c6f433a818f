package flagops

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Reason says why a result has its value: the evaluation step that decided it.
type Reason string

const (
	ReasonKilled             Reason = "killed"
	ReasonArchived           Reason = "archived"
	ReasonFlagDisabled       Reason = "flag_disabled"
	ReasonPrerequisiteFailed Reason = "prerequisite_failed"
	ReasonRuleMatch          Reason = "rule_match"
	ReasonRollout            Reason = "rollout"
	ReasonDefault            Reason = "default"
	ReasonFlagNotFound       Reason = "flag_not_found"
	// ReasonError is the SDK's own: the typed accessors could not give the flag's value (see ErrorCode).
	ReasonError Reason = "error"
)

// ErrorCode is why a typed accessor returned the caller's default; OpenFeature's error codes.
type ErrorCode string

const (
	ErrorFlagNotFound     ErrorCode = "FLAG_NOT_FOUND"
	ErrorTypeMismatch     ErrorCode = "TYPE_MISMATCH"
	ErrorProviderNotReady ErrorCode = "PROVIDER_NOT_READY"
)

// Result is one flag's evaluation, shaped like an entry of POST /v1/evaluate's answer (its JSON is exactly
// that entry). Variation is "on", "off", "default" or a variant's name (empty for flag_not_found).
// Bucket is set (HasBucket) by a rule with rolloutPct or a rollout between 0 and 100; VariantBucket when a
// variant was chosen by it; PrerequisiteKey names the prerequisite that failed. Value is shared with the
// snapshot: do not modify a map or slice in it.
type Result struct {
	Value            any
	Reason           Reason
	Variation        string
	RuleID           string
	Bucket           float64
	VariantBucket    float64
	HasBucket        bool
	HasVariantBucket bool
	PrerequisiteKey  string
	// ErrorCode and ErrorMessage are set only by the typed accessors' Details, with ReasonError.
	ErrorCode    ErrorCode
	ErrorMessage string
}

// MarshalJSON writes the fields of a /v1/evaluate entry, leaving out those that do not apply.
func (r Result) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	value, err := json.Marshal(r.Value)
	if err != nil {
		return nil, err
	}
	b.WriteString(`{"value":`)
	b.Write(value)
	writeField(&b, "reason", string(r.Reason))
	if r.Variation != "" {
		writeField(&b, "variation", r.Variation)
	}
	if r.RuleID != "" {
		writeField(&b, "ruleId", r.RuleID)
	}
	if r.HasBucket {
		b.WriteString(`,"bucket":`)
		b.WriteString(strconv.FormatFloat(r.Bucket, 'f', -1, 64))
	}
	if r.HasVariantBucket {
		b.WriteString(`,"variantBucket":`)
		b.WriteString(strconv.FormatFloat(r.VariantBucket, 'f', -1, 64))
	}
	if r.PrerequisiteKey != "" {
		writeField(&b, "prerequisiteKey", r.PrerequisiteKey)
	}
	if r.ErrorCode != "" {
		writeField(&b, "errorCode", string(r.ErrorCode))
	}
	if r.ErrorMessage != "" {
		writeField(&b, "errorMessage", r.ErrorMessage)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeField(b *bytes.Buffer, name, value string) {
	text, _ := json.Marshal(value)
	b.WriteString(`,"`)
	b.WriteString(name)
	b.WriteString(`":`)
	b.Write(text)
}

// OpenFeatureReason is the reason in OpenFeature's vocabulary, as flagops' OpenFeature providers and OFREP
// endpoints say it.
func (r Reason) OpenFeatureReason() string {
	switch r {
	case ReasonKilled, ReasonFlagDisabled, ReasonPrerequisiteFailed:
		return "DISABLED"
	case ReasonRuleMatch:
		return "TARGETING_MATCH"
	case ReasonRollout:
		return "SPLIT"
	case ReasonDefault, ReasonArchived:
		return "DEFAULT"
	case ReasonFlagNotFound, ReasonError:
		return "ERROR"
	}
	return "UNKNOWN"
}

// FlagMetadata is what an OpenFeature provider puts in flag metadata besides the reason: flagops' own reason,
// the rule, the buckets, the failed prerequisite, and whether the flag is killed or archived.
func (r Result) FlagMetadata() map[string]any {
	m := map[string]any{"flagopsReason": string(r.Reason)}
	if r.RuleID != "" {
		m["ruleId"] = r.RuleID
	}
	if r.HasBucket {
		m["bucket"] = r.Bucket
	}
	if r.HasVariantBucket {
		m["variantBucket"] = r.VariantBucket
	}
	if r.PrerequisiteKey != "" {
		m["prerequisiteKey"] = r.PrerequisiteKey
	}
	if r.Reason == ReasonKilled {
		m["killed"] = true
	}
	if r.Reason == ReasonArchived {
		m["archived"] = true
	}
	return m
}
