"""The build cache of the ahead-of-time modules: a reinstall of the same sources copies them back, nothing else does."""
from __future__ import annotations

import pytest

from allpairs._kernels import aot, cache


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ALLPAIRS_BUILD_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_stored_module_comes_back_whole_under_its_key_only(folder, tmp_path):
    built = tmp_path / "compiled.so"
    built.write_bytes(b"\x7fELF module")
    key = cache.key("digest", "sig lines", "generic", False)
    cache.store(key, built)
    out = tmp_path / "site" / "compiled.so"
    assert cache.fetch(key, out) and out.read_bytes() == b"\x7fELF module"
    assert not cache.fetch(cache.key("digest", "sig lines", "generic", True), tmp_path / "other.so")
    assert sorted(p.name for p in out.parent.iterdir()) == ["compiled.so"], "no temporary file left"


def test_the_key_changes_with_the_sources_the_signatures_the_cpu_and_the_toolchain(monkeypatch):
    base = cache.key("d", "s", "generic", False)
    assert len({base, cache.key("d2", "s", "generic", False), cache.key("d", "s2", "generic", False),
                cache.key("d", "s", "x86-64-v3", False), cache.key("d", "s", "generic", True)}) == 5
    monkeypatch.setenv("CC", "clang")
    assert cache.key("d", "s", "generic", False) != base
    assert cache.key("d", "s", "generic", False) == cache.key("d", "s", "generic", False)


def test_the_folder_follows_the_environment_and_off_turns_it_off(monkeypatch, tmp_path):
    monkeypatch.delenv("ALLPAIRS_BUILD_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.folder() == tmp_path / "allpairs" / "kernels"
    monkeypatch.setenv("ALLPAIRS_BUILD_CACHE", "off")
    assert cache.folder() is None and not cache.fetch("k", tmp_path / "x.so")
    cache.store("k", tmp_path / "missing.so")  # nothing to do, no error


def test_a_cache_that_cannot_be_written_is_passed_over(tmp_path, monkeypatch):
    (tmp_path / "a file").write_text("not a folder")
    monkeypatch.setenv("ALLPAIRS_BUILD_CACHE", str(tmp_path / "a file" / "cache"))
    built = tmp_path / "m.so"
    built.write_bytes(b"m")
    cache.store("k", built)  # no error: the build goes on without the cache
    assert not cache.fetch("k", tmp_path / "out.so")


def test_a_build_with_a_cached_module_copies_it_without_compiling(folder, tmp_path, monkeypatch):
    lines = [line for line in aot.read_signatures()][1::aot.PARTS]
    key = cache.key(aot.source_digest(), "\n".join(lines), "generic", False)
    built = tmp_path / "made.so"
    built.write_bytes(b"compiled before")
    cache.store(key, built)
    monkeypatch.delenv("ALLPAIRS_AOT_CPU", raising=False)
    said = []
    out = tmp_path / "site" / "compiled_2.so"
    assert aot.build(out, log=said.append, part=1) == len(lines)
    assert out.read_bytes() == b"compiled before" and "reused" in said[0] and len(said) == 1
