"""The per-worker cache: bounded, least recently used out first, safe across threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from app.lru import LRU


def test_the_least_recently_used_entry_goes_first():
    cache: LRU[str] = LRU(2)
    cache.put("a", "A")
    cache.put("b", "B")
    assert cache.get("a") == "A"  # a is now the most recent
    cache.put("c", "C")
    assert cache.get("b") is None and cache.get("a") == "A" and cache.get("c") == "C"
    assert len(cache) == 2


def test_get_or_compute_computes_only_what_is_missing():
    cache: LRU[int] = LRU(8)
    calls = []
    assert cache.get_or_compute("k", lambda: calls.append(1) or 42) == 42
    assert cache.get_or_compute("k", lambda: calls.append(1) or 0) == 42
    assert calls == [1]


def test_many_threads_evicting_each_other_never_fail():
    cache: LRU[int] = LRU(16)

    def work(n: int) -> bool:
        for i in range(2000):
            key = (n * 7 + i) % 64
            assert cache.get_or_compute(key, lambda key=key: key * 2) == key * 2
        return True

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(work, range(8)))
    assert len(cache) <= 16


def test_a_weight_budget_drops_the_oldest_until_it_fits():
    cache: LRU[bytes] = LRU(100, budget=10, weigh=len)
    cache.put("a", b"xxxx")
    cache.put("b", b"xxxx")
    cache.get("a")  # used: b is now the oldest
    cache.put("c", b"xxxx")
    assert cache.get("b") is None and cache.get("a") == b"xxxx" and cache.get("c") == b"xxxx"
    cache.put("a", b"x")  # replacing a value counts its new weight only
    cache.put("d", b"xxxxx")
    assert len(cache) == 3
    cache.put("huge", b"x" * 50)  # larger than the budget on its own: kept alone
    assert len(cache) == 1 and cache.get("huge")
