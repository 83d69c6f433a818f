"""MurmurHash3 x86 32-bit over UTF-8, against values of the JavaScript core (the server's hash)."""

import pytest

from flagops.murmur3 import absorb, bucket, murmur3_32, resume

# (string, hash with seed 0, hash with seed 42), printed by @flagops/core's murmur3_32.
KNOWN = [
    ("", 0, 142593372),
    ("a", 1009084850, 3001393763),
    ("ab", 2613040991, 3610054215),
    ("abc", 3017643002, 1313807976),
    ("abcd", 1139631978, 3898664396),
    ("hello", 613153351, 3806057185),
    ("The quick brown fox jumps over the lazy dog", 776992547, 880582914),
    ("flag/user-1", 3169473728, 2521112425),
    ("é", 269551495, 1023967903),
    ("日本語/ユーザー", 3535809148, 2226196792),
    ("😀/x", 2735355034, 2152338904),
    ("a\ud800b", 3412674851, 725669855),  # a lone surrogate hashes as U+FFFD, as TextEncoder writes it
    ("\udc00", 3063719617, 1713748083),
    ("x\ud83d\ude00y", 100798425, 4249135438),  # a pair written as two code points is one character
]


@pytest.mark.parametrize("s,seed0,seed42", KNOWN)
def test_known_hashes(s, seed0, seed42):
    assert murmur3_32(s) == seed0
    assert murmur3_32(s, 42) == seed42


@pytest.mark.parametrize("s,seed0,_", KNOWN)
def test_resuming_after_any_prefix_gives_the_same_hash(s, seed0, _):
    for cut in range(len(s) + 1):
        if 0 < cut < len(s) and "\ud800" <= s[cut - 1] <= "\udbff":
            continue  # a surrogate pair cut in two is two lone surrogates, in JavaScript as here
        assert resume(absorb(s[:cut]), s[cut:]) == seed0


def test_bucket_is_the_hash_mod_10000_over_100():
    assert bucket("checkout-v2", "user-42") == 80.78
    assert bucket("flag", "user-1") == 3169473728 % 10000 / 100


def test_buckets_spread_evenly():
    counts = [0] * 10
    for i in range(20000):
        counts[int(bucket("spread", f"user-{i}") // 10)] += 1
    assert all(1800 < c < 2200 for c in counts), counts


LONG = 496716120  # @flagops/core's murmur3_32 of the string below


def test_long_strings_hash_as_the_server_does():
    s = "user-" * 100 + "é"  # longer than the unpackers kept ready for the usual lengths
    assert murmur3_32(s) == LONG
    assert resume(absorb("user-"), s[5:]) == LONG
