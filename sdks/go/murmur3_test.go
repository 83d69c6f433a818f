package flagops

import "testing"

// Reference values of MurmurHash3 x86 32-bit (Austin Appleby's smhasher, and murmurhash-js over UTF-8).
func TestMurmur3KnownValues(t *testing.T) {
	cases := []struct {
		in   string
		seed uint32
		want uint32
	}{
		{"", 0, 0},
		{"", 1, 0x514e28b7},
		{"", 0xffffffff, 0x81f16f39},
		{"\x00\x00\x00\x00", 0, 0x2362f9de},
		{"aaaa", 0x9747b28c, 0x5a97808a},
		{"aaa", 0x9747b28c, 0x283e0130},
		{"aa", 0x9747b28c, 0x5d211726},
		{"a", 0x9747b28c, 0x7fa09ea6},
		{"abcd", 0x9747b28c, 0xf0478627},
		{"abc", 0x9747b28c, 0xc84a62dd},
		{"ab", 0x9747b28c, 0x74875592},
		{"Hello, world!", 0x9747b28c, 0x24884cba},
		{"The quick brown fox jumps over the lazy dog", 0x9747b28c, 0x2fa826cd},
		{"ππππππππ", 0x9747b28c, 0xd58063c1}, // π: two UTF-8 bytes each
	}
	for _, c := range cases {
		if got := Murmur3(c.in, c.seed); got != c.want {
			t.Errorf("Murmur3(%q, %#x) = %#x, want %#x", c.in, c.seed, got, c.want)
		}
	}
}

// Resuming from a saved state gives the hash of the whole string, wherever the split falls.
func TestMurmur3Resume(t *testing.T) {
	s := "checkout-v2/variant/zoë@example.com-🚀"
	want := Murmur3(s, 0)
	for i := 0; i <= len(s); i++ {
		if got := (murmurState{}).absorb(s[:i]).sum(s[i:]); got != want {
			t.Fatalf("split at %d: %#x, want %#x", i, got, want)
		}
	}
}

func TestBucket(t *testing.T) {
	// The same figures as the vectors' "rollout 30" cases and docs/evaluation.md.
	cases := map[string]float64{"acct-0": 77.53, "acct-7919": 59.86, "acct-5831": 5.1, "acct-3743": 2.33}
	for user, want := range cases {
		if got := Bucket("checkout-v2", user); got != want {
			t.Errorf("Bucket(checkout-v2, %s) = %v, want %v", user, got, want)
		}
	}
}
