"""Semantic versions per semver.org 2.0.0: strict grammar, precedence of spec item 11."""

import pytest

from flagops.semver import compare_semver, parse_semver


@pytest.mark.parametrize(
    "text",
    ["1.0.0", "0.0.0", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0-x.7.z.92", "1.0.0+20130313144700",
     "1.0.0-beta+exp.sha.5114f85", "1.0.0-x-y-z.--", "99999999999999999999.0.0"],
)
def test_valid_versions(text):
    assert parse_semver(text) is not None


@pytest.mark.parametrize(
    "text",
    ["", "1", "1.0", "v1.0.0", " 1.0.0", "1.0.0 ", "01.0.0", "1.02.0", "1.0.0-01", "1.0.0-", "1.0.0+", "1.0.0-a..b",
     "1.0.0+a..b", "1.0.0\n", "١.٠.٠", "1.0.0-é", "1.0.0.0"],
)
def test_invalid_versions(text):
    assert parse_semver(text) is None


def test_precedence_follows_the_spec_example():
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
               "1.0.0-rc.1", "1.0.0", "2.0.0", "2.1.0", "2.1.1", "10.0.0"]
    for i, a in enumerate(ordered):
        for j, b in enumerate(ordered):
            assert compare_semver(a, b) == (i > j) - (i < j), (a, b)


def test_build_metadata_is_ignored():
    assert compare_semver("1.0.0+a", "1.0.0+b") == 0


def test_numbers_beyond_doubles_compare_exactly():
    assert compare_semver("9007199254740993.0.0", "9007199254740992.0.0") == 1


def test_an_invalid_side_has_no_order():
    assert compare_semver("1.0", "1.0.0") is None
    assert compare_semver(3, "1.0.0") is None
