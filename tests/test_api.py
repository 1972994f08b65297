"""The Python API (docs/API.md): every example there and in the README's "Unlearn your own model" runs as
written, the same model folder gets the same settings (and the same weights) from Python as from
``unlearnkit unlearn``, ``save()`` writes what the command writes, and bad input is an ``ArgumentError``
naming the argument.

The examples run in a sandbox holding ``bench`` (the miniature world), ``target`` (a tiny random Llama
whose card records the tiny-model recipe, as ``finetune --model tiny`` writes it) and ``oracle``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from unlearnkit.errors import ArgumentError

REPO = Path(__file__).resolve().parent.parent


def python_blocks(path: Path, section: str | None = None) -> list[str]:
    """The ```python blocks of ``path`` (of its ``## section`` only, when given)."""
    text = path.read_text(encoding="utf-8")
    if section is not None:
        text = text.split(section, 1)[1].split("\n## ", 1)[0]
    return [m.group(1) for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M)]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory, mini_world, world_tokenizer):
    from tiny_models import random_llama

    from unlearnkit.models import save_model
    from unlearnkit.pipelines.quickstart import tiny_unlearn_defaults

    root = tmp_path_factory.mktemp("api")
    shutil.copytree(mini_world, root / "bench")
    for name, seed in (("target", 0), ("oracle", 1)):
        # 512 positions: room for MUSE's 128-token VerbMem continuations after a prompt (rotary
        # positions: the weights are those of the default 128)
        model = random_llama(
            world_tokenizer,
            hidden=32,
            kv_heads=4,
            seed=seed,
            tie_word_embeddings=True,
            max_position_embeddings=512,
        )
        card = {"kind": "test model"}
        if name == "target":
            card["unlearn_defaults"] = tiny_unlearn_defaults(128)
        save_model(model, world_tokenizer, root / name, card)
    return root


@pytest.fixture
def in_sandbox(sandbox, tmp_path, monkeypatch):
    """A fresh working folder with the sandbox's inputs linked in (outputs do not leak between tests)."""
    for name in ("bench", "target", "oracle"):
        (tmp_path / name).symlink_to(sandbox / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_blocks(blocks: list[str]) -> str:
    namespace: dict = {"__name__": "__docs__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in blocks:
            exec(compile(block, "<docs example>", "exec"), namespace)  # noqa: S102 - the docs' own code
    return out.getvalue()


def test_every_example_in_docs_api_runs_as_written(in_sandbox):
    blocks = python_blocks(REPO / "docs" / "API.md")
    assert len(blocks) >= 8, "docs/API.md lost its examples"
    printed = run_blocks(blocks)
    assert "unlearned (npo)" in printed
    assert "0.0005 1e-05" in printed  # the recorded recipe vs a setting given as a keyword
    assert "{'beta': 0.2, 'lr': 0.0001}" in printed
    errors = [line for line in printed.splitlines() if line.startswith(("forget[", "method=", "unlearn("))]
    assert len(errors) == 4 and not any("--" in line for line in errors), printed
    muse_keys = "'knowmem_forget_rougeL_f1', 'knowmem_retain_rougeL_f1', 'privleak_min_k_auc', 'verbmem_forget_rougeL_f1'"
    protocols = re.search(
        rf"^muse \[{muse_keys}\] wmdp \['mmlu_general_acc', 'wmdp_hazard_acc'\]$", printed, re.M
    )
    assert protocols, printed
    for folder in (
        "npo_from_python",
        "eval_npo_from_python",
        "eval_npo_muse_from_python",
        "audit_npo_from_python",
        "npo_undo_from_python",
    ):
        assert (in_sandbox / folder).is_dir(), folder


README_HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"  # the README example's model: the sandbox's target


def test_the_readme_python_example_runs_as_written_in_about_10_lines(in_sandbox):
    """README, "Unlearn your own model": a hub id and rows in memory (the hub id is a local folder here)."""
    blocks = python_blocks(REPO / "README.md", "## Unlearn your own model")
    assert len(blocks) == 1
    code = [line for line in blocks[0].splitlines() if line.strip()]
    assert len(code) <= 12 and README_HUB_ID in blocks[0]
    (in_sandbox / README_HUB_ID).parent.mkdir(parents=True)
    (in_sandbox / README_HUB_ID).symlink_to(in_sandbox / "target")
    printed = run_blocks(blocks)
    forget_rouge, retain_rouge = (float(x) for x in printed.split())
    assert 0.0 <= forget_rouge <= 1.0 and 0.0 <= retain_rouge <= 1.0
    card = json.loads((in_sandbox / "smollm2_npo" / "unlearnkit.json").read_text())
    assert card["kind"] == "unlearned (npo)"


def test_import_unlearnkit_and_the_configs_stays_torch_free():
    code = (
        "import sys, unlearnkit; from unlearnkit.methods import NPOConfig, TNPOConfig; NPOConfig(beta=0.2);"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, sorted(sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_every_registered_method_has_its_config_class_with_the_registry_defaults():
    """Checked against the torch registry (train/methods.py), which trains with these classes' defaults."""
    from unlearnkit.config import TrainConfig
    from unlearnkit.methods import class_name, config_class, configs
    from unlearnkit.train.methods import METHODS

    assert set(configs()) == set(METHODS)
    for name, method in METHODS.items():
        cls = config_class(name)
        assert cls.method == name and cls.__name__ == class_name(name)
        import unlearnkit.methods as module

        assert getattr(module, cls.__name__) is cls
        expected = {f.name: f.default for f in dataclasses.fields(TrainConfig)}
        expected |= {f.name: f.default for f in dataclasses.fields(method.config)}
        assert cls().values() == expected, name
    assert class_name("t_npo") == "TNPOConfig" and class_name("asu_kl") == "ASUKLConfig"


def test_the_methods_stub_gives_every_config_class_the_signature_it_is_built_with():
    """methods.pyi (what IDEs and type checkers read for the classes built at run time) is what the
    catalog gives now, and, parsed on its own, declares each class's keyword-only fields with the types
    and defaults the class really has."""
    import ast
    import typing

    import unlearnkit.methods as module
    from unlearnkit.methods import configs, stub_text

    text = (REPO / "src" / "unlearnkit" / "methods.pyi").read_text(encoding="utf-8")
    assert text == stub_text(), "regenerate it: python -m unlearnkit.methods > src/unlearnkit/methods.pyi"
    tree = ast.parse(text)
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert set(module.__all__) <= set(classes) | functions  # nothing public is missing for a type checker
    for cls in configs().values():
        (init,) = [n for n in classes[cls.__name__].body if isinstance(n, ast.FunctionDef)]
        fields, hints = dataclasses.fields(cls), typing.get_type_hints(cls)
        assert init.name == "__init__" and [a.arg for a in init.args.args] == ["self"]  # keywords only
        assert [a.arg for a in init.args.kwonlyargs] == [f.name for f in fields]
        assert [a.annotation.id for a in init.args.kwonlyargs] == [hints[f.name].__name__ for f in fields]
        assert [ast.literal_eval(d) for d in init.args.kw_defaults] == [f.default for f in fields]
        assert cls().values() == {f.name: f.default for f in fields}


def test_a_config_knows_which_fields_its_caller_set():
    from unlearnkit.methods import NPOConfig

    config = NPOConfig(beta=0.2, lr="1e-4")
    assert config.given() == {"beta": 0.2, "lr": 1e-4} and isinstance(config.lr, float)
    config.epochs = 2.0
    assert config.given() == {"beta": 0.2, "lr": 1e-4, "epochs": 2.0}
    assert set(dataclasses.replace(config, seed=3).given()) == set(config.values())  # documented
    with pytest.raises(TypeError):
        NPOConfig(0.2)  # keyword arguments only


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"beta": -1}, "NPOConfig: beta=-1.0 is invalid: must be > 0"),
        ({"lr": "fast"}, "NPOConfig: lr='fast': expected a number"),
        ({"reference": "adapter"}, "adapter needs LoRA"),
    ],
)
def test_a_bad_config_value_is_a_value_error_naming_the_field(kwargs, needle):
    from unlearnkit.errors import ArgumentError, UserError
    from unlearnkit.methods import NPOConfig

    with pytest.raises(ArgumentError) as err:
        NPOConfig(**kwargs)
    assert needle in str(err.value) and isinstance(err.value, ValueError) and isinstance(err.value, UserError)


def _card(folder: Path) -> dict:
    meta = json.loads((folder / "unlearnkit.json").read_text())
    meta["compute"].pop("wall_seconds")
    return meta


def test_python_and_the_command_line_train_the_same_model_folder_identically(in_sandbox, capsys):
    """The same folder, data and settings: the same resolved settings, weights and record."""
    from transformers import AutoModelForCausalLM

    from unlearnkit import unlearn
    from unlearnkit.cli import main

    assert main(["unlearn", "--model", "target", "--data", "bench", "--method", "asu", "--output", "cli",
                 "--set", "max_steps=3"]) == 0  # fmt: skip
    cli_note = [x for x in capsys.readouterr().err.splitlines() if "records" in x]
    result = unlearn("target", forget="bench", method="asu", max_steps=3)
    api_note = [x for x in capsys.readouterr().err.splitlines() if "records" in x]
    result.save("api")
    cli, api = _card(in_sandbox / "cli"), _card(in_sandbox / "api")
    assert api == cli
    assert cli["config"]["lr"] == 5e-4 and cli["config"]["tau"] == 5.0  # the recorded recipe, both sides
    assert (in_sandbox / "api" / "model.safetensors").read_bytes() == (
        in_sandbox / "cli" / "model.safetensors"
    ).read_bytes()
    assert sorted(p.name for p in (in_sandbox / "api").iterdir()) == sorted(
        p.name for p in (in_sandbox / "cli").iterdir()
    )
    assert len(cli_note) == len(api_note) == 1 and "--set KEY=VALUE" in cli_note[0]
    assert "--set" not in api_note[0] and "lr=0.0005" in api_note[0]
    # a model loaded by the caller from the same folder: the same settings
    loaded = unlearn(
        AutoModelForCausalLM.from_pretrained("target"), None, "bench", method="asu", max_steps=1, quiet=True
    )
    assert {k: v for k, v in loaded.config.items() if k != "max_steps"} == {
        k: v for k, v in result.config.items() if k != "max_steps"
    }


def test_a_token_level_method_saves_its_attribution_as_the_command_does(in_sandbox):
    from unlearnkit import unlearn
    from unlearnkit.cli import main

    settings = ["--set", "max_steps=1", "--set", "tagger=heuristic"]
    assert (
        main(
            [
                "unlearn",
                "--model",
                "target",
                "--data",
                "bench",
                "--method",
                "t-npo",
                "--output",
                "cli",
                *settings,
            ]
        )
        == 0
    )
    unlearn("target", forget="bench", method="t-npo", max_steps=1, tagger="heuristic", quiet=True).save("api")
    listing = {
        side: sorted(
            p.relative_to(in_sandbox / side).as_posix() for p in (in_sandbox / side).rglob("attribution/*")
        )
        for side in ("cli", "api")
    }
    assert listing["api"] == listing["cli"]
    assert {"attribution/heatmap.html", "attribution/scores.jsonl"} <= set(listing["cli"])
    for name in listing["cli"]:
        if name.endswith(".jsonl"):
            assert (in_sandbox / "api" / name).read_bytes() == (in_sandbox / "cli" / name).read_bytes(), name


def test_save_refuses_a_folder_that_is_not_empty_and_overwrites_when_asked(in_sandbox):
    from unlearnkit import ArgumentError, unlearn

    result = unlearn("target", forget="bench", method="ga", max_steps=1, quiet=True)
    (in_sandbox / "taken").mkdir()
    (in_sandbox / "taken" / "keep.txt").write_text("mine")
    with pytest.raises(ArgumentError, match=r"path taken already exists .* overwrite=True"):
        result.save("taken")
    assert (in_sandbox / "taken" / "keep.txt").read_text() == "mine"
    result.save("taken", overwrite=True)
    assert not (in_sandbox / "taken" / "keep.txt").exists()
    assert json.loads((in_sandbox / "taken" / "unlearnkit.json").read_text())["method"] == "ga"
    assert not list(in_sandbox.glob(".taken.tmp-*"))  # written through a temporary sibling, renamed


def test_rows_under_other_column_names_train_like_the_same_rows_under_ours(in_sandbox):
    from unlearnkit import unlearn
    from unlearnkit.data import load_benchmark

    bench = load_benchmark("bench")
    ours = unlearn("target", None, bench.forget, bench.retain, "npo", max_steps=2, quiet=True)
    renamed = [{"prompt": r["question"], "completion": r["answer"]} for r in bench.forget]
    theirs = unlearn("target", None, renamed, bench.retain, "npo", max_steps=2, quiet=True,
                     columns={"question": "prompt", "answer": "completion"})  # fmt: skip
    assert theirs.train_loss == ours.train_loss
    for a, b in zip(ours.model.parameters(), theirs.model.parameters()):
        assert bool((a == b).all())


@pytest.mark.parametrize(
    "call, needle",
    [
        (dict(forget=[{"prompt": "Who?", "completion": "Me."}], retain="R"), "forget[0]: no 'question' column"),
        (dict(forget=[{"q": "Who?", "answer": "Me."}], retain="R", columns={"question": "prompt"}),
         "columns maps 'question' to 'prompt', which this row lacks"),
        (dict(forget=[{"question": "Who?", "answer": ""}], retain="R"), "forget[0]: field 'answer' must be a non-empty"),
        (dict(forget="bench", method="npoo"), "method='npoo': unknown method; did you mean 'npo'?"),
        (dict(forget="bench", method="npo", lrr=1), "unlearn(method='npo'): unknown key 'lrr'"),
        (dict(forget="bench", method="npo", epochs="many"), "unlearn(method='npo'): epochs='many': expected a number"),
        (dict(forget="bench", method="npo", keep_best="forget_quality"), "keep_best needs eval_every"),
        (dict(forget="no_such_folder"), "forget='no_such_folder'"),
        (dict(forget=[{"q": "Who?", "answer": "Me."}], retain="R", columns={"questoin": "q"}), "did you mean 'question'?"),
        (dict(forget=[{"question": "Who?", "answer": "Me."}]), "retain: give the rows to keep"),
        (dict(forget="bench", retain="npo"), "retain='npo' is a method name"),
    ],
)  # fmt: skip
def test_bad_input_is_an_argument_error_naming_the_python_argument(in_sandbox, call, needle):
    from unlearnkit import ArgumentError, unlearn
    from unlearnkit.data import load_benchmark

    if call.get("retain") == "R":
        call["retain"] = load_benchmark("bench").retain
    with pytest.raises(ArgumentError) as err:
        unlearn("target", **call)
    message = str(err.value)
    assert needle in message, message
    assert "--" not in message and isinstance(err.value, ValueError)


def test_forget_quality_is_the_ks_test_against_the_oracles_truth_ratios_in_every_form(in_sandbox):
    from scipy.stats import ks_2samp

    from unlearnkit import evaluate
    from unlearnkit.models import load

    quick = dict(max_new_tokens=4, quiet=True)
    oracle = evaluate("oracle", data="bench", **quick)
    model, tokenizer = load("target")
    by_result = evaluate(model, tokenizer, "bench", oracle=oracle, **quick)
    own, theirs = by_result.forget_truth_ratios, oracle.forget_truth_ratios
    assert own != theirs  # two different models: the test below cannot pass by comparing one with itself
    assert by_result.metrics["forget_quality"] == pytest.approx(ks_2samp(own, theirs).pvalue, rel=1e-12)
    oracle.save("eval_oracle")
    for form in ("oracle", "eval_oracle", theirs, load("oracle")):
        metrics = evaluate(model, tokenizer, "bench", oracle=form, **quick).metrics
        assert metrics["forget_quality"] == pytest.approx(by_result.metrics["forget_quality"], rel=1e-12), (
            form
        )
    assert json.loads((in_sandbox / "eval_oracle" / "metrics.json").read_text()) == json.loads(
        json.dumps(oracle.metrics)
    )
    assert json.loads(by_result.to_json())["metrics"]["forget_quality"] == by_result.metrics["forget_quality"]


def test_evaluating_rows_in_memory_gives_the_folders_numbers(in_sandbox):
    from unlearnkit import evaluate
    from unlearnkit.data import load_benchmark

    bench = load_benchmark("bench", eval_fields=True)
    mapping = {"question": "q", "answer": "a", "paraphrased_answer": "pa", "perturbed_answer": "pe"}
    splits = {
        name: [{**{k: v for k, v in r.items() if k not in mapping}, **{mapping[k]: r[k] for k in mapping if k in r}}
               for r in bench.split(name)]
        for name in ("forget", "retain", "holdout", "general")
    }  # fmt: skip
    folder = evaluate("target", data="bench", max_new_tokens=4, quiet=True).metrics
    rows = evaluate("target", data=splits, columns=mapping, max_new_tokens=4, quiet=True).metrics
    assert rows == pytest.approx(folder, nan_ok=True)


EVERY_PROTOCOL = [
    ("muse", "bench/muse", ["--max-items", "5", "--retain-model", "0.5"], {"max_items": 5, "oracle": 0.5}),
    ("wmdp", "bench/wmdp", ["--max-items", "5"], {"max_items": 5}),
    ("closer-look", "bench", ["--max-items", "4", "--max-new-tokens", "4", "--embedder", "none",
                              "--nli-model", "none"], {"max_items": 4, "max_new_tokens": 4, "embedder": None,
                                                       "nli_model": None}),
    ("tofu", "bench", ["--max-new-tokens", "4", "--retain-model", "oracle", "--original-model", "target"],
     {"max_new_tokens": 4, "oracle": "oracle", "original": "target"}),
]  # fmt: skip


@pytest.mark.parametrize(
    "protocol, data, flags, keywords", EVERY_PROTOCOL, ids=[c[0] for c in EVERY_PROTOCOL]
)
def test_evaluate_gives_the_command_numbers_on_every_protocol(in_sandbox, protocol, data, flags, keywords):
    """The same model and folder: ``evaluate(protocol=...)`` returns what ``unlearnkit eval --protocol``
    writes (metrics, and details but for the placement the command records and the progress setting);
    left to infer the protocol from the folder, it picks the same one."""
    from unlearnkit import evaluate
    from unlearnkit.cli import main

    argv = ["eval", "--model", "target", "--data", data, "--protocol", protocol, "--output", "cli", *flags]
    assert main(argv) == 0
    result = evaluate("target", data=data, protocol=protocol, quiet=True, **keywords)
    written = json.loads((in_sandbox / "cli" / "metrics.json").read_text())
    assert written and json.loads(json.dumps(result.metrics)) == written
    details = json.loads((in_sandbox / "cli" / "details.json").read_text())
    assert details.pop("placement")["device"] == "cpu"
    ours = json.loads(json.dumps(result.details))
    for recorded in (details, ours):
        recorded.get("settings", {}).pop("progress", None)  # MUSE records its progress bar setting
    assert ours == details and result.protocol == protocol
    if protocol in ("muse", "wmdp"):
        inferred = evaluate("target", data=data, quiet=True, **keywords)
        assert inferred.protocol == protocol and inferred.metrics == result.metrics


def test_privleak_is_the_relative_auc_gap_against_the_oracle_in_every_form(in_sandbox):
    """PrivLeak = (AUC - AUC_oracle) / AUC_oracle x 100, the AUC being P(a holdout text's Min-K% score
    exceeds a forget text's), ties half: both recomputed here from the per-text scores."""
    from unlearnkit import evaluate
    from unlearnkit.models import load

    quick = {"max_items": 10, "quiet": True}
    alone = {name: evaluate(name, data="bench/muse", **quick) for name in ("target", "oracle")}
    aucs = {name: result.metrics["privleak_min_k_auc"] for name, result in alone.items()}
    reference_name = max(aucs, key=aucs.get)  # PrivLeak divides by the oracle's AUC: the non-zero one
    (model_name,) = set(aucs) - {reference_name}
    reference = aucs[reference_name]
    assert aucs[model_name] != reference  # two different AUCs: the gap below is not 0 by construction
    result = evaluate(model_name, data="bench/muse", oracle=alone[reference_name], **quick)
    scores = result.details["privleak"]
    pairs = [(h > f) + 0.5 * (h == f) for h in scores["holdout_min_k"] for f in scores["forget_min_k"]]
    auc = sum(pairs) / len(pairs)
    assert result.metrics["privleak_min_k_auc"] == pytest.approx(auc, rel=1e-12) == aucs[model_name]
    assert result.metrics["privleak"] == pytest.approx((auc - reference) / reference * 100, rel=1e-9)
    alone[reference_name].save("eval_reference_muse")
    for form in (reference_name, "eval_reference_muse", reference, load(reference_name)):
        again = evaluate(model_name, data="bench/muse", oracle=form, **quick).metrics
        assert again["privleak"] == pytest.approx(result.metrics["privleak"], rel=1e-12), form


def test_wmdp_from_python_scores_the_first_questions_of_each_task(in_sandbox):
    from unlearnkit import evaluate
    from unlearnkit.data.sources import resolve_data

    tasks = resolve_data("bench/wmdp").mc_tasks
    result = evaluate("target", data="bench/wmdp", max_items=5, quiet=True)
    assert set(result.metrics) == {f"{task}_acc" for task in tasks}
    for task, rows in tasks.items():
        assert result.details["chance"][task] == pytest.approx(
            sum(1 / len(r["choices"]) for r in rows[:5]) / 5
        )
        assert result.metrics[f"{task}_acc"] * 5 == pytest.approx(round(result.metrics[f"{task}_acc"] * 5))


@pytest.mark.parametrize(
    "call, needle",
    [
        (dict(data="bench", protocol="wmdp"), "not a WMDP-like folder"),
        (dict(data="bench/muse", protocol="tofu"), "holds raw text, which protocol tofu cannot score; use protocol muse"),
        (dict(data="bench/muse", oracle="oracle", original="target"), "protocol='muse' has none"),
        (dict(data="bench/wmdp", oracle="oracle"), "need no oracle"),
        (dict(data="bench/muse", max_new_tokens=3), "unknown setting 'max_new_tokens'"),
        (dict(data="bench", protocol="mmlu"), "protocol='mmlu': use one of"),
        (dict(data="wmdp:chem"), "use wmdp:bio or wmdp:cyber"),
        (dict(data="bench/wmdp", max_items=0), "max_items=0: must be an integer >= 1"),
    ],
)  # fmt: skip
def test_evaluate_protocol_errors_name_python_arguments(in_sandbox, call, needle):
    from unlearnkit import ArgumentError, evaluate

    with pytest.raises(ArgumentError) as err:
        evaluate("target", quiet=True, **call)
    message = str(err.value)
    assert needle in message and "--" not in message, message


def test_evaluate_and_audit_errors_name_their_arguments(in_sandbox):
    from unlearnkit import ArgumentError, audit, evaluate
    from unlearnkit.data import load_benchmark

    bench = load_benchmark("bench")
    bare = {"forget": [{"question": r["question"], "answer": r["answer"]} for r in bench.forget],
            "retain": bench.retain}  # fmt: skip
    with pytest.raises(ArgumentError, match="oracle needs truth ratios"):
        evaluate("target", data=bare, oracle="oracle", quiet=True)
    with pytest.raises(ArgumentError, match="original needs oracle"):
        evaluate("target", data="bench", original="target", quiet=True)
    with pytest.raises(ArgumentError, match="unknown setting 'max_tokens'"):
        evaluate("target", data="bench", max_tokens=3, quiet=True)
    with pytest.raises(ArgumentError, match="unknown setting 'relearn_step'"):
        audit("target", data="bench", relearn_step=(2,), quiet=True)


def test_audit_returns_its_numbers_flat_and_saves_what_the_command_writes(in_sandbox):
    from unlearnkit import audit

    result = audit("target", data="bench", oracle="oracle", relearn_steps=(2,), quant_bits=(8,),
                   max_items=6, max_new_tokens=4, quiet=True)  # fmt: skip
    report = result.report
    assert result.metrics["relearn_gap_0"] == report["relearn_gap_0"]
    assert result.metrics["oracle/mia_min_k_auc"] == report["measured"]["oracle"]["mia_min_k_auc"]
    reached = report["measured"]["audited"]["reached"]  # the world writes probes/: check 5 ran
    assert result.metrics["audited/reached_alias"] == reached["alias"] and "multihop" in reached
    assert "version" not in result.metrics and result.verdicts == report["verdicts"]
    result.save("audited")
    assert json.loads((in_sandbox / "audited" / "audit.json").read_text()) == json.loads(result.to_json())
    assert (in_sandbox / "audited" / "audit.md").is_file()


def test_audit_fills_the_attack_the_command_would_from_the_models_lineage(in_sandbox, world_tokenizer):
    """A model fine-tuned from the tiny pretrained base gets that lineage's capped attack
    (lineage.RELEARN_DEFAULTS["tiny base"]); what the caller gives wins over the row."""
    from tiny_models import random_llama

    from unlearnkit import audit
    from unlearnkit.evaluation.audit.lineage import RELEARN_DEFAULTS
    from unlearnkit.models import save_model
    from unlearnkit.train.distill_inputs import BASE_KIND

    save_model(random_llama(world_tokenizer, hidden=32, kv_heads=4, seed=3, tie_word_embeddings=True),
               world_tokenizer, in_sandbox / "base", {"kind": BASE_KIND, "finetune_defaults": {"lr": 5e-4}})  # fmt: skip
    row = RELEARN_DEFAULTS["tiny base"]
    assert row.fit_prob < 1  # the row this test reads is the capped one
    small = dict(data="bench", relearn_steps=(2,), quant_bits=(), max_items=4, max_new_tokens=2, quiet=True)
    filled = audit("base", **small).report["settings"]
    assert (filled["relearn_lr"], filled["relearn_fit_prob"]) == (row.lr, row.fit_prob)
    given = audit("base", relearn_fit_prob=1.0, **small).report["settings"]
    assert (given["relearn_lr"], given["relearn_fit_prob"]) == (row.lr, 1.0)


def test_reworded_puts_a_commands_advice_in_the_apis_keywords():
    from unlearnkit.api.audit import FLAGS
    from unlearnkit.api.errors import SAVE_FLAGS, reworded

    assert reworded("try --set lr=1e-4 or --eval-every N") == "try lr=1e-4 or eval_every=N"
    assert reworded("lower --relearn-lr (e.g. 1e-05) or cap it (--relearn-fit-prob 0.5)", FLAGS) == (
        "lower relearn_lr (e.g. 1e-05) or cap it (relearn_fit_prob=0.5)"
    )
    assert reworded("--relearn-steps 20 then --lr -3e-4, --seeds 0,1") == (
        "relearn_steps=20 then lr=-3e-4, seeds=0,1"
    )
    # a word after a flag is a value only where FLAGS names it: otherwise the sentence goes on
    assert reworded(
        "--relearn-control retain measures it; --overwrite to replace", {**FLAGS, **SAVE_FLAGS}
    ) == ('relearn_control="retain" measures it; overwrite=True to replace')
    assert reworded("--retain-model retain", FLAGS) == "oracle retain"
    assert reworded("--max-items 10x") == "max_items 10x"  # not a number: no value


def test_a_result_unlearned_again_keeps_the_recorded_recipe_of_its_source(in_sandbox):
    from unlearnkit import unlearn

    first = unlearn("target", forget="bench", method="ga", max_steps=1, quiet=True)
    second = unlearn(first, forget="bench", method="asu", max_steps=1, quiet=True)
    assert second.config["tau"] == 5.0  # target's recorded ASU recipe, not the paper's 2.3
    second.save("twice")
    card = json.loads((in_sandbox / "twice" / "unlearnkit.json").read_text())
    assert card["base_model"] is None  # made from a model in memory, not from a folder
    assert (
        card["unlearn_defaults"]
        == json.loads((in_sandbox / "target" / "unlearnkit.json").read_text())["unlearn_defaults"]
    )


def test_distill_records_the_teacher_and_its_cost(in_sandbox):
    from unlearnkit import distill, unlearn

    teacher = unlearn("target", forget="bench", method="npo", max_steps=1, quiet=True)
    student = distill(teacher, data="bench", noise=0.5, max_steps=1, quiet=True)
    student.save("student")
    card = json.loads((in_sandbox / "student" / "unlearnkit.json").read_text())
    assert card["kind"] == "distilled (UNDO, noise 0.5)" and card["noise_toward"] == "init"
    assert card["compute"]["teacher_cost"] == teacher.compute["cost"] > 0
    assert card["compute"]["total_cost"] == card["compute"]["cost"] + teacher.compute["cost"]
    assert card["placement"]["precision"] == "fp32" and card["config"]["precision"] == "fp32"


def test_finetune_from_python_writes_the_folder_the_command_writes(in_sandbox, capsys):
    """The same base, data and settings: the same record, weights and files, and the notes in the
    Python keywords (the recorded recipe is read from the base's card on both sides)."""
    from unlearnkit import finetune
    from unlearnkit.cli import main

    base = json.loads((in_sandbox / "target" / "unlearnkit.json").read_text())
    base["finetune_defaults"] = {"source": "a test recipe", "train": {"lr": 2e-4, "epochs": 1.0}}
    shutil.copytree(in_sandbox / "target", in_sandbox / "base")
    (in_sandbox / "base" / "unlearnkit.json").write_text(json.dumps(base))
    settings = ["--set", "max_steps=2", "--check-items", "3"]
    assert main(["finetune", "--model", "base", "--data", "bench", "--split", "retain", "--output", "cli",
                 *settings]) == 0  # fmt: skip
    cli_err = capsys.readouterr().err
    result = finetune("base", data="bench", split="retain", max_steps=2, check_items=3)
    api_err = capsys.readouterr().err
    result.save("api")
    cli, api = _card(in_sandbox / "cli"), _card(in_sandbox / "api")
    assert api == cli
    assert cli["kind"] == "retain oracle" and cli["trained_on"] == ["retain"]
    assert cli["config"]["lr"] == 2e-4 and cli["config"]["max_steps"] == 2 and cli["learned"]["trained"]
    assert (in_sandbox / "api" / "model.safetensors").read_bytes() == (
        in_sandbox / "cli" / "model.safetensors"
    ).read_bytes()
    assert sorted(p.name for p in (in_sandbox / "api").iterdir()) == sorted(
        p.name for p in (in_sandbox / "cli").iterdir()
    )
    assert "records a test recipe: lr=0.0002, epochs=1.0" in cli_err and "--set KEY=VALUE" in cli_err
    assert "records a test recipe" in api_err and "--set" not in api_err
    assert result.settings["lr"] == 2e-4 and result.split == "retain" and result.learned is not None
    with pytest.raises(ArgumentError, match="path"):
        result.save("api")  # not empty: refused without overwrite=True
    result.save("api", overwrite=True)


def test_finetune_from_python_takes_rows_and_a_loaded_model(in_sandbox):
    """Rows in memory under the caller's names train the tiny model; a loaded model is cast, not reloaded,
    and a row too long for max_length is named by its place in the argument."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from unlearnkit import finetune
    from unlearnkit.data import load_benchmark

    bench = load_benchmark("bench")
    data = {"forget": bench.forget[:4], "retain": bench.retain[:6]}
    tiny = finetune("tiny", data=data, max_steps=2, check_items=0, quiet=True)
    assert tiny.provenance["base_model"] == "tiny" and tiny.learned is None
    assert tiny.provenance["data"].startswith("rows given in Python") and tiny.n_examples == 10
    model = AutoModelForCausalLM.from_pretrained("target")
    tokenizer = AutoTokenizer.from_pretrained("target")
    loaded = finetune(model, data=data, tokenizer=tokenizer, max_steps=1, check_items=0, quiet=True)
    assert loaded.provenance["base_model"] == str((in_sandbox / "target").resolve())
    long = dict(data, retain=[*data["retain"], {"question": "Why? " * 400, "answer": "Because."}])
    with pytest.raises(ArgumentError, match=r"data\['retain'\]\[6\]") as err:
        finetune("target", data=long, max_length=64, quiet=True)
    assert "--" not in str(err.value)


@pytest.mark.parametrize(
    "call, needle",
    [
        (dict(data=None), "data: give the benchmark"),
        (dict(data="bench", split="forget"), "split='forget'"),
        (dict(data="bench", check_items=-1), "check_items=-1"),
        (dict(data="bench", lrr=1), "lrr"),
        (dict(data="bench", replay=["no_such.jsonl"]), "replay no_such.jsonl: no such file"),
        (dict(data="bench", tokenizer="x"), "tokenizer: only with a loaded model"),
    ],
)  # fmt: skip
def test_finetune_bad_input_is_an_argument_error_naming_the_python_argument(in_sandbox, call, needle):
    from unlearnkit import finetune

    with pytest.raises(ArgumentError) as err:
        finetune("target", **call)
    assert needle in str(err.value) and "--" not in str(err.value), str(err.value)


def test_a_base_recipe_for_a_folder_without_other_wordings_and_its_replay_weight(in_sandbox, capsys):
    """A tiny base records the lab's recipe, the one for a folder whose facts come in one wording (no
    augment/: more epochs, the weights pulled toward the base) and how many times its replay is trained per epoch; finetune reads all three."""
    from unlearnkit import finetune

    replay = in_sandbox / "replay.jsonl"
    replay.write_text("".join(json.dumps({"text": f"passage {i}."}) + "\n" for i in range(5)))
    base = json.loads((in_sandbox / "target" / "unlearnkit.json").read_text())
    base["replay"] = [str(replay)]
    base["finetune_defaults"] = {
        "source": "a test recipe",
        "train": {"lr": 2e-4, "epochs": 1.0},
        "train_without_augmentation": {"lr": 2e-4, "epochs": 4.0, "anchor_decay": 0.01},
        "replay_repeats": 3,
    }
    shutil.copytree(in_sandbox / "target", in_sandbox / "base")
    (in_sandbox / "base" / "unlearnkit.json").write_text(json.dumps(base))
    shutil.copytree(in_sandbox / "bench", in_sandbox / "plain", ignore=shutil.ignore_patterns("augment"))
    assert (in_sandbox / "bench" / "augment").is_dir() and not (in_sandbox / "plain" / "augment").exists()
    n_qa = sum(1 for name in ("forget", "retain") for _ in open(in_sandbox / "plain" / f"{name}.jsonl"))
    for data, epochs in (("bench", 1.0), ("plain", 4.0)):
        result = finetune("base", data=data, max_steps=1, check_items=0)
        err = capsys.readouterr().err
        assert result.settings["epochs"] == epochs
        assert result.settings["anchor_decay"] == (0.01 if data == "plain" else 0.0)  # the pull with it
        assert ("for a folder without augment/" in err) == (data == "plain"), err
        # the replay weight goes with the lab's recipe (a world folder's replay)
        assert ("replaying 5 rows of replay.jsonl 3 times each per epoch" in err) == (data == "bench"), err
        assert result.provenance.get("replay_repeats") == (3 if data == "bench" else None)
    assert result.n_examples == n_qa + 5
    # the learned line's advice starts from the pull the run trained with
    asked = finetune("base", data="plain", max_steps=1, check_items=2, quiet=True)
    assert asked.learned is not None and asked.learned.anchor_decay == 0.01
    # replay files given by hand are trained once each
    once = finetune("base", data="bench", replay=[replay], max_steps=1, check_items=0, quiet=True)
    assert "replay_repeats" not in once.provenance


def test_evaluate_original_as_its_eval_folder(in_sandbox):
    """``original=`` takes the original's eval folder (or its metrics.json), as --original-model does."""
    from unlearnkit import ArgumentError, evaluate

    quick = dict(data="bench", oracle="oracle", max_items=4, max_new_tokens=2, quiet=True)
    target = evaluate("target", **quick)
    target.save("eval_target")
    from_result = evaluate("target", original=target, **quick).metrics["original_forget_quality"]
    for form in ("eval_target", "eval_target/metrics.json"):
        assert evaluate("target", original=form, **quick).metrics["original_forget_quality"] == from_result
    plain = evaluate("target", data="bench", max_items=4, max_new_tokens=2, quiet=True)
    plain.save("eval_plain")
    with pytest.raises(ArgumentError, match="has no forget_quality"):
        evaluate("target", original="eval_plain", **quick)
