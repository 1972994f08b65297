"""UNDO (arXiv 2506.06278): shrink-and-perturb, distillation into the noised student, the CLI's resume."""

from __future__ import annotations

import copy
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from unlearnkit.cli import main
from unlearnkit.train.distill import distill, init_seed, shrink_perturb


def _fresh(model, seed: int):
    """An independent fresh init: the model's class built from its config under ``seed``."""
    torch.manual_seed(seed)
    return type(model)(copy.deepcopy(model.config))


def _trained_looking(model):
    """Weights whose statistics are far from an init's (as a trained teacher's are)."""
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(3.0).add_(0.5)
    return model


def _max_diff(a, b) -> float:
    """Largest absolute difference between two models' parameters (same names)."""
    theirs = dict(b.named_parameters())
    return max(float((p.detach() - theirs[n].detach()).abs().max()) for n, p in a.named_parameters())


def test_alpha_0_leaves_the_weights_identical(tiny_random_llama):
    before = {k: v.clone() for k, v in tiny_random_llama.state_dict().items()}
    shrink_perturb(tiny_random_llama, 0.0, seed=1)
    for key, value in tiny_random_llama.state_dict().items():
        assert torch.equal(value, before[key]), key


def test_alpha_1_gives_the_init_statistics(world_tokenizer):
    from tiny_models import random_llama

    teacher = _trained_looking(random_llama(world_tokenizer, hidden=64, tie_word_embeddings=True))
    before = {k: v.clone() for k, v in teacher.state_dict().items()}
    student = shrink_perturb(teacher, 1.0, seed=7)
    other_init = _fresh(student, seed=123)  # another seed: same distribution, different values
    init = dict(other_init.named_parameters())
    for name, p in student.named_parameters():
        p, want = p.detach(), init[name].detach()
        assert not torch.allclose(p, before[name])  # no longer the teacher
        if p.numel() >= 1000:
            assert abs(float(p.mean() - want.mean())) < 0.1 * float(want.std()) + 1e-3, name
            assert abs(float(p.std()) / float(want.std()) - 1) < 0.1, name
        else:  # norms' weights: the init is a constant
            assert torch.allclose(p, want), name
    assert student.lm_head.weight is student.model.embed_tokens.weight  # tied weights stay tied
    # The derived seed reproduces the architecture's own init exactly.
    same = dict(_fresh(student, seed=init_seed(7)).named_parameters())
    assert all(torch.equal(p, same[n]) for n, p in student.named_parameters())


def test_the_init_seed_is_derived_and_never_a_build_seed():
    seeds = [init_seed(s) for s in range(-5, 2000)]
    assert all(2**32 <= s < 2**33 for s in seeds)  # outside [0, 2**32), where build seeds live
    assert len(set(seeds)) == len(seeds)  # every run seed its own init
    assert init_seed(0) == 2**32 + zlib.crc32(b"undo-init:0") == init_seed(0)


def test_a_student_distilled_at_noise_1_from_an_unmoved_target_is_not_its_init(
    mini_bench, world_tokenizer, tmp_path
):
    """The target is built as ``finetune --model tiny --seed 0`` builds it (``tiny_llama``
    under ``torch.manual_seed(0)``) and not trained; the student of a run with seed 0 (noise 1, one step
    at lr 1e-9, so it stays where it started) must start from another init, not the target's own."""
    from unlearnkit.world.tiny import tiny_llama

    target = tiny_llama(world_tokenizer, seed=0)
    own_init = tiny_llama(world_tokenizer, seed=0)
    assert _max_diff(target, own_init) == 0.0  # unmoved
    overrides = dict(max_steps=1, lr=1e-9, weight_decay=0.0, batch_size=8, seed=0, distill_on="retain")
    result = distill(
        target,
        world_tokenizer,
        mini_bench,
        noise=1.0,
        overrides=overrides,
        work_dir=tmp_path / "w",
        quiet=True,
    )
    student = result.model
    assert result.settings["noise_toward"] == "init" and result.settings["init_seed"] == init_seed(0)
    assert _max_diff(student, own_init) > 0.05  # not the target's init (0.0 before the fix)
    assert _max_diff(student, _fresh(student, init_seed(0))) < 1e-6  # the derived init, moved by ~lr


def test_alpha_between_is_the_interpolation(tiny_random_llama):
    before = {n: p.detach().clone() for n, p in tiny_random_llama.named_parameters()}
    init = dict(_fresh(tiny_random_llama, seed=init_seed(3)).named_parameters())
    shrink_perturb(tiny_random_llama, 0.25, seed=3)
    for name, p in tiny_random_llama.named_parameters():
        torch.testing.assert_close(p, 0.75 * before[name] + 0.25 * init[name])


def test_noise_toward_a_base_is_the_interpolation_with_the_base(world_tokenizer):
    from tiny_models import random_llama

    teacher = _trained_looking(random_llama(world_tokenizer, seed=1, tie_word_embeddings=True))
    base = random_llama(world_tokenizer, seed=2, tie_word_embeddings=True)
    before = {n: p.detach().clone() for n, p in teacher.named_parameters()}
    shrink_perturb(teacher, 0.25, seed=0, base=base)
    for name, p in teacher.named_parameters():
        torch.testing.assert_close(p, 0.75 * before[name] + 0.25 * dict(base.named_parameters())[name])
    assert teacher.lm_head.weight is teacher.model.embed_tokens.weight
    shrink_perturb(teacher, 1.0, seed=0, base=base)
    assert _max_diff(teacher, base) == 0.0


def test_a_base_of_another_architecture_is_refused(world_tokenizer):
    from tiny_models import random_llama

    from unlearnkit.errors import UserError

    teacher, base = random_llama(world_tokenizer, hidden=16), random_llama(world_tokenizer, hidden=32)
    before = {n: p.detach().clone() for n, p in teacher.named_parameters()}
    with pytest.raises(UserError, match="does not match the teacher's architecture: .* is \\(.*32"):
        shrink_perturb(teacher, 0.5, seed=0, base=base)
    assert all(torch.equal(p, before[n]) for n, p in teacher.named_parameters())  # untouched
    with pytest.raises(UserError, match="needs the base model"):
        distill(teacher, world_tokenizer, None, noise_toward="base")


def test_noise_out_of_range_is_a_user_error(tiny_random_llama):
    from unlearnkit.errors import UserError

    with pytest.raises(UserError, match="--noise"):
        shrink_perturb(tiny_random_llama, 1.5, seed=0)


def _kl_on(teacher, student, encoded, tok) -> float:
    """Mean per-token KL(teacher || student) on the label tokens of ``encoded``, computed directly."""
    from unlearnkit.data.encode import pad_batch, pad_id_of

    batch = pad_batch(encoded, pad_id_of(tok))
    mask = batch["labels"][:, 1:] != -100
    with torch.no_grad():
        lt = torch.log_softmax(teacher(batch["input_ids"], attention_mask=batch["attention_mask"]).logits, -1)
        ls = torch.log_softmax(student(batch["input_ids"], attention_mask=batch["attention_mask"]).logits, -1)
    kl = (lt.exp() * (lt - ls)).sum(-1)[:, :-1]
    return float(kl[mask].mean())


def _retain_examples(bench, tok):
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.train.trainer import encode_rows

    return encode_rows(bench.retain, tok, PromptFormat.for_tokenizer(tok), 128)


def _corpus_texts(bench) -> list[str]:
    """Raw text in the world's words (as a general corpus would be): passages of three facts each."""
    facts = [f"{r['question']} {r['answer']}" for r in bench.general + bench.holdout]
    return [" ".join(facts[i : i + 3]) for i in range(0, len(facts), 3)]


@pytest.fixture
def corpus_world(mini_world, mini_bench, tmp_path):
    """A copy of the mini world with a general corpus at WORLD/corpus/general.jsonl."""
    world = tmp_path / "world"
    shutil.copytree(mini_world, world, ignore=shutil.ignore_patterns("corpus"))
    (world / "corpus").mkdir()
    lines = [json.dumps({"text": t}) for t in _corpus_texts(mini_bench)]
    (world / "corpus" / "general.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return world


def _both_strategies(make_teacher, bench, tok, tmp_path, **overrides):
    """The same distillation with the teacher's outputs cached and from a frozen copy."""
    settings = dict(epochs=8, lr=1e-2, batch_size=8, retain_nll_weight=0.0, lr_scheduler="constant")
    out = {}
    for reference in ("cache", "copy"):
        result = distill(
            make_teacher(),
            tok,
            bench,
            noise=1.0,
            overrides={**settings, **overrides, "reference": reference},
            work_dir=tmp_path / f"work-{reference}",
            quiet=True,
        )
        assert result.reference["strategy"] == reference
        out[reference] = result
    return out["cache"], out["copy"]


def _agree_as_reordered_teachers(cache, copy_) -> None:
    """The two strategies differ only in how the teacher's log-probs were computed."""
    from tolerances import REORDERED_TEACHER_ADAM_STEP

    assert cache.steps == copy_.steps
    lr = cache.settings["lr"]
    assert _max_diff(cache.model, copy_.model) <= cache.steps * lr * REORDERED_TEACHER_ADAM_STEP


def test_distillation_brings_the_student_to_the_teacher_cached_or_copied(
    make_tiny_llama, mini_bench, world_tokenizer, tmp_path
):
    def make_teacher():
        return _trained_looking(make_tiny_llama())

    frozen = make_teacher()
    start = shrink_perturb(make_teacher(), 1.0, seed=0)
    examples = _retain_examples(mini_bench, world_tokenizer)
    kl_before = _kl_on(frozen, start, examples, world_tokenizer)
    cache, copied = _both_strategies(make_teacher, mini_bench, world_tokenizer, tmp_path)
    for result in (cache, copied):
        kl_after = _kl_on(frozen, result.model, examples, world_tokenizer)
        assert kl_after < 0.5 * kl_before, (result.reference, kl_before, kl_after)
        assert result.steps > 0 and result.settings["distill_on"] == "retain,general"
        assert result.compute["backward_tokens"] > 0 and result.compute["cost"] > 0
    _agree_as_reordered_teachers(cache, copied)


def test_stop_epochs_is_the_checkpoint_of_the_longer_schedule(
    make_tiny_llama, mini_bench, world_tokenizer, tmp_path
):
    """``epochs=4, stop_epochs=2`` ends where a 4-epoch run's half-way checkpoint is, weights and all
    (the learning rate decays over 4 epochs, not 2): the stop point bench/robustness.py measures."""
    from unlearnkit.models import load_model

    settings = dict(epochs=4, lr=1e-2, batch_size=8, lr_scheduler="cosine", reference="cache", seed=3)

    def run(work: str, **extra):
        teacher = _trained_looking(make_tiny_llama())
        return distill(
            teacher, world_tokenizer, mini_bench, noise=1.0, overrides={**settings, **extra},
            work_dir=tmp_path / work, quiet=True,
        )  # fmt: skip

    stopped = run("stopped", stop_epochs=2)
    short = run("short", epochs=2)  # a 2-epoch schedule: same steps, a faster decay
    assert stopped.steps == short.steps > 0 and stopped.settings["stop_epochs"] == 2
    full = run("full", save_every=stopped.steps)
    assert full.steps == 2 * stopped.steps
    half = load_model(str(tmp_path / "full" / f"checkpoint-{stopped.steps}"))
    assert _max_diff(stopped.model, half) <= 1e-6
    assert _max_diff(stopped.model, short.model) > 1e-4


def test_a_small_model_toward_its_base_gets_the_measured_recipe_unless_it_sets_its_own_schedule(
    tiny_random_llama,
):
    from unlearnkit.train.distill import TINY_BASE_DEFAULTS, TINY_DEFAULTS, settings_for

    toward_base = settings_for(tiny_random_llama, "base", {})
    assert (toward_base["lr"], toward_base["epochs"], toward_base["stop_epochs"]) == (5e-4, 30.0, 15.0)
    assert settings_for(tiny_random_llama, "init", {}) == TINY_DEFAULTS and "stop_epochs" not in TINY_DEFAULTS
    own = settings_for(tiny_random_llama, "base", {"epochs": 4})
    assert own["epochs"] == 4 and "stop_epochs" not in own and own["lr"] == TINY_BASE_DEFAULTS["lr"]
    assert "stop_epochs" not in settings_for(tiny_random_llama, "base", {"max_steps": 7})
    assert settings_for(tiny_random_llama, "base", {"epochs": 40, "stop_epochs": 20})["stop_epochs"] == 20


def test_stop_epochs_past_the_schedule_is_a_user_error(
    tiny_random_llama, mini_bench, world_tokenizer, tmp_path
):
    from unlearnkit.errors import UserError

    with pytest.raises(UserError, match="stop_epochs=5 is past the schedule's end"):
        distill(
            tiny_random_llama, world_tokenizer, mini_bench, overrides={"epochs": 4, "stop_epochs": 5},
            work_dir=tmp_path / "w", quiet=True,
        )  # fmt: skip
    assert not (tmp_path / "w").exists()


def test_distillation_on_raw_text_lowers_the_kl_on_every_token(
    make_tiny_llama, corpus_world, world_tokenizer, tmp_path
):
    """The world's general corpus as raw text (KL on every non-pad token), cached or copied."""
    from unlearnkit.data import load_benchmark
    from unlearnkit.data.encode import encode_text

    bench = load_benchmark(corpus_world)

    def make_teacher():
        return _trained_looking(make_tiny_llama())

    frozen = make_teacher()
    start = shrink_perturb(make_teacher(), 1.0, seed=0)
    texts = [ex for t in _corpus_texts(bench) for ex in encode_text(world_tokenizer, t, 128)]
    assert all(ex["labels"] == ex["input_ids"] for ex in texts)  # every token is a target
    kl_before = _kl_on(frozen, start, texts, world_tokenizer)
    cache, copied = _both_strategies(make_teacher, bench, world_tokenizer, tmp_path, distill_on="corpus")
    for result in (cache, copied):
        kl_after = _kl_on(frozen, result.model, texts, world_tokenizer)
        assert kl_after < 0.5 * kl_before, (result.reference, kl_before, kl_after)
        assert result.settings["distilled_examples"] == {"corpus": len(_corpus_texts(bench))}
        assert result.settings["text_files"] == {"corpus": str(corpus_world / "corpus" / "general.jsonl")}
    # the cache held every token of the text rows (positions 0 .. n-2 of each), not just an "answer"
    n_positions = sum(len(ex["input_ids"]) - 1 for ex in texts)
    assert cache.reference["cache_mib"] * 2**20 == pytest.approx(
        n_positions * len(world_tokenizer) * 4, rel=1e-3
    )
    _agree_as_reordered_teachers(cache, copied)


def test_the_cache_gives_the_teachers_own_outputs_on_text_and_qa_rows(
    make_tiny_llama, corpus_world, world_tokenizer, tmp_path
):
    """The lookup a training batch gets (text windows and QA rows mixed) is the teacher's forward on it."""
    from tolerances import REORDERED_FORWARD_LOGP_ATOL

    from unlearnkit.config import DistillConfig, build_configs
    from unlearnkit.data import load_benchmark
    from unlearnkit.data.encode import PromptFormat, pad_id_of
    from unlearnkit.train.distill import DistillDataset, distill_rows, encode_parts, teacher_reference
    from unlearnkit.train.trainer import PaddingCollator, training_arguments

    teacher = _trained_looking(make_tiny_llama())
    train_cfg, cfg = build_configs(
        DistillConfig, {"distill_on": "retain,corpus", "reference": "cache", "max_length": 64}
    )
    parts, _ = distill_rows(load_benchmark(corpus_world), cfg)
    encoded, n_true = encode_parts(parts, world_tokenizer, PromptFormat.for_tokenizer(world_tokenizer), 64)
    assert n_true == len(encoded) > sum(len(rows) for _, rows in parts)  # long text rows: several windows
    dataset, collator = DistillDataset(encoded), PaddingCollator(pad_id_of(world_tokenizer))
    args = training_arguments(train_cfg, str(tmp_path / "w"), len(dataset), quiet=True)
    cache, info = teacher_reference(teacher, train_cfg, dataset, collator, args)
    assert info["strategy"] == "cache"
    picks = [0, len(encoded) - 1, len(encoded) // 2, 1, len(encoded) - 2]  # QA rows and text windows
    part = collator([dataset[i] for i in picks])["distill"]
    with torch.no_grad():
        want = torch.log_softmax(teacher(part["input_ids"], attention_mask=part["attention_mask"]).logits, -1)
    got = torch.log_softmax(cache.logits(part).float(), -1)
    mask = part["labels"][:, 1:] != -100
    assert int(mask.sum()) > 0
    diff = (got[:, :-1] - want[:, :-1]).abs().amax(-1)[mask]
    assert float(diff.max()) <= REORDERED_FORWARD_LOGP_ATOL


def test_parts_keep_forget_last_and_count_text_windows(mini_bench, world_tokenizer):
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.train.distill import encode_parts

    long_text = " ".join(r["answer"] for r in mini_bench.retain[:12])  # ~200 tokens
    parts = [("text", [{"text": long_text}]), ("forget", mini_bench.forget[:2])]
    encoded, n_true = encode_parts(parts, world_tokenizer, PromptFormat.for_tokenizer(world_tokenizer), 64)
    assert n_true >= 3 and len(encoded) == n_true + 2  # one long row, several windows, then the forget rows
    assert all(ex["prompt_len"] == 0 for ex in encoded[:n_true])
    assert all(ex["prompt_len"] > 0 for ex in encoded[n_true:])


# ------------------------------------------------------------------------------ CLI + kill -9 resume

DISTILL = ["--noise", "1", "--save-every", "2"]
DISTILL += ["--set", "epochs=2", "--set", "batch_size=16", "--set", "lr=3e-3"]

CRASHING_RUN = """
import sys, time
import torch
import unlearnkit.train.trainer as T

torch.set_num_threads(1)
_step = T.UnlearnTrainer.training_step

def slow_step(self, *args, **kwargs):
    time.sleep(0.5)
    return _step(self, *args, **kwargs)

T.UnlearnTrainer.training_step = slow_step
from unlearnkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _argv(teacher, world, out, *extra) -> list[str]:
    return [
        "distill",
        "--teacher",
        str(teacher),
        "--data",
        str(world),
        "--output",
        str(out),
        *DISTILL,
        *extra,
    ]


def test_kill_9_then_resume_ends_with_the_same_weights(tiny_model_dir, mini_world, mini_bench, tmp_path):
    torch.set_num_threads(1)
    assert main(_argv(tiny_model_dir, mini_world, tmp_path / "whole")) == 0
    whole = load_file(tmp_path / "whole" / "model.safetensors")
    card = json.loads((tmp_path / "whole" / "unlearnkit.json").read_text())
    assert card["teacher"] == str(tiny_model_dir) and card["noise"] == 1.0 and card["steps"] > 2
    # the world's general knowledge (world facts, real authors) is evaluation-only, as in TOFU
    assert mini_bench.general_parts and card["distilled_on"] == {"retain": len(mini_bench.retain)}
    assert (
        card["compute"]["cost"] == card["compute"]["forward_tokens"] + 2 * card["compute"]["backward_tokens"]
    )
    assert "compute" in (tmp_path / "whole" / "README.md").read_text()

    out, work = tmp_path / "killed", tmp_path / ".killed.checkpoints"
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASHING_RUN, *_argv(tiny_model_dir, mini_world, out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    while not list(work.glob("checkpoint-*/trainer_state.json")):
        if proc.poll() is not None:
            pytest.fail(
                f"the run ended (rc {proc.returncode}) before a checkpoint: {proc.stderr.read()[-2000:]}"
            )
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("no checkpoint appeared in time")
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL and not out.exists()

    assert main(_argv(tiny_model_dir, mini_world, out, "--resume", "--set", "lr=1e-2")) == 2  # other settings
    assert main(_argv(tiny_model_dir, mini_world, out, "--resume")) == 0
    resumed = load_file(out / "model.safetensors")
    assert whole.keys() == resumed.keys()
    for key in whole:
        assert torch.equal(whole[key], resumed[key]), key
    again = json.loads((out / "unlearnkit.json").read_text())
    assert again["resumed_from"].startswith("checkpoint-") and not work.exists()
    # Counters carry across the resume: every training token once; the teacher's cache built twice.
    assert again["compute"]["backward_tokens"] == card["compute"]["backward_tokens"]
    assert again["compute"]["forward_tokens"] > card["compute"]["forward_tokens"]


def test_cli_rejects_bad_settings_before_writing(tiny_model_dir, mini_world, tmp_path, capsys):
    out = tmp_path / "never"
    assert main(_argv(tiny_model_dir, mini_world, out, "--set", "distill_on=retain,elsewhere")) == 2
    assert "distill_on" in capsys.readouterr().err
    assert main(_argv(tiny_model_dir, mini_world, out, "--set", "retain_nll_weigth=1")) == 2
    assert "did you mean 'retain_nll_weight'" in capsys.readouterr().err
    assert (
        main(
            [
                "distill",
                "--teacher",
                str(tiny_model_dir),
                "--data",
                str(mini_world),
                "--output",
                str(out),
                "--noise",
                "2",
            ]
        )
        == 2
    )
    assert not out.exists() and not Path(tmp_path / ".never.checkpoints").exists()


def test_torchrun_two_ranks_end_with_identical_students(tiny_model_dir, mini_world, tmp_path):
    """Every rank builds the teacher cache itself and trains the same student (gloo on CPU)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    env.pop("WORLD_SIZE", None)
    env["UNLEARNKIT_DEBUG_CHECKSUMS"] = str(tmp_path / "ranks")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    cmd += ["-m", "unlearnkit.cli", "distill", "--teacher", str(tiny_model_dir), "--data", str(mini_world)]
    cmd += ["--output", str(tmp_path / "student"), "--set", "max_steps=3", "--set", "batch_size=4"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ranks = [json.loads(p.read_text()) for p in sorted((tmp_path / "ranks").glob("rank*.json"))]
    assert [r["rank"] for r in ranks] == [0, 1] and ranks[0]["sha256"] == ranks[1]["sha256"]
    card = json.loads((tmp_path / "student" / "unlearnkit.json").read_text())
    assert card["steps"] == 3 and card["compute"]["backward_tokens"] > 0


def test_rows_put_forget_last_and_skip_evaluation_only_general():
    """NLL goes to rows before ``n_true`` only; real TOFU's general split (utility eval) is never trained on."""
    from types import SimpleNamespace

    from unlearnkit.config import DistillConfig
    from unlearnkit.train.distill import distill_rows

    sizes = {"forget": 1, "retain": 2, "general": 3}
    world = SimpleNamespace(split=lambda n: [{"split": n}] * sizes[n])
    parts, n_true = distill_rows(world, DistillConfig(distill_on="forget,retain,general"))
    assert [name for name, _ in parts] == ["retain", "general", "forget"] and n_true == 5
    tofu = SimpleNamespace(split=world.split, general_parts={"real_authors": [{}]})
    parts, n_true = distill_rows(tofu, DistillConfig())
    assert [name for name, _ in parts] == ["retain"] and n_true == 2


# ------------------------------------------------------------------------ noise target and text (CLI)


def _save(model, tok, path: Path, card: dict) -> Path:
    from unlearnkit.models import save_model

    save_model(model, tok, path, card)
    return path


@pytest.fixture
def lineage(tmp_path, world_tokenizer):
    """base (``"kind": "base"``) -> target (fine-tuned from it) -> teacher (unlearned from the target),
    linked as the commands record them: absolute from the target, relative ("target") from the teacher."""
    from tiny_models import random_llama

    def model(seed):
        return random_llama(world_tokenizer, hidden=32, kv_heads=4, tie_word_embeddings=True, seed=seed)

    base = _save(model(5), world_tokenizer, tmp_path / "base", {"kind": "base"})
    target = _save(
        model(6), world_tokenizer, tmp_path / "target", {"kind": "target", "base_model": str(base)}
    )
    teacher = _save(
        model(7), world_tokenizer, tmp_path / "teacher", {"kind": "unlearned (npo)", "base_model": "target"}
    )
    return {"base": base, "target": target, "teacher": teacher}


STAY_PUT = ["--noise", "1", "--set", "max_steps=1", "--set", "lr=1e-9", "--set", "weight_decay=0"]


def _distill(teacher, data, out, *extra) -> list[str]:
    return [
        "distill",
        "--teacher",
        str(teacher),
        "--data",
        str(data),
        "--output",
        str(out),
        *STAY_PUT,
        *extra,
    ]


def test_the_noise_goes_toward_the_base_the_cards_name_by_default(lineage, mini_world, tmp_path, capsys):
    out = tmp_path / "student"
    assert main(_distill(lineage["teacher"], mini_world, out)) == 0
    captured = capsys.readouterr()
    assert f"noise toward the base {lineage['base']}" in captured.err and "-> " in captured.err
    last = captured.out.strip().splitlines()[-1]
    assert last.startswith(f"saved {out} (student at noise 1 toward the base") and "mean train loss" in last
    assert "{'loss'" not in captured.out + captured.err  # no raw trainer dicts
    card = json.loads((out / "unlearnkit.json").read_text())
    assert card["noise_toward"] == "base" and card["noise_base"] == str(lineage["base"])
    student, base = load_file(out / "model.safetensors"), load_file(lineage["base"] / "model.safetensors")
    assert max(float((student[k] - base[k]).abs().max()) for k in base) < 1e-6  # noise 1 = the base itself

    # --noise-toward init: a fresh init (recorded with its seed), not the base
    fresh = tmp_path / "fresh"
    assert main(_distill(lineage["teacher"], mini_world, fresh, "--noise-toward", "init")) == 0
    assert "noise toward a fresh initialisation" in capsys.readouterr().err
    card = json.loads((fresh / "unlearnkit.json").read_text())
    assert card["noise_toward"] == "init" and card["init_seed"] == init_seed(0) and "noise_base" not in card
    student = load_file(fresh / "model.safetensors")
    assert max(float((student[k] - base[k]).abs().max()) for k in base) > 0.05

    # no base in the cards: a fresh init, and the line says why
    plain = tmp_path / "plain"
    assert main(_distill(lineage["target"].parent / "base", mini_world, plain)) == 0  # a base has no base
    assert "name no base folder" in capsys.readouterr().err
    assert json.loads((plain / "unlearnkit.json").read_text())["noise_toward"] == "init"


def _other_tokenizer(bench):
    """The world's vocabulary size, other merges: same model shapes, different token ids."""
    from unlearnkit.world.tiny import corpus_of, train_tokenizer

    rows = bench.forget + bench.retain + bench.holdout + bench.general
    return train_tokenizer(corpus_of(rows) + ["quokka xylophone zebra"] * 50, vocab_size=512)


def test_a_missing_or_mismatched_base_and_bad_text_are_one_line_each(
    lineage, tiny_model_dir, mini_world, mini_bench, world_tokenizer, tmp_path, capsys
):
    from tiny_models import random_llama

    other_tok = _other_tokenizer(mini_bench)
    assert len(other_tok) == len(world_tokenizer) and other_tok.get_vocab() != world_tokenizer.get_vocab()
    small = _save(
        random_llama(world_tokenizer, hidden=16), world_tokenizer, tmp_path / "small", {"kind": "base"}
    )
    retok = random_llama(other_tok, hidden=32, kv_heads=4, tie_word_embeddings=True)
    retok = _save(retok, other_tok, tmp_path / "retok", {"kind": "base"})
    bad_rows = tmp_path / "bad.jsonl"
    bad_rows.write_text('{"text": "fine"}\n{"question": "no text"}\n', encoding="utf-8")
    teacher = lineage["teacher"]
    cases = [
        (tiny_model_dir, ["--noise-toward", "base"], "no base model found"),
        (
            teacher,
            ["--base", str(small)],
            "not the teacher's architecture (hidden_size: base 16, teacher 32)",
        ),
        (teacher, ["--base", str(retok)], "its tokenizer is not the teacher's (token "),
        (teacher, ["--base", str(lineage["base"]), "--noise-toward", "init"], "--base applies to"),
        (teacher, ["--base", str(tmp_path / "nowhere")], "--base"),
        (teacher, ["--set", "distill_on=retain,corpus"], "corpus/general.jsonl"),
        (teacher, ["--set", "distill_on=text"], "distill_text=PATH"),
        (teacher, ["--set", f"distill_text={tmp_path / 'none.jsonl'}"], "no such file"),
        (teacher, ["--set", f"distill_text={bad_rows}"], f"{bad_rows}:2: expected a non-empty string 'text'"),
    ]
    no_corpus = tmp_path / "no_corpus"  # the mini world has a corpus: a copy without it
    shutil.copytree(mini_world, no_corpus, ignore=shutil.ignore_patterns("corpus"))
    for model, extra, expected in cases:
        out = tmp_path / "never"
        assert main(_distill(model, no_corpus, out, *extra)) == 2, extra
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and err.startswith("unlearnkit: error:"), err
        assert expected in err, (extra, err)
        assert not out.exists() and not (tmp_path / ".never.checkpoints").exists()


def test_the_base_is_found_through_the_cards(tmp_path):
    from unlearnkit.train.distill_inputs import base_chain, find_base

    def card(name, **fields):
        (tmp_path / name).mkdir()
        (tmp_path / name / "unlearnkit.json").write_text(json.dumps(fields))
        return tmp_path / name

    base = card("base", kind="base")
    target = card("target", kind="target", base_model=str(base))
    teacher = card("npo", kind="unlearned (npo)", base_model="target")  # relative: found beside
    student = card("student", kind="distilled", teacher=str(teacher))
    assert find_base(teacher) == base and find_base(student) == base
    assert base_chain(student) == [teacher, target, base]
    assert find_base(card("tiny_target", kind="target", base_model="tiny")) is None  # built from scratch
    card("a", base_model=str(tmp_path / "b"))
    card("b", base_model=str(tmp_path / "a"))
    assert find_base(tmp_path / "a") is None  # a cycle ends the walk
    card("not_base", kind="target")  # a folder, but not a base
    assert find_base(card("c", base_model=str(tmp_path / "not_base"))) is None


def test_the_corpus_is_found_in_the_world_folder_or_above_it(tmp_path):
    from unlearnkit.train.distill_inputs import corpus_file

    world = tmp_path / "world"
    (world / "corpus").mkdir(parents=True)
    (world / "wmdp").mkdir()
    (world / "corpus" / "general.jsonl").write_text('{"text": "x"}\n')
    assert corpus_file(world) == world / "corpus" / "general.jsonl"  # TOFU-like: the world folder
    assert corpus_file(world / "wmdp") == world / "corpus" / "general.jsonl"  # WMDP-like: WORLD/wmdp
    assert corpus_file(tmp_path) is None and corpus_file("tofu:forget10") is None


def test_the_cli_distills_on_the_corpus_above_a_wmdp_like_folder(lineage, mini_world, mini_bench, tmp_path):
    """WORLD/wmdp as --data: the corpus is WORLD/corpus/general.jsonl, one level up."""
    world = tmp_path / "world"
    shutil.copytree(mini_world, world / "wmdp", ignore=shutil.ignore_patterns("corpus"))
    (world / "corpus").mkdir()
    texts = _corpus_texts(mini_bench)
    (world / "corpus" / "general.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    out = tmp_path / "student"
    argv = _distill(lineage["teacher"], world / "wmdp", out, "--noise-toward", "init")
    assert main([*argv, "--set", "distill_on=retain,corpus", "--set", "max_steps=2"]) == 0
    card = json.loads((out / "unlearnkit.json").read_text())
    assert card["distilled_on"] == {"retain": len(mini_bench.retain), "corpus": len(texts)}
    assert card["config"]["text_files"] == {"corpus": str(world / "corpus" / "general.jsonl")}
    assert card["teacher_outputs"]["strategy"] == "cache" and card["steps"] == 2


def test_the_chain_of_cards_says_where_the_walk_stopped(tmp_path):
    from unlearnkit.train.distill_inputs import describe_chain

    def card(name, **fields):
        (tmp_path / name).mkdir()
        if fields:
            (tmp_path / name / "unlearnkit.json").write_text(json.dumps(fields))
        return tmp_path / name

    base = card("base", kind="base")
    card("target", kind="target", base_model=str(base))
    teacher = card("npo", kind="unlearned (npo)", base_model="target")
    assert describe_chain(teacher, upto=base) == f"{teacher} -> {tmp_path / 'target'} -> {base}"
    tiny = card("tiny_target", kind="target", base_model="tiny")
    assert describe_chain(tiny).endswith("-> 'tiny' (no such folder)")
    downloaded = card("llama")  # a model folder from elsewhere: no card
    fine_tuned = card("ft", kind="target", base_model=str(downloaded))
    assert (
        describe_chain(fine_tuned)
        == f"{fine_tuned} -> {downloaded} (no unlearnkit.json: if it is the pretrained base, pass it as --base)"
    )
