"""Shards partition the selected cases, whatever their order and wherever the checkout lives."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from evaldsl.run._shard import Shard, shard_cases


@dataclass(frozen=True)
class Case:
    file: str
    name: str


names = st.text("abc", min_size=1, max_size=3)
files = st.lists(st.sampled_from(["a.evl", "b/a.evl", "b/c.evl", "z/y/x.evl", "b-c.evl"]), min_size=1, max_size=5)
case_lists = st.lists(st.tuples(st.sampled_from(range(5)), names), max_size=40, unique=True)


def build(file_list: list[str], rows: list[tuple[int, str]], root: str = "") -> list[Case]:
    return [Case(root + file_list[i % len(file_list)], name) for i, name in rows]


def ids(cases: list[Case], root: str = "") -> list[tuple[str, str]]:
    return [(c.file.removeprefix(root), c.name) for c in cases]


@given(files, case_lists, st.integers(1, 9))
def test_the_shards_partition_the_cases_and_keep_run_order(file_list, rows, count) -> None:
    cases = list({(c.file, c.name): c for c in build(file_list, rows)}.values())
    all_files = list(dict.fromkeys(c.file for c in cases))
    shards = [shard_cases(cases, Shard(i, count), all_files) for i in range(1, count + 1)]
    flat = [c for s in shards for c in s]
    assert sorted(ids(flat)) == sorted(ids(cases))  # every case once
    assert len(flat) == len(cases)
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1  # round-robin: balanced
    for shard in shards:  # each shard keeps the run's order
        assert shard == [c for c in cases if c in shard]


@given(files, case_lists, st.integers(1, 6), st.randoms(use_true_random=False))
def test_reordering_the_files_gives_the_same_shards(file_list, rows, count, rnd) -> None:
    cases = list({(c.file, c.name): c for c in build(file_list, rows)}.values())
    by_file: dict[str, list[Case]] = {}
    for c in cases:
        by_file.setdefault(c.file, []).append(c)
    order = list(by_file)
    rnd.shuffle(order)
    reordered = [c for f in order for c in by_file[f]]  # files in another order, cases inside kept
    for i in range(1, count + 1):
        a = shard_cases(cases, Shard(i, count), list(by_file))
        b = shard_cases(reordered, Shard(i, count), order)
        assert sorted(ids(a)) == sorted(ids(b))


@given(files, case_lists, st.integers(1, 6))
def test_checkouts_in_different_folders_agree(file_list, rows, count) -> None:
    roots = ["/home/ci/work/repo/suites/", "/builds/x/suites/", "C:\\agent\\_work\\suites\\"]
    results = []
    for root in roots:
        sep = "\\" if root.startswith("C:") else "/"
        cases = [Case(root + c.file.replace("/", sep), c.name) for c in build(file_list, rows)]
        cases = list({(c.file, c.name): c for c in cases}.values())
        all_files = list(dict.fromkeys(c.file for c in cases))
        results.append([ids(shard_cases(cases, Shard(i, count), all_files), root) for i in range(1, count + 1)])
    normalised = [[[(f.replace("\\", "/"), n) for f, n in s] for s in r] for r in results]
    assert normalised[0] == normalised[1] == normalised[2]
