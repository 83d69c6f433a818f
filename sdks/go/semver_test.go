package flagops

import "testing"

func TestSemverPrecedence(t *testing.T) {
	// semver.org 2.0.0, item 11: each is lower than the next.
	ordered := []string{
		"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
		"1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0", "10.0.0", "99999999999999999999.0.0",
	}
	for i := range ordered {
		for j := range ordered {
			cmp, ok := CompareSemver(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if !ok || cmp != want {
				t.Errorf("CompareSemver(%s, %s) = %d, %v; want %d", ordered[i], ordered[j], cmp, ok, want)
			}
		}
	}
}

func TestSemverBuildMetadataIgnored(t *testing.T) {
	for _, pair := range [][2]string{{"1.0.0+build.1", "1.0.0"}, {"1.0.0-rc.1+x.y-z", "1.0.0-rc.1"}, {"1.0.0+a", "1.0.0+b"}} {
		if cmp, ok := CompareSemver(pair[0], pair[1]); !ok || cmp != 0 {
			t.Errorf("CompareSemver(%s, %s) = %d, %v; want 0", pair[0], pair[1], cmp, ok)
		}
	}
}

func TestSemverInvalid(t *testing.T) {
	invalid := []string{
		"", "1", "1.0", "v1.0.0", " 1.0.0", "1.0.0 ", "01.0.0", "1.00.0", "1.0.00", "1.0.0-", "1.0.0-01",
		"1.0.0-a..b", "1.0.0+", "1.0.0+a..b", "1.0.0-é", "1.0.0.0", "a.b.c", "1.0.0_1", "-1.0.0",
	}
	for _, s := range invalid {
		if parseSemver(s) != nil {
			t.Errorf("parseSemver(%q) accepted an invalid version", s)
		}
		if _, ok := CompareSemver(s, "1.0.0"); ok {
			t.Errorf("CompareSemver(%q, 1.0.0) compared an invalid version", s)
		}
	}
	valid := []string{"0.0.0", "1.0.0-0", "1.0.0-0a", "1.0.0-a-b.c", "1.0.0--", "1.0.0+001", "1.0.0-x.7.z.92+exp.sha.5114f85"}
	for _, s := range valid {
		if parseSemver(s) == nil {
			t.Errorf("parseSemver(%q) refused a valid version", s)
		}
	}
}
