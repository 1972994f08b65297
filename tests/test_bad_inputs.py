"""Bad input anywhere on the command line: exit code 2, one line on stderr naming what and where,
no traceback, and nothing written (no output folder, no temporary or work folder next to it).

Every case runs the CLI in-process (``unlearnkit.cli.main`` returns the exit code) against a tiny
random Llama saved once for the module (validation never needs a trained model).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from unlearnkit.cli import main

SPLITS = ("forget", "retain", "holdout", "general")


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    """A miniature world and a tiny random model (built from code, saved with safetensors)."""
    from unlearnkit.data import load_benchmark
    from unlearnkit.models import save_model
    from unlearnkit.world import write_world
    from unlearnkit.world.tiny import build_tiny

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("bad_inputs")
    world = root / "world"
    write_world(
        world, n_authors=12, facts_per_author=4, forget_fraction=0.25, holdout_fraction=0.25, n_general=10
    )
    model, tokenizer = build_tiny(load_benchmark(world), seed=0)
    save_model(model, tokenizer, root / "model", {"kind": "tiny random (tests)"})
    return root


@dataclass
class Ctx:
    world: Path
    model: Path
    out: Path  # the --output of the command; its parent must stay as it was
    inputs: Path  # bad files and folders are made here

    def data(self, edit: Callable[[dict[str, list]], None] | None = None, raw: dict | None = None) -> Path:
        """A copy of the world with ``edit(rows_by_split)`` applied, or ``raw`` {file: bytes | None}."""
        path = self.inputs / f"data{len(list(self.inputs.iterdir()))}"
        shutil.copytree(self.world, path)
        if edit is not None:
            rows = {
                s: [json.loads(x) for x in (path / f"{s}.jsonl").read_text().splitlines()] for s in SPLITS
            }
            edit(rows)
            for s, items in rows.items():
                (path / f"{s}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
        for name, content in (raw or {}).items():
            if content is None:
                (path / name).unlink()
            else:
                (path / name).write_bytes(content)
        return path

    def model_copy(self, edit: Callable[[Path], None]) -> Path:
        path = self.inputs / f"model{len(list(self.inputs.iterdir()))}"
        shutil.copytree(self.model, path)
        edit(path)
        return path

    def file(self, name: str, text: str) -> Path:
        path = self.inputs / name
        path.write_text(text)
        return path


def unlearn(c: Ctx, *extra: str, method: str = "npo", data: Path | None = None, model: Path | None = None):
    return [
        "unlearn",
        "--model",
        str(model or c.model),
        "--data",
        str(data or c.world),
        "--method",
        method,
        "--output",
        str(c.out),
        *extra,
    ]


def finetune(c: Ctx, *extra: str, data: Path | None = None):
    return ["finetune", "--data", str(data or c.world), "--output", str(c.out), *extra]


def evaluate(c: Ctx, *extra: str, data: Path | None = None, model: Path | None = None):
    return [
        "eval",
        "--model",
        str(model or c.model),
        "--data",
        str(data or c.world),
        "--output",
        str(c.out),
        *extra,
    ]


def attribute(c: Ctx, *extra: str):
    return ["attribute", "--model", str(c.model), "--data", str(c.world), "--output", str(c.out), *extra]


def audit(c: Ctx, *extra: str):
    return ["audit", "--model", str(c.model), "--data", str(c.world), "--output", str(c.out), *extra]


def world(c: Ctx, *extra: str):
    return ["world", "--output", str(c.out), *extra]


def quickstart(c: Ctx, *extra: str):
    return ["quickstart", "--output", str(c.out), "--cache-dir", str(c.out.parent / "cache"), *extra]


# --- edits --------------------------------------------------------------------------------------


def _set(split: str, line: int, **fields):
    def edit(rows):
        rows[split][line - 1].update(fields)

    return edit


def _drop(split: str, line: int, key: str):
    def edit(rows):
        del rows[split][line - 1][key]

    return edit


def _long_answer(rows):
    rows["forget"][1]["answer"] = " ".join(["Gilie wrote many novels"] * 40)


def _no_eos(path: Path):
    cfg = json.loads((path / "tokenizer_config.json").read_text())
    cfg.pop("eos_token", None)
    cfg.pop("pad_token", None)
    (path / "tokenizer_config.json").write_text(json.dumps(cfg))


def _pickle_only(path: Path):
    (path / "model.safetensors").rename(path / "pytorch_model.bin")


def _stale_checkpoint(c: Ctx) -> None:
    ckpt = c.out.parent / f".{c.out.name}.checkpoints" / "checkpoint-2"
    ckpt.mkdir(parents=True)
    (ckpt / "trainer_state.json").write_text("{}")


def _output_not_empty(c: Ctx) -> None:
    c.out.mkdir()
    (c.out / "keep.txt").write_text("a user's file")


def _output_is_file(c: Ctx) -> None:
    c.out.write_text("a user's file")


# (id, argv builder, expected phrase in the one stderr line, optional setup of the run folder)
CASES: list[tuple[str, Callable[[Ctx], list[str]], str, Callable[[Ctx], None] | None]] = [
    # world
    ("world-authors-range", lambda c: world(c, "--authors", "2"), "--authors must be an integer in [3", None),
    (
        "world-fraction-range",
        lambda c: world(c, "--forget-fraction", "1.5"),
        "--forget-fraction must be",
        None,
    ),
    (
        "world-no-retain-left",
        lambda c: world(c, "--authors", "4", "--forget-fraction", "0.5", "--holdout-fraction", "0.5"),
        "leave no retain author",
        None,
    ),
    ("world-output-not-empty", lambda c: world(c), "pass --overwrite", _output_not_empty),
    ("world-bad-flag-type", lambda c: world(c, "--authors", "many"), "invalid int value", None),
    # finetune
    ("finetune-epochs-zero", lambda c: finetune(c, "--set", "epochs=0"), "epochs=0.0 is invalid", None),
    ("finetune-unknown-key", lambda c: finetune(c, "--set", "lrr=1e-3"), "did you mean 'lr'", None),
    ("finetune-bad-split", lambda c: finetune(c, "--split", "forget"), "invalid choice", None),
    (
        "finetune-too-long",
        lambda c: finetune(c, "--set", "max_length=12"),
        "forget.jsonl:1: question + answer is",
        None,
    ),
    (
        "finetune-data-missing",
        lambda c: finetune(c, data=c.inputs / "nowhere"),
        "is not a folder",
        None,
    ),
    # unlearn: recipe and --set
    (
        "unlearn-unknown-method",
        lambda c: unlearn(c, method="nppo"),
        "unknown method; did you mean 'npo'",
        None,
    ),
    ("unlearn-unknown-key", lambda c: unlearn(c, "--set", "tua=2", method="asu"), "did you mean 'tau'", None),
    ("unlearn-tau-zero", lambda c: unlearn(c, "--set", "tau=0", method="asu"), "tau=0.0 is invalid", None),
    (
        "unlearn-lr-negative",
        lambda c: unlearn(c, "--set", "lr=-1e-5"),
        "lr=-1e-05 is invalid: must be > 0",
        None,
    ),
    ("unlearn-r-zero", lambda c: unlearn(c, "--set", "r=0", method="t-npo"), "r=0.0 is invalid", None),
    (
        "unlearn-alpha-above-1",
        lambda c: unlearn(c, "--set", "alpha=1.5", method="t-npo"),
        "alpha=1.5 is invalid",
        None,
    ),
    ("unlearn-not-a-number", lambda c: unlearn(c, "--set", "lr=fast"), "expected a number", None),
    ("unlearn-set-no-equals", lambda c: unlearn(c, "--set", "lr"), "expected key=value", None),
    (
        "unlearn-recipe-bad-yaml",
        lambda c: unlearn(c, "--config", str(c.file("r.yaml", "lr: [1e-5\n"))),
        "invalid YAML",
        None,
    ),
    (
        "unlearn-recipe-unknown-key",
        lambda c: unlearn(c, "--config", str(c.file("r.yaml", "lr: 1e-5\nepoch: 3\n"))),
        "r.yaml: unknown key 'epoch' for this method; did you mean 'epochs'",
        None,
    ),
    (
        "unlearn-recipe-missing",
        lambda c: unlearn(c, "--config", str(c.inputs / "no.yaml")),
        "does not exist",
        None,
    ),
    ("unlearn-save-every-negative", lambda c: unlearn(c, "--save-every", "-1"), "--save-every -1", None),
    # unlearn: data files
    (
        "data-not-utf8",
        lambda c: unlearn(c, data=c.data(raw={"forget.jsonl": b'{"question": "caf\xe9"}\n'})),
        "forget.jsonl is not UTF-8",
        None,
    ),
    (
        "data-invalid-json-line-3",
        lambda c: unlearn(
            c, data=c.data(raw={"retain.jsonl": b'{"question": "q", "answer": "a"}\n\n{"question":\n'})
        ),
        "retain.jsonl:3: invalid JSON",
        None,
    ),
    (
        "data-not-an-object",
        lambda c: unlearn(c, data=c.data(raw={"forget.jsonl": b'["a question", "an answer"]\n'})),
        "forget.jsonl:1: expected a JSON object",
        None,
    ),
    (
        "data-missing-answer",
        lambda c: unlearn(c, data=c.data(_drop("forget", 2, "answer"))),
        "forget.jsonl:2: missing field 'answer'",
        None,
    ),
    (
        "data-empty-question",
        lambda c: unlearn(c, data=c.data(_set("retain", 5, question="  "))),
        "retain.jsonl:5: field 'question' must be a non-empty string",
        None,
    ),
    (
        "data-perturbed-not-a-list",
        lambda c: unlearn(c, data=c.data(_set("forget", 4, perturbed_answer="a string"))),
        "forget.jsonl:4: 'perturbed_answer' must be a non-empty list",
        None,
    ),
    (
        "data-perturbed-empty",
        lambda c: evaluate(c, data=c.data(_set("holdout", 1, perturbed_answer=[]))),
        "holdout.jsonl:1: 'perturbed_answer' must be a non-empty list",
        None,
    ),
    (
        "data-forget-empty",
        lambda c: unlearn(c, data=c.data(raw={"forget.jsonl": b"\n"})),
        "nothing to forget",
        None,
    ),
    (
        "data-retain-missing",
        lambda c: unlearn(c, data=c.data(raw={"retain.jsonl": None})),
        "retain.jsonl is missing",
        None,
    ),
    (
        "data-answer-too-long",
        lambda c: unlearn(c, "--set", "max_length=64", data=c.data(_long_answer)),
        "forget.jsonl:2: question + answer is",
        None,
    ),
    # unlearn: model folder, output, work folder
    ("model-missing", lambda c: unlearn(c, model=c.inputs / "no_model"), "folder does not exist", None),
    (
        "model-no-config",
        lambda c: unlearn(c, model=c.model_copy(lambda p: (p / "config.json").unlink())),
        "no config.json",
        None,
    ),
    (
        "model-config-not-json",
        lambda c: unlearn(c, model=c.model_copy(lambda p: (p / "config.json").write_text("{llama"))),
        "config.json is not valid JSON",
        None,
    ),
    (
        "model-no-weights",
        lambda c: unlearn(c, model=c.model_copy(lambda p: (p / "model.safetensors").unlink())),
        "no *.safetensors weights",
        None,
    ),
    (
        "model-pickle-only",
        lambda c: unlearn(c, model=c.model_copy(_pickle_only)),
        "only pickle weights",
        None,
    ),
    (
        "tokenizer-no-eos",
        lambda c: unlearn(c, model=c.model_copy(_no_eos)),
        "the tokenizer has no EOS token",
        None,
    ),
    (
        "hub-id-offline",
        lambda c: unlearn(c, model=Path("some-org/not-cached-model")),
        "HF_HUB_OFFLINE=1",
        None,
    ),
    ("unlearn-output-not-empty", lambda c: unlearn(c), "pass --overwrite", _output_not_empty),
    ("unlearn-output-is-file", lambda c: unlearn(c), "is a file", _output_is_file),
    ("unlearn-stale-checkpoints", lambda c: unlearn(c), "pass --resume to continue it", _stale_checkpoint),
    (
        "unlearn-adapter-without-lora",
        lambda c: unlearn(c, "--set", "reference=adapter", method="t-npo"),
        "needs LoRA",
        None,
    ),
    # eval
    ("eval-max-new-tokens", lambda c: evaluate(c, "--max-new-tokens", "0"), "--max-new-tokens 0", None),
    (
        "eval-retain-model-missing",
        lambda c: evaluate(c, "--retain-model", str(c.inputs / "x")),
        "does not exist",
        None,
    ),
    (
        "eval-retain-model-no-ratios",
        lambda c: evaluate(c, "--retain-model", str(c.file("details.json", '{"forget": {}}'))),
        "no per-item forget truth ratios",
        None,
    ),
    (
        "eval-original-model-without-oracle",
        lambda c: evaluate(c, "--original-model", str(c.model)),
        "--original-model needs --retain-model",
        None,
    ),
    (
        "eval-original-model-missing",
        lambda c: evaluate(c, "--retain-model", str(c.model), "--original-model", str(c.inputs / "x")),
        "--original-model",
        None,
    ),
    (
        "eval-original-model-eval-without-fq",
        lambda c: evaluate(
            c, "--retain-model", str(c.model), "--original-model", str(c.file("metrics.json", "{}"))
        ),
        "no forget_quality",
        None,
    ),
    (
        "eval-fields-on-some-rows",
        lambda c: evaluate(c, data=c.data(_drop("retain", 3, "perturbed_answer"))),
        "retain.jsonl:3: missing field 'perturbed_answer' although other rows",
        None,
    ),
    (
        "eval-retain-model-without-fields",
        lambda c: evaluate(
            c,
            "--retain-model",
            str(c.model),
            data=c.data(lambda rows: [r.pop("perturbed_answer") for r in rows["forget"]]),
        ),
        "--retain-model needs truth ratios",
        None,
    ),
    # attribute
    (
        "attribute-r-above-1",
        lambda c: attribute(c, "--set", "r=1.5"),
        "r=1.5 is invalid: must be in (0, 1]",
        None,
    ),
    (
        "attribute-bad-tagger",
        lambda c: attribute(c, "--set", "tagger=nltk"),
        "tagger='nltk' is invalid",
        None,
    ),
    # audit
    (
        "audit-relearn-steps",
        lambda c: audit(c, "--relearn-steps", "5,x"),
        "expected comma-separated integers",
        None,
    ),
    (
        "audit-retain-model-missing",
        lambda c: audit(c, "--retain-model", str(c.inputs / "oracle")),
        "--retain-model",
        None,
    ),
    # quickstart
    (
        "quickstart-unknown-method",
        lambda c: quickstart(c, "--methods", "asu,gradient"),
        "unknown method",
        None,
    ),
    ("quickstart-no-methods", lambda c: quickstart(c, "--methods", ","), "--methods is empty", None),
    ("quickstart-authors", lambda c: quickstart(c, "--authors", "1"), "--authors must be an integer", None),
    ("quickstart-output-is-file", lambda c: quickstart(c), "is a file", _output_is_file),
]


def _snapshot(folder: Path) -> dict[str, int]:
    """Every path under ``folder`` (hidden ones included) with its size: 'nothing written' means equal."""
    return {str(p.relative_to(folder)): (p.stat().st_size if p.is_file() else -1) for p in folder.rglob("*")}


@pytest.mark.parametrize("build, phrase, setup", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
    assets, tmp_path, capsys, monkeypatch, build, phrase, setup
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    run = tmp_path / "run"
    run.mkdir()
    ctx = Ctx(world=assets / "world", model=assets / "model", out=run / "out", inputs=inputs)
    if setup is not None:
        setup(ctx)
    argv = build(ctx)
    before = _snapshot(run)
    capsys.readouterr()

    code = main(argv)

    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert "Traceback" not in err
    assert len(lines) == 1, err
    assert lines[0].startswith("unlearnkit: error: ")
    assert phrase in lines[0], lines[0]
    assert _snapshot(run) == before  # no output, no .out.tmp-*, no .out.checkpoints, no .out.work


def test_table_is_large_and_covers_every_command():
    assert len(CASES) >= 25
    assert len({c[0] for c in CASES}) == len(CASES)
    prefixes = {c[0].split("-")[0] for c in CASES}
    assert {"world", "finetune", "unlearn", "eval", "attribute", "audit", "quickstart"} <= prefixes


def test_overlap_between_forget_and_retain_is_one_warning_line(assets, tmp_path, capsys):
    """Not an error: one warning line naming both files and lines, and the run goes on."""
    from unlearnkit.data import load_benchmark
    from unlearnkit.data.qa import overlap_warning

    torch.set_num_threads(1)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    data = Ctx(assets / "world", assets / "model", tmp_path / "o", inputs).data(
        lambda rows: rows["retain"].append(dict(rows["forget"][2]))
    )
    warning = overlap_warning(load_benchmark(data))
    assert warning is not None and "1 of 12 forget questions" in warning
    assert "forget.jsonl:3" in warning and "retain.jsonl:25" in warning
    out = tmp_path / "out"
    argv = ["unlearn", "--model", str(assets / "model"), "--data", str(data), "--method", "ga"]
    argv += ["--output", str(out), "--set", "max_steps=1", "--set", "batch_size=4", "--set", "grad_accum=1"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if "warning" in line] == [f"unlearnkit: warning: {warning}"]
    assert (out / "model.safetensors").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inputs", "out"]  # work folder gone


def test_tokenizer_without_pad_token_falls_back_to_eos(assets, tmp_path):
    from unlearnkit.models import load_tokenizer

    path = tmp_path / "m"
    shutil.copytree(assets / "model", path)
    cfg = json.loads((path / "tokenizer_config.json").read_text())
    cfg.pop("pad_token")
    (path / "tokenizer_config.json").write_text(json.dumps(cfg))
    tok = load_tokenizer(str(path))
    assert tok.pad_token == tok.eos_token and tok.pad_token_id == tok.eos_token_id


def test_help_and_bad_flags_return_instead_of_exiting(capsys):
    assert main(["--help"]) == 0
    assert main(["unlearn", "--no-such-flag"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_an_error_after_the_work_folder_exists_still_leaves_nothing(assets, tmp_path, capsys, monkeypatch):
    """A UserError raised inside ``unlearn()`` (after token scores were cached in the work folder):
    exit 2, and the work folder is removed because it holds no checkpoint."""
    import unlearnkit.pipelines.unlearn as U
    from unlearnkit.errors import UserError

    def refuse(*args, **kwargs):
        raise UserError("reference: simulated late failure")

    monkeypatch.setattr(U, "setup_reference", refuse)
    torch.set_num_threads(1)
    out = tmp_path / "run" / "out"
    out.parent.mkdir()
    argv = ["unlearn", "--model", str(assets / "model"), "--data", str(assets / "world"), "--method", "t-npo"]
    code = main(argv + ["--output", str(out), "--set", "max_steps=1"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == "unlearnkit: error: reference: simulated late failure"
    assert list(out.parent.iterdir()) == []


def test_eval_without_truth_ratio_fields_runs_and_says_so(assets, tmp_path, capsys):
    """Not an error: eval works without paraphrased/perturbed answers and says what it skips."""
    torch.set_num_threads(1)
    inputs = tmp_path / "inputs"
    inputs.mkdir()

    def strip(rows):
        for split in rows.values():
            for r in split:
                r.pop("paraphrased_answer")
                r.pop("perturbed_answer")

    data = Ctx(assets / "world", assets / "model", tmp_path / "o", inputs).data(strip)
    out = tmp_path / "eval"
    argv = ["eval", "--model", str(assets / "model"), "--data", str(data), "--output", str(out)]
    assert main(argv + ["--max-new-tokens", "2", "--max-items", "3"]) == 0
    notes = [x for x in capsys.readouterr().err.splitlines() if x.startswith("unlearnkit: note:")]
    assert len(notes) == 1 and "truth ratios are not computed" in notes[0] and "forget quality" in notes[0]
    metrics = json.loads((out / "metrics.json").read_text())
    assert "forget_truth_ratio" not in metrics and "forget_rougeL_recall" in metrics


def test_finetune_failure_during_training_removes_its_work_folder(assets, tmp_path, capsys, monkeypatch):
    import unlearnkit.train.finetune as F

    def crash(model, tokenizer, rows, cfg, work_dir, **kwargs):
        Path(work_dir, "checkpoint-1").mkdir(parents=True)
        raise RuntimeError("simulated crash in training")

    monkeypatch.setattr(F, "finetune", crash)
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(RuntimeError, match="simulated crash"):
        main(["finetune", "--data", str(assets / "world"), "--output", str(run / "target")])
    assert list(run.iterdir()) == []
