package flagops

import "math/bits"

// MurmurHash3 x86 32-bit over UTF-8 bytes, as the server buckets users. A hash can resume from a saved
// state: a compiled flag absorbs "<flagKey>/" once per snapshot and each evaluation hashes only the user id.

const (
	murmurC1 = 0xcc9e2d51
	murmurC2 = 0x1b873593
)

// murmurState is the hash between blocks: h after the full 4-byte blocks, n (0–3) pending bytes in k,
// length bytes seen.
type murmurState struct {
	h, k   uint32
	n      uint32
	length uint32
}

func murmurScramble(k uint32) uint32 {
	k *= murmurC1
	k = bits.RotateLeft32(k, 15)
	return k * murmurC2
}

func murmurMix(h, k uint32) uint32 {
	h ^= murmurScramble(k)
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

// absorb returns the state after s's bytes, without finishing.
func (st murmurState) absorb(s string) murmurState {
	h, k, n := st.h, st.k, st.n
	i := 0
	// Whole words of four bytes, merged with the n bytes pending from the prefix: the block is the pending
	// bytes then the word's first 4-n, and its last n bytes are pending after it.
	if shift := n * 8; shift == 0 {
		for ; i+4 <= len(s); i += 4 {
			h = murmurMix(h, uint32(s[i])|uint32(s[i+1])<<8|uint32(s[i+2])<<16|uint32(s[i+3])<<24)
		}
	} else {
		for ; i+4 <= len(s); i += 4 {
			w := uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
			h = murmurMix(h, k|w<<shift)
			k = w >> (32 - shift)
		}
	}
	for ; i < len(s); i++ {
		k |= uint32(s[i]) << (n * 8)
		n++
		if n == 4 {
			h = murmurMix(h, k)
			k, n = 0, 0
		}
	}
	return murmurState{h: h, k: k, n: n, length: st.length + uint32(len(s))}
}

// sum finishes the hash of the state followed by s.
func (st murmurState) sum(s string) uint32 {
	end := st.absorb(s)
	h := end.h
	if end.n != 0 {
		h ^= murmurScramble(end.k)
	}
	h ^= end.length
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// Murmur3 is MurmurHash3 x86 32-bit of s's bytes (UTF-8 for Go strings) with the given seed.
func Murmur3(s string, seed uint32) uint32 {
	return murmurState{h: seed}.sum(s)
}

// Bucket is a user's bucket for a flag, as the server computes it: (murmur3("<flagKey>/<userId>") mod 10000)
// / 100, in [0, 100) with two decimals.
func Bucket(flagKey, userID string) float64 {
	return float64(Murmur3(flagKey+"/"+userID, 0)%10000) / 100
}
