"""Arguments, paths and ``--set`` keys are checked before the heavy imports.

Tested by behaviour, not by the clock: every rejected command runs in one fresh interpreter, and after
each one ``torch``, ``transformers`` and ``datasets`` must still be absent from ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("torch", "transformers", "datasets")

RUNNER = """
import json, sys
from unlearnkit.cli import main
heavy = {heavy!r}
results = []
for argv in json.loads(sys.argv[1]):
    code = main(argv)
    results.append([code, [m for m in heavy if m in sys.modules]])
print("RESULTS " + json.dumps(results))
"""


def _fake_model(path: Path) -> Path:
    """Passes the path checks (config.json + a safetensors file) without any weights being read."""
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    (path / "model.safetensors").write_bytes(b"")
    return path


@pytest.fixture(scope="module")
def rejected(tmp_path_factory, mini_world):
    root = tmp_path_factory.mktemp("validation")
    model = str(_fake_model(root / "model"))
    world = str(mini_world)
    out = str(root / "out")
    existing = root / "existing"
    existing.mkdir()
    (existing / "x").write_text("x")
    recipe = root / "recipe.yaml"
    recipe.write_text("method: npo\nlr: 1e-5\nbetta: 0.1\n")
    u = ["unlearn", "--model", model, "--data", world, "--output", out]
    cases = {
        "flag typo": ["unlearn", "--methd", "ga"],
        "unknown method": [*u, "--method", "asuu"],
        "--set key typo": [*u, "--method", "npo", "--set", "bta=0.1"],
        "--set value out of range": [*u, "--method", "asu", "--set", "tau=-1"],
        "--set value of the wrong type": [*u, "--method", "ga", "--set", "epochs=many"],
        "recipe key typo": [*u, "--config", str(recipe)],
        "adapter reference without LoRA": [*u, "--method", "npo", "--set", "reference=adapter"],
        "output exists": [*u[:-1], str(existing), "--method", "ga"],
        "model folder missing": ["unlearn", "--model", "./no/such/model", "--data", world, "--output", out]
        + ["--method", "ga"],
        "data folder missing": ["unlearn", "--model", model, "--data", "./no/such/data", "--output", out]
        + ["--method", "ga"],
        "unknown benchmark split": [*u[:3], "--data", "tofu:forget99", *u[5:], "--method", "ga"],
        "finetune --set typo": ["finetune", "--data", world, "--output", out, "--set", "epoch=3"],
        "finetune model missing": ["finetune", "--data", world, "--output", out, "--model", "./nothere"],
        "eval --retain-model missing": ["eval", "--model", model, "--data", world, "--output", out]
        + ["--retain-model", "./nothere"],
        "eval --max-items 0": [
            "eval",
            "--model",
            model,
            "--data",
            world,
            "--output",
            out,
            "--max-items",
            "0",
        ],
        "continual too many requests": ["continual", "--model", model, "--data", world, "--method", "npo"]
        + ["--output", out, "--requests", "999"],
        "attribute bad selection": ["attribute", "--model", model, "--data", world, "--output", out]
        + ["--set", "selection=maybe"],
        "audit model missing": ["audit", "--model", "./nothere", "--data", world, "--output", out],
        "audit bad relearn steps": ["audit", "--model", model, "--data", world, "--output", out]
        + ["--relearn-steps", "five"],
        "quickstart too few authors": ["quickstart", "--authors", "1", "--output", out],
        "quickstart output exists": ["quickstart", "--methods", "ga", "--output", str(existing)],
        "world bad facts": ["world", "--output", out, "--facts", "0"],
        # 13.9: never sent to the Hub, and no minute of retries when it is unreachable
        "typo of a local model folder": ["eval", "--model", "modl", "--data", world, "--output", out],
        "under a local folder": ["eval", "--model", "inputs/model", "--data", world, "--output", out],
        "hub id, hub unreachable": [
            "eval",
            "--model",
            "someorg/some-model",
            "--data",
            world,
            "--output",
            out,
        ],
    }
    (root / "inputs").mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER.format(heavy=HEAVY), json.dumps(list(cases.values()))],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
        # a closed local port: the hub "unreachable" at once, whatever the network here
        env={**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "0"},
    )
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULTS ")), None)
    assert line is not None, proc.stderr[-3000:]
    results = dict(zip(cases, json.loads(line[len("RESULTS ") :]), strict=True))
    errors = [x for x in proc.stderr.splitlines() if x.strip()]
    return results, errors, Path(out)


def test_every_rejected_argument_exits_before_torch_transformers_datasets(rejected):
    results, errors, out = rejected
    for name, (code, loaded) in results.items():
        assert code == 2, f"{name}: exit code {code}"
        assert loaded == [], f"{name}: rejected only after importing {loaded}"
    assert not out.exists()
    # one line each, all of them prefixed (no traceback, no third-party warning)
    assert len(errors) == len(results), errors
    assert all(x.startswith("unlearnkit: error: ") for x in errors), errors


def test_the_lines_name_what_was_wrong(rejected):
    _, errors, _ = rejected
    text = "\n".join(errors)
    for expected in ("bta", "tau", "epochs", "betta", "reference='adapter'", "./no/such/model", "forget99"):
        assert expected in text, expected
    assert "--model modl: folder does not exist; did you mean model?" in text
    assert "--model inputs/model: folder does not exist" in text
    assert "--model someorg/some-model: no such local folder, and the Hugging Face Hub" in text
    assert "not reachable" in text


def test_the_cli_check_and_the_registry_read_the_same_declaration():
    """``--method`` is checked against :mod:`unlearnkit.catalog` without torch; training reads the same
    declaration (the registry imports each step), so the two cannot disagree on a name or a class."""
    from unlearnkit import catalog
    from unlearnkit.commands.settings_doc import method_config
    from unlearnkit.train.methods import METHODS

    assert list(METHODS) == list(catalog.METHODS)
    for name, method in METHODS.items():
        spec = catalog.METHODS[name]
        assert method_config(name) is spec.config is method.config, name
        assert method.step.__name__ == spec.step.partition(":")[2], name
        assert method.step.__module__ == f"unlearnkit.objectives.{spec.step.partition(':')[0]}", name


def test_named_benchmark_with_the_hub_unreachable_uses_the_cache_only(tmp_path):
    """No data root and no network: one probe, then datasets in offline mode (no minute of retries)."""
    model = str(_fake_model(tmp_path / "model"))
    argv = ["eval", "--model", model, "--data", "tofu:forget01", "--output", str(tmp_path / "out")]
    code = "import sys\nfrom unlearnkit.cli import main\nprint('RC', main(sys.argv[1:]))"
    env = {k: v for k, v in os.environ.items() if k not in ("UNLEARNKIT_DATA_ROOT", "HF_DATASETS_OFFLINE")}
    env.update(
        HF_ENDPOINT="http://127.0.0.1:9", HF_HUB_OFFLINE="0", HF_DATASETS_CACHE=str(tmp_path / "cache")
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=300, env=env
    )
    assert "RC 2" in proc.stdout, proc.stderr[-2000:]
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "could not load locuslab/TOFU" in err[0] and "Offline" in err[0], err
