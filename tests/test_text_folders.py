"""Raw-text benchmark folders (MUSE-like, WMDP-like, plain passages): loading, bad rows, and the
commands (``eval --protocol muse|wmdp``, ``unlearn``) on them through the code the named benchmarks use.

``tests/fixtures/mini_muse`` and ``tests/fixtures/mini_wmdp`` are hand-written folders in the layout
``unlearnkit world`` writes (``unlearnkit.data.sources`` documents it).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from unlearnkit.cli import main
from unlearnkit.data import Benchmark, load_benchmark
from unlearnkit.data.sources import SourceBenchmark, resolve_data
from unlearnkit.errors import UserError

FIXTURES = Path(__file__).parent / "fixtures"
MINI_MUSE = FIXTURES / "mini_muse"
MINI_WMDP = FIXTURES / "mini_wmdp"


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def copy_of(tmp_path):
    """A writable copy of a fixture folder."""

    def make(src: Path) -> Path:
        dst = tmp_path / src.name
        shutil.copytree(src, dst)
        return dst

    return make


# --- loading ---------------------------------------------------------------------------------


def test_wmdp_like_folder_is_text_plus_multiple_choice_sets():
    bench = load_benchmark(MINI_WMDP)
    assert type(bench) is SourceBenchmark and bench.kind == "text" and bench.name == "mini-wmdp"
    assert [r["text"] for r in bench.forget] == [r["text"] for r in _rows(MINI_WMDP / "forget.jsonl")]
    assert all(set(r) <= {"text", "entity", "_line"} for r in bench.forget + bench.retain)
    assert list(bench.mc_tasks) == ["wmdp_hazard", "mmlu_general"] and bench.mc_style == "cloze"
    assert bench.mc_tasks["wmdp_hazard"][1]["answer"] == 1 and bench.mc_tasks["wmdp_hazard"][1]["_line"] == 2
    assert bench.extra == {} and bench.holdout == [] and not bench.has_eval_fields
    assert bench.provenance["mc.mmlu_general"] == f"local:{(MINI_WMDP / 'mc_general.jsonl').resolve()}"
    assert resolve_data(str(MINI_WMDP)).mc_tasks == bench.mc_tasks  # --data DIR goes the same way


def test_plain_text_folder_without_benchmark_json(tmp_path):
    _write(tmp_path / "forget.jsonl", [{"text": "The pier was closed."}, {"text": "An owl was seen."}])
    _write(tmp_path / "retain.jsonl", [{"text": "A library opened."}])
    bench = resolve_data(tmp_path)
    assert type(bench) is SourceBenchmark and bench.kind == "text" and bench.name == ""
    assert len(bench.forget) == 2 and bench.holdout == [] and bench.extra == {} and bench.mc_tasks == {}
    _write(tmp_path / "holdout.jsonl", [{"text": "A frost came late."}])
    assert resolve_data(tmp_path).holdout[0]["text"] == "A frost came late."


def test_qa_folders_load_as_before(mini_world, tmp_path):
    """No benchmark.json, or kind qa / tofu: the TOFU-like loader, unchanged."""
    plain = load_benchmark(mini_world, eval_fields=True)
    assert type(plain) is Benchmark and plain.has_eval_fields
    shutil.copytree(mini_world, tmp_path / "w")
    for kind in ("qa", "tofu"):
        (tmp_path / "w" / "benchmark.json").write_text(json.dumps({"kind": kind}))
        bench = load_benchmark(tmp_path / "w", eval_fields=True)
        assert type(bench) is Benchmark and bench.forget == plain.forget and bench.general == plain.general


def _set_line(path: Path, line: int, change) -> None:
    rows = _rows(path)
    change(rows[line - 1])
    _write(path, rows)


BAD_MUSE = {
    "empty text": ("forget.jsonl", 2, lambda r: r.update(text=" "), "forget.jsonl:2: field 'text' must be"),
    "no text": ("holdout.jsonl", 3, lambda r: r.pop("text"), "holdout.jsonl:3: field 'text' must be"),
    "no gt": ("verbmem.jsonl", 1, lambda r: r.pop("gt"), "verbmem.jsonl:1: field 'gt' must be"),
    "answer not str": (
        "knowmem_retain.jsonl",
        3,
        lambda r: r.update(answer=3),
        "knowmem_retain.jsonl:3: field 'answer' must be",
    ),
    "QA row": (
        "retain.jsonl",
        1,
        lambda r: r.clear() or r.update(question="q", answer="a"),
        "retain.jsonl:1",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_MUSE))
def test_bad_rows_of_a_muse_like_folder_name_file_and_line(copy_of, case):
    file, line, change, message = BAD_MUSE[case]
    folder = copy_of(MINI_MUSE)
    _set_line(folder / file, line, change)
    with pytest.raises(UserError, match=message):
        resolve_data(folder)


BAD_MC = {
    "choices not a list": (
        2,
        lambda r: r.update(choices="the heart"),
        "field 'choices' must be a list of >= 2",
    ),
    "one choice": (2, lambda r: r.update(choices=["the heart"]), "field 'choices' must be a list of >= 2"),
    "choice not str": (2, lambda r: r.update(choices=["a", 2, "c", "d"]), "field 'choices' must be a list"),
    "answer out of range": (
        2,
        lambda r: r.update(answer=4),
        r"'answer' must be the index .*\(0\.\.3\), got 4",
    ),
    "answer bool": (2, lambda r: r.update(answer=True), "'answer' must be the index"),
    "answer missing": (2, lambda r: r.pop("answer"), "'answer' must be the index"),
    "no question": (2, lambda r: r.pop("question"), "field 'question' must be a non-empty string"),
}


@pytest.mark.parametrize("case", sorted(BAD_MC))
def test_bad_multiple_choice_rows_name_file_and_line(copy_of, case):
    line, change, message = BAD_MC[case]
    folder = copy_of(MINI_WMDP)
    _set_line(folder / "mc_hazard.jsonl", line, change)
    with pytest.raises(UserError, match=f"mc_hazard.jsonl:{line}: {message}"):
        resolve_data(folder)


def _manifest(folder: Path, **changes) -> None:
    data = json.loads((folder / "benchmark.json").read_text())
    data.update(changes)
    (folder / "benchmark.json").write_text(json.dumps({k: v for k, v in data.items() if v is not None}))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: _manifest(f, kind="poems"), r"benchmark.json: 'kind' is 'poems'; use one of"),
        (lambda f: _manifest(f, kind=None), r"benchmark.json: 'kind' is missing"),
        (lambda f: (f / "benchmark.json").write_text("{kind: wmdp}"), r"benchmark.json: invalid JSON"),
        (lambda f: _manifest(f, tasks=None), r'benchmark.json: a WMDP-like folder needs "tasks"'),
        (lambda f: _manifest(f, tasks={"t": "nope.jsonl"}), r"nope.jsonl is missing: .*task t"),
        (lambda f: _manifest(f, tasks={"bad name": "mc_hazard.jsonl"}), r"task name 'bad name'"),
        (lambda f: _manifest(f, mc_style="words"), r"'mc_style' is 'words'; use one of letters, cloze"),
        (lambda f: (f / "forget.jsonl").unlink(), r"forget.jsonl is missing: a WMDP-like folder needs it"),
        (lambda f: (f / "retain.jsonl").write_text(""), r"retain.jsonl is empty"),
    ],
)
def test_bad_wmdp_like_folders_are_one_line_errors(copy_of, change, message):
    folder = copy_of(MINI_WMDP)
    change(folder)
    with pytest.raises(UserError, match=message) as err:
        resolve_data(folder)
    assert "\n" not in str(err.value)


def test_letters_style_needs_the_same_number_of_choices(copy_of):
    folder = copy_of(MINI_WMDP)
    _set_line(folder / "mc_general.jsonl", 3, lambda r: r.update(choices=r["choices"][:3]))
    assert len(resolve_data(folder).mc_tasks["mmlu_general"][2]["choices"]) == 3  # cloze: any number
    _manifest(folder, mc_style="letters")
    with pytest.raises(UserError, match="mc_general.jsonl:3: every row needs the same number of choices"):
        resolve_data(folder)


def test_bad_plain_text_folders(tmp_path):
    _write(tmp_path / "forget.jsonl", [{"text": "The pier was closed."}])
    _write(tmp_path / "retain.jsonl", [{"text": "A library opened."}, {"question": "q?", "answer": "a"}])
    with pytest.raises(UserError, match=r"retain.jsonl:2: field 'text' must be a non-empty string"):
        resolve_data(tmp_path)
    _write(tmp_path / "retain.jsonl", [{"text": "A library opened."}])
    _write(tmp_path / "general.jsonl", [{"question": "q?", "answer": "a"}])
    with pytest.raises(
        UserError, match="general.jsonl: a raw-text folder has forget, retain and holdout only"
    ):
        resolve_data(tmp_path)


# --- the commands ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory, world_tokenizer):
    """A random model of the embedded world's tiny Llama config (256 positions), saved as a folder."""
    from unlearnkit.models import save_model
    from unlearnkit.world.tiny import tiny_llama

    model = tiny_llama(world_tokenizer, hidden=32, layers=2, heads=4)
    path = tmp_path_factory.mktemp("text_models") / "base"
    save_model(model, world_tokenizer, path, {"kind": "test model"})
    return path


def test_eval_muse_on_a_muse_like_folder(base_dir, copy_of, tmp_path, capsys):
    """VerbMem / KnowMem / PrivLeak through evaluate_muse; the oracle's own AUC as the reference (the
    same model as oracle gives PrivLeak 0 exactly); a prompt longer than the 256 positions allow
    (minus 128 new tokens) is cut, said on stderr and counted in details.json."""
    folder = copy_of(MINI_MUSE)
    _set_line(folder / "verbmem.jsonl", 2, lambda r: r.update(prompt=" ".join(["owl"] * 300)))
    out = tmp_path / "eval"
    argv = ["eval", "--model", str(base_dir), "--data", str(folder), "--protocol", "muse"]
    assert main([*argv, "--retain-model", str(base_dir), "--output", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics) == {
        "verbmem_forget_rougeL_f1",
        "knowmem_forget_rougeL_f1",
        "knowmem_retain_rougeL_f1",
        "privleak_min_k_auc",
        "privleak_reference_auc",
        "privleak",
    }
    assert metrics["privleak_reference_auc"] == metrics["privleak_min_k_auc"] and metrics["privleak"] == 0.0
    details = json.loads((out / "details.json").read_text())
    assert details["settings"]["context_length"] == 256
    cut = details["truncation"]["verbmem"]
    assert cut["limit"] == 128 and cut["cut"] == 1 and cut["of"] == 3 and cut["tokens_dropped"] > 0
    assert details["truncation"]["knowmem_forget"]["cut"] == 0
    assert details["verbmem"]["prompt_tokens_cut"][0] == 0 and details["verbmem"]["prompt_tokens_cut"][1] > 0
    assert details["data"]["rows"]["privleak_holdout"] == 3 and details["data"]["kind"] == "text"
    assert details["data"]["provenance"]["verbmem"] == f"local:{(folder / 'verbmem.jsonl').resolve()}"
    assert details["privleak_reference"]["model"] == str(base_dir)
    assert "MUSE verbmem: 1 of 3 prompts cut to 128 tokens" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--data", str(MINI_MUSE)],
            "holds raw text, which --protocol tofu cannot score; use --protocol muse",
        ),
        (["--data", str(MINI_WMDP), "--protocol", "closer-look"], "cannot score; use --protocol wmdp"),
        (["--data", str(MINI_WMDP), "--protocol", "muse"], "--protocol muse needs a MUSE benchmark"),
        (["--data", str(MINI_MUSE), "--protocol", "wmdp"], "not a WMDP-like folder"),
        (["--data", "wmdp:chem", "--protocol", "wmdp"], "use wmdp:bio or wmdp:cyber"),
    ],
)
def test_eval_protocol_and_data_must_fit(base_dir, tmp_path, capsys, argv, message):
    out = tmp_path / "eval"
    assert main(["eval", "--model", str(base_dir), *argv, "--output", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and not out.exists()


@pytest.mark.parametrize(
    ("folder", "method", "extra"),
    [
        (MINI_WMDP, "rmu", ["layer=1", "train_layers=0,1"]),
        (MINI_WMDP, "ga", []),
        (MINI_MUSE, "gd", []),
        (MINI_MUSE, "npo", []),
        (MINI_MUSE, "asu", []),
    ],
)
def test_unlearn_runs_on_raw_text_folders(base_dir, tmp_path, folder, method, extra):
    """The raw-text methods train on the folder's forget / retain passages (2 steps) and save a model
    whose weights moved and whose card names the folder."""
    from safetensors.torch import load_file

    out = tmp_path / method
    sets = [x for kv in ["max_steps=2", "batch_size=2", "lr=1e-3", *extra] for x in ("--set", kv)]
    argv = ["unlearn", "--model", str(base_dir), "--data", str(folder), "--method", method, *sets]
    assert main([*argv, "--output", str(out)]) == 0
    card = json.loads((out / "unlearnkit.json").read_text())
    assert card["data"] == str(folder) and card["method"] == method
    before, after = load_file(base_dir / "model.safetensors"), load_file(out / "model.safetensors")
    assert any(not after[k].equal(before[k]) for k in before)
