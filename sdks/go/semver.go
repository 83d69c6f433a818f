package flagops

import "strings"

// Semantic versions per semver.org 2.0.0 for the semver_eq, semver_gt and semver_lt operators. A condition's
// version is parsed once per snapshot; a context's is compared by scanning the string in place, so the hot
// path allocates nothing. Strictly the grammar: no leading "v", no spaces, no leading zeros in numeric
// identifiers; build metadata is validated and ignored.

type prereleaseID struct {
	numeric bool
	text    string
}

// semver is a parsed version; the core numbers stay digit strings, so versions of any size compare exactly.
type semver struct {
	core       [3]string
	prerelease []prereleaseID
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentifierChar(c byte) bool {
	return isDigit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-'
}

// compareNumeric compares two numeric identifiers without leading zeros: more digits, larger number.
func compareNumeric(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func compareIdentifier(text string, numeric bool, t prereleaseID) int {
	if numeric != t.numeric {
		if numeric { // numeric identifiers rank lower (spec 11.4.3)
			return -1
		}
		return 1
	}
	if numeric {
		return compareNumeric(text, t.text)
	}
	return strings.Compare(text, t.text) // ASCII order, a shorter prefix first
}

// compareSemver is the precedence of the version written in s relative to v (-1, 0, 1), and ok=false
// when s is not a valid semantic version.
func compareSemver(s string, v *semver) (cmp int, ok bool) {
	end := len(s)
	i := 0
	for part := 0; part < 3; part++ {
		if part > 0 {
			if i >= end || s[i] != '.' {
				return 0, false
			}
			i++
		}
		start := i
		for i < end && isDigit(s[i]) {
			i++
		}
		n := i - start
		if n == 0 || (n > 1 && s[start] == '0') {
			return 0, false
		}
		if cmp == 0 {
			cmp = compareNumeric(s[start:i], v.core[part])
		}
	}

	count := 0  // prerelease identifiers in s
	preCmp := 0 // first difference among the identifiers both versions have
	if i < end && s[i] == '-' {
		for {
			i++ // past "-" or "."
			start := i
			numeric := true
			for i < end && isIdentifierChar(s[i]) {
				if !isDigit(s[i]) {
					numeric = false
				}
				i++
			}
			if i == start || (numeric && i-start > 1 && s[start] == '0') {
				return 0, false
			}
			if preCmp == 0 && count < len(v.prerelease) {
				preCmp = compareIdentifier(s[start:i], numeric, v.prerelease[count])
			}
			count++
			if i >= end || s[i] != '.' {
				break
			}
		}
	}
	if i < end && s[i] == '+' {
		for {
			i++
			start := i
			for i < end && isIdentifierChar(s[i]) {
				i++
			}
			if i == start {
				return 0, false
			}
			if i >= end || s[i] != '.' {
				break
			}
		}
	}
	if i != end {
		return 0, false
	}

	if cmp != 0 {
		return cmp, true
	}
	other := len(v.prerelease)
	if count == 0 || other == 0 { // a release outranks its prereleases (spec 11.3)
		switch {
		case count == other:
			return 0, true
		case count == 0:
			return 1, true
		default:
			return -1, true
		}
	}
	if preCmp != 0 {
		return preCmp, true
	}
	switch {
	case count == other:
		return 0, true
	case count < other:
		return -1, true
	default:
		return 1, true
	}
}

var semverOrigin = &semver{core: [3]string{"0", "0", "0"}}

// parseSemver parses a version for later comparison; nil when it is not a valid semantic version.
func parseSemver(s string) *semver {
	if _, ok := compareSemver(s, semverOrigin); !ok {
		return nil
	}
	version := s
	if plus := strings.IndexByte(version, '+'); plus >= 0 {
		version = version[:plus]
	}
	core := version
	v := &semver{}
	if hyphen := strings.IndexByte(version, '-'); hyphen >= 0 {
		core = version[:hyphen]
		for _, text := range strings.Split(version[hyphen+1:], ".") {
			numeric := true
			for j := 0; j < len(text); j++ {
				if !isDigit(text[j]) {
					numeric = false
				}
			}
			v.prerelease = append(v.prerelease, prereleaseID{numeric: numeric, text: text})
		}
	}
	parts := strings.SplitN(core, ".", 3)
	copy(v.core[:], parts)
	return v
}

// CompareSemver compares two semantic versions: -1, 0 or 1, and ok=false when either is invalid.
func CompareSemver(a, b string) (cmp int, ok bool) {
	v := parseSemver(b)
	if v == nil {
		return 0, false
	}
	return compareSemver(a, v)
}
