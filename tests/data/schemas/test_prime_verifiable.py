"""PrimeIntellect/verifiable-coding-problems and open-r1's python copies, through the real CLI (and --verify)."""

from __future__ import annotations

import json

import pytest

from coderl.rewards.labels import parse_label
from tests.support import read_jsonl, read_out, run_cli, write_parquet

pytestmark = pytest.mark.timeout(180)

# A real row (Codeforces 1259D), as open-r1/verifiable-coding-problems-python-10k publishes it (quoted in
# ms-swift's GRPO code-training doc): the statement with PrimeIntellect's instructions, one stdin_stdout case.
STATEMENT = (
    "Solve the following coding problem using the programming language python: Polycarp has $n$ different binary "
    "words. [...] Print answer for all of $t$ test cases in the order they appear. If there is no answer for the "
    "test case, print -1. [...] The input will be stdin and you should print your solution to stdout Now solve the "
    "problem and return the code.")
CASE = {"input": "4\n4\n0001\n1000\n0011\n0111\n3\n010\n101\n0\n2\n00000\n00001\n4\n01\n001\n0001\n00001\n",
        "output": "1\n3 \n-1\n0\n\n2\n1 2 \n", "type": "stdin_stdout"}
GOLD = '''```python
import sys


def main():
    data = sys.stdin.read().split()
    t, pos, out = int(data[0]), 1, []
    for _ in range(t):
        n = int(data[pos]); pos += 1
        words = data[pos:pos + n]; pos += n
        seen = set(words)
        kinds = {"00": 0, "11": 0}
        zo, oz = [], []
        for i, w in enumerate(words, 1):
            k = w[0] + w[-1]
            if k in kinds:
                kinds[k] += 1
            elif k == "01":
                zo.append(i)
            else:
                oz.append(i)
        if not zo and not oz:
            out.append("-1" if kinds["00"] and kinds["11"] else "0")
            if not (kinds["00"] and kinds["11"]):
                out.append("")
            continue
        big = zo if len(zo) > len(oz) else oz
        need = abs(len(zo) - len(oz)) // 2
        pick = [i for i in big if words[i - 1][::-1] not in seen][:need]
        out.append(str(len(pick)))
        out.append(" ".join(map(str, pick)))
    print("\\n".join(out))


main()
```'''
WRONG_GOLD = "```python\nprint(0)\n```"
# function_call cases as genesys's CodeVerifier runs them (`input` is the argument list, `fn_name` the function),
# each return value wrapped in a one-element list as in TACO, where these call-based problems come from
CALL_INFO = {"language": "python", "test_cases": [
    {"fn_name": "count_pairs", "input": "[[1, 2, 3], 4]", "output": "[1]", "type": "function_call"},
    {"fn_name": "count_pairs", "input": "[[5, 5], 3]", "output": "[0]", "type": "function_call"}]}
CALL_GOLD = ("```python\ndef count_pairs(xs, target):\n    return sum(a + b == target for i, a in enumerate(xs) "
             "for b in xs[i + 1:])\n```")


def prime_row(pid: str, statement: str, gold: str, info: dict, task_type: str = "verifiable_code") -> dict:
    """PrimeIntellect/verifiable-coding-problems: every column a string, verification_info JSON text."""
    return {"source": "codeforces", "task_type": task_type, "in_source_id": pid, "prompt": statement,
            "gold_standard_solution": gold, "verification_info": json.dumps(info),
            "metadata": json.dumps({"difficulty": "10", "memory_limit": "256 megabytes",
                                    "time_limit": "2 seconds"}), "problem_id": pid}


def labels_by_id(out) -> tuple[dict, dict]:
    rows, stats = read_out(out)
    return {parse_label(r["label"]).source_id: (r, parse_label(r["label"])) for r in rows}, stats


def test_prime_intellect_json_string_rows(tmp_path):
    info = {"language": "python", "test_cases": [CASE]}
    rows = [prime_row("prime_rl_code_1", STATEMENT, GOLD, info),
            prime_row("prime_rl_code_2", "Write count_pairs(xs, target).", CALL_GOLD, CALL_INFO),
            prime_row("prime_rl_code_3", "Same in C++.", "```cpp\nint main(){}\n```", {**info, "language": "cpp"}),
            prime_row("prime_rl_code_4", "What is 2+2?", "4", {"ground_truth": "4"}, task_type="verifiable_math"),
            prime_row("prime_rl_code_5", "Mixed.", GOLD, {"language": "python", "test_cases": [
                CASE, CALL_INFO["test_cases"][0]]})]
    src = write_parquet(tmp_path / "in" / "train-00000-of-00001.parquet", rows)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--test_ratio", "0", "--keep_reference")
    by_id, stats = labels_by_id(tmp_path / "out")
    assert stats["files"][0]["schema"] == "prime_verifiable" and stats["rows_read"] == 5
    assert stats["rows_written"] == 2
    assert stats["dropped"] == {"language_not_python": 1, "not_code_task": 1, "mixed_test_types": 1}
    row, label = by_id["prime_rl_code_1"]
    assert label.format == "stdio" and label.tests == ({"input": CASE["input"], "output": CASE["output"]},)
    assert label.reference_solution.startswith("import sys") and "```" not in label.reference_solution
    assert "Polycarp" in row["input"][1]["content"] and label.time_limit_s is None  # genesys applies none
    _, call = by_id["prime_rl_code_2"]
    assert call.format == "call" and call.entry_point == "count_pairs"
    assert call.tests == ({"input": [[1, 2, 3], 4], "output": 1}, {"input": [[5, 5], 3], "output": 0})
    assert "def count_pairs(xs, target):" in by_id["prime_rl_code_2"][0]["input"][1]["content"]


def test_open_r1_struct_rows_verify(tmp_path):
    """open-r1/verifiable-coding-problems-python: verification_info and metadata are structs, the question is
    `problem_statement`; --verify runs each gold solution: a right one keeps its tests, a wrong one loses them."""
    import pyarrow as pa

    case_t = pa.struct([("fn_name", pa.string()), ("input", pa.string()), ("output", pa.string()),
                        ("type", pa.string())])
    schema = pa.schema([
        ("source", pa.string()), ("task_type", pa.string()), ("in_source_id", pa.string()),
        ("problem_statement", pa.string()), ("gold_standard_solution", pa.string()), ("problem_id", pa.string()),
        ("metadata", pa.struct([("difficulty", pa.string()), ("memory_limit", pa.string()),
                                ("memory_limit_bytes", pa.int64()), ("problem_url", pa.string()),
                                ("time_limit", pa.string())])),
        ("verification_info", pa.struct([("language", pa.string()), ("test_cases", pa.list_(case_t))]))])

    def row(pid, statement, gold, cases):
        return {"source": "codeforces", "task_type": "verifiable_code", "in_source_id": pid,
                "problem_statement": statement, "gold_standard_solution": gold, "problem_id": pid,
                "metadata": {"difficulty": "10", "memory_limit": "256 megabytes", "memory_limit_bytes": 256 << 20,
                             "problem_url": None, "time_limit": "2 seconds"},
                "verification_info": {"language": "python", "test_cases": cases}}

    call_cases = CALL_INFO["test_cases"]
    rows = [row("1", STATEMENT, GOLD, [{**CASE, "fn_name": None}]),
            row("2", "Write count_pairs(xs, target).", CALL_GOLD, call_cases),
            row("3", STATEMENT + " (copy)", WRONG_GOLD, [{**CASE, "fn_name": None}])]
    src = write_parquet(tmp_path / "train-00000-of-00001.parquet", rows, schema=schema)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out", "--test_ratio", "0", "--verify",
            "--workers", "2")
    by_id, stats = labels_by_id(tmp_path / "out")
    assert stats["rows_read"] == 3 and stats["rows_written"] == 2
    assert stats["dropped"] == {"verify_all_failed": 1}  # the wrong gold solution fails the real case
    assert stats["verify"]["problems_kept"] == 2 and stats["verify"]["cases_kept"] == 3
    assert by_id["1"][1].tests[0]["output"] == CASE["output"] and by_id["1"][1].ref_time_s is not None
    assert by_id["2"][1].format == "call" and len(by_id["2"][1].tests) == 2
    report = {r["source_id"]: r for r in read_jsonl(tmp_path / "out" / "verify.jsonl")}
    assert report["3"]["kept"] is False and [d.split(":")[0] for d in report["3"]["dropped"]] == ["tests[0] (failed"]


def test_bad_verification_info_names_row_and_field(tmp_path):
    rows = [prime_row("a", "Q", GOLD, {"language": "python", "test_cases": [CASE]})]
    rows[0]["verification_info"] = "{'language': 'python', 'test_cases': [{'type': 'stdin_stdout', 'input': '1'"
    src = write_parquet(tmp_path / "bad.parquet", rows)
    p = run_cli("--input_dir", src, "--output_dir", tmp_path / "out", check=False)
    assert p.returncode == 2
    assert "row 0" in p.stderr and "verification_info" in p.stderr and "neither JSON nor a Python literal" in p.stderr
    # genesys and rllm read the cell with ast.literal_eval: a Python-literal spelling is read like JSON
    rows[0]["verification_info"] = repr({"language": "python", "test_cases": [CASE]})
    write_parquet(src, rows)
    run_cli("--input_dir", src, "--output_dir", tmp_path / "out2", "--test_ratio", "0")
    by_id, _ = labels_by_id(tmp_path / "out2")
    assert by_id["a"][1].tests[0]["input"] == CASE["input"]
