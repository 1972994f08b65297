"""UNDO (arXiv 2506.06278): shrink-and-perturb, distillation into the noised student, the CLI's resume."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from unlearnkit.cli import main
from unlearnkit.train.distill import distill, shrink_perturb


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
    # The same seed reproduces the architecture's own init exactly.
    same = dict(_fresh(student, seed=7).named_parameters())
    assert all(torch.equal(p, same[n]) for n, p in student.named_parameters())


def test_alpha_between_is_the_interpolation(tiny_random_llama):
    before = {n: p.detach().clone() for n, p in tiny_random_llama.named_parameters()}
    init = dict(_fresh(tiny_random_llama, seed=3).named_parameters())
    shrink_perturb(tiny_random_llama, 0.25, seed=3)
    for name, p in tiny_random_llama.named_parameters():
        torch.testing.assert_close(p, 0.75 * before[name] + 0.25 * init[name])


def test_noise_out_of_range_is_a_user_error(tiny_random_llama):
    from unlearnkit.errors import UserError

    with pytest.raises(UserError, match="--noise"):
        shrink_perturb(tiny_random_llama, 1.5, seed=0)


def _kl_to(teacher, student, bench, tok) -> float:
    """Mean per-token KL(teacher || student) on retain answer tokens, computed directly."""
    from unlearnkit.data.encode import PromptFormat, pad_batch, pad_id_of
    from unlearnkit.train.trainer import encode_rows

    batch = pad_batch(encode_rows(bench.retain, tok, PromptFormat.for_tokenizer(tok), 128), pad_id_of(tok))
    mask = batch["labels"][:, 1:] != -100
    with torch.no_grad():
        lt = torch.log_softmax(teacher(batch["input_ids"], attention_mask=batch["attention_mask"]).logits, -1)
        ls = torch.log_softmax(student(batch["input_ids"], attention_mask=batch["attention_mask"]).logits, -1)
    kl = (lt.exp() * (lt - ls)).sum(-1)[:, :-1]
    return float(kl[mask].mean())


@pytest.mark.parametrize("reference", ["cache", "copy"])
def test_distillation_brings_the_student_to_the_teacher(
    make_tiny_llama, mini_bench, world_tokenizer, tmp_path, reference
):
    teacher = _trained_looking(make_tiny_llama())
    frozen = copy.deepcopy(teacher)
    start = shrink_perturb(copy.deepcopy(teacher), 1.0, seed=0)
    kl_before = _kl_to(frozen, start, mini_bench, world_tokenizer)
    result = distill(
        teacher,
        world_tokenizer,
        mini_bench,
        noise=1.0,
        overrides=dict(
            epochs=8,
            lr=1e-2,
            batch_size=8,
            retain_nll_weight=0.0,
            reference=reference,
            lr_scheduler="constant",
        ),
        work_dir=tmp_path / "work",
        quiet=True,
    )
    kl_after = _kl_to(frozen, result.model, mini_bench, world_tokenizer)
    assert kl_after < 0.5 * kl_before, (kl_before, kl_after)
    assert result.reference["strategy"] == reference
    assert result.steps > 0 and result.settings["distill_on"] == "retain,general"
    assert result.compute["backward_tokens"] > 0 and result.compute["cost"] > 0


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
    assert card["distilled_on"] == {"retain": len(mini_bench.retain), "general": len(mini_bench.general)}
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
