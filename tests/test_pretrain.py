"""``unlearnkit pretrain``: the base model and its data-filtered twin."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from unlearnkit.cli import main

SMALL_WORLD = ["--authors", "12", "--facts", "4", "--forget-fraction", "0.25", "--holdout-fraction", "0.25"]
SMALL_WORLD += ["--general", "10", "--real-authors", "2", "--agents", "2", "--articles", "10"]
# a few steps of a small base: what is tested is the command, not the knowledge
PRETRAIN = ["--set", "epochs=2", "--set", "batch_size=4", "--set", "hidden=32", "--set", "layers=2"]

CRASHING_RUN = """
import sys, time
import torch
import transformers

torch.set_num_threads(1)
_step = transformers.Trainer.training_step

def slow_step(self, *args, **kwargs):
    time.sleep(0.3)
    return _step(self, *args, **kwargs)

transformers.Trainer.training_step = slow_step
from unlearnkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("pretrain")
    assert main(["world", "--output", str(root / "world"), *SMALL_WORLD]) == 0
    return root


def pretrain_argv(root: Path, out: Path, *extra: str) -> list[str]:
    return ["pretrain", "--data", str(root / "world"), "--output", str(out), *PRETRAIN, *extra]


@pytest.fixture(scope="module")
def uninterrupted(world):
    torch.set_num_threads(1)
    out = world / "base"
    assert main(pretrain_argv(world, out)) == 0
    return out


def test_the_base_records_what_it_was_pretrained_on(uninterrupted):
    card = json.loads((uninterrupted / "unlearnkit.json").read_text())
    assert card["kind"] == "base" and card["filtered"] == []
    assert set(card["pretraining"]["parts"]) == {
        "corpus/general",
        "corpus/hazard",
        "general.jsonl",
        "corpus/qa.jsonl",
    }
    assert sorted(Path(p).name for p in card["replay"]) == ["general.jsonl", "qa.jsonl"]  # corpus/ files
    assert card["compute"]["forward_tokens"] > 0 and card["size"]["hidden"] == 32
    assert card["finetune_defaults"]["train"]["lr"] == 5e-4  # finetune --model BASE starts from it
    from transformers import AutoModelForCausalLM

    assert AutoModelForCausalLM.from_pretrained(uninterrupted).config.hidden_size == 32  # plain transformers


def test_the_filtered_base_never_reads_a_hazardous_passage_or_name(world, uninterrupted):
    from unlearnkit.train.pretrain import pretraining_data

    meta = json.loads((world / "world" / "world.json").read_text())
    agents = meta["hazard_agents"]
    full = pretraining_data(world / "world")
    filtered = pretraining_data(world / "world", ("hazard",))
    text = json.dumps(filtered.rows)
    assert agents and not any(a in text for a in agents)
    assert any(a in json.dumps(full.rows) for a in agents)
    assert "corpus/hazard" not in filtered.parts and len(filtered.rows) < len(full.rows)

    out = world / "filtered"
    assert main(pretrain_argv(world, out, "--without", "hazard")) == 0
    card = json.loads((out / "unlearnkit.json").read_text())
    assert card["filtered"] == ["hazard"] and "corpus/hazard" not in card["pretraining"]["parts"]
    # one vocabulary for the world: both bases (and all their fine-tunes) tokenize alike
    assert (out / "tokenizer.json").read_bytes() == (uninterrupted / "tokenizer.json").read_bytes()


def test_unknown_part_and_missing_corpus_are_one_line(world, tmp_path, capsys):
    assert main(pretrain_argv(world, tmp_path / "x", "--without", "hazrd")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--without hazrd: no such corpus part" in err[0] and "hazard" in err[0]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["pretrain", "--data", str(empty), "--output", str(tmp_path / "y")]) == 2
    assert "no pretraining corpus" in capsys.readouterr().err
    assert main(pretrain_argv(world, tmp_path / "z", "--set", "hiden=3")) == 2
    assert "hiden" in capsys.readouterr().err
    assert not (tmp_path / "x").exists() and not (tmp_path / "z").exists()


def test_kill_9_then_resume_ends_with_the_same_weights(world, uninterrupted, capsys):
    from test_resume import assert_same_weights, wait_for_checkpoint

    out = world / "killed"
    work = world / ".killed.checkpoints"
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    argv = pretrain_argv(world, out, "--save-every", "2")
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASHING_RUN, *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = wait_for_checkpoint(proc, work)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL and first.name == "checkpoint-2"
    assert not out.exists()
    capsys.readouterr()
    assert main(argv) == 2  # checkpoints are never silently dropped
    assert "--resume" in capsys.readouterr().err
    assert main([*argv, "--resume"]) == 0
    card = json.loads((out / "unlearnkit.json").read_text())
    assert card["resumed_from"].startswith("checkpoint-")
    assert not work.exists()
    assert_same_weights(load_file(out / "model.safetensors"), load_file(uninterrupted / "model.safetensors"))
    # the compute of the killed part is counted once, not lost and not twice
    assert (
        card["compute"]["forward_tokens"]
        == json.loads((uninterrupted / "unlearnkit.json").read_text())["compute"]["forward_tokens"]
    )


def test_the_base_says_how_much_of_its_corpus_it_learned(uninterrupted):
    card = json.loads((uninterrupted / "unlearnkit.json").read_text())
    learned = card["learned"]
    # every row it was pretrained on is a question or a passage (a corpus part may hold both)
    assert sum(learned["trained_rows"].values()) == card["pretraining"]["rows"]
    assert set(learned["trained_rows"]) == {"questions", "passages"}
    assert all(0.0 <= s["rougeL_recall"] <= 1.0 for s in learned["trained"].values())
    assert learned["trained"]["questions"]["items"] == min(100, learned["trained_rows"]["questions"])
    assert learned["warnings"]  # two epochs of a 32-wide model learn next to nothing, and it is said


def test_a_folder_of_ones_own_records_its_corpus_as_the_replay(world, tmp_path, capsys):
    """Without world.json, ``finetune --replay auto`` from the base replays the corpus the base read
    (never general.jsonl, whose questions measure what was kept); the command ends with its line."""
    import shutil

    own = tmp_path / "own"
    shutil.copytree(world / "world", own, ignore=shutil.ignore_patterns("world.json", "muse", "wmdp"))
    out = tmp_path / "base"
    argv = ["pretrain", "--data", str(own), "--output", str(out), *PRETRAIN, "--without", "hazard"]
    assert main([*argv, "--check-items", "3"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1].startswith("learned: ROUGE-L recall ") and "on 3 of the" in printed[-1]
    card = json.loads((out / "unlearnkit.json").read_text())
    assert sorted(Path(p).name for p in card["replay"]) == ["general.jsonl", "qa.jsonl"]
    assert all(Path(p).parent.name == "corpus" for p in card["replay"])  # not own/general.jsonl
    assert card["learned"]["trained"]["questions"]["items"] == 3
    assert main([*argv, "--check-items", "0", "--overwrite"]) == 0
    assert "learned" not in json.loads((out / "unlearnkit.json").read_text())
    assert not capsys.readouterr().out.strip().splitlines()[-1].startswith("learned:")


def test_pretrain_from_python_writes_the_folder_the_command_writes(world, uninterrupted, tmp_path, capsys):
    """The same world and settings: the same record, weights and files; errors name the keywords."""
    from unlearnkit import ArgumentError, pretrain

    torch.set_num_threads(1)
    result = pretrain(
        world / "world", epochs=2, batch_size=4, hidden=32, layers=2, check_items=100, quiet=True
    )
    result.save(tmp_path / "api")
    cli = json.loads((uninterrupted / "unlearnkit.json").read_text())
    api = json.loads((tmp_path / "api" / "unlearnkit.json").read_text())
    for card in (cli, api):
        card["compute"].pop("wall_seconds")
    assert api == cli and api["finetune_defaults"]["train"]["lr"] > 0
    assert (
        load_file(tmp_path / "api" / "model.safetensors").keys()
        == load_file(uninterrupted / "model.safetensors").keys()
    )
    for name, tensor in load_file(tmp_path / "api" / "model.safetensors").items():
        assert torch.equal(tensor, load_file(uninterrupted / "model.safetensors")[name]), name
    assert sorted(p.name for p in (tmp_path / "api").iterdir()) == sorted(
        p.name for p in uninterrupted.iterdir()
    )
    assert result.learned is not None and result.without == ()
    for call, needle in (
        (dict(without="nope"), "without nope: no such corpus part"),
        (dict(hidden=0), "hidden=0: must be a positive integer"),
        (dict(check_items=-2), "check_items=-2"),
    ):
        with pytest.raises(ArgumentError) as err:
            pretrain(world / "world", quiet=True, **call)
        assert needle in str(err.value) and "--" not in str(err.value), str(err.value)
    with pytest.raises(ArgumentError, match="hidden: the shape keys are for"):
        pretrain(world / "world", model=str(uninterrupted), hidden=16, quiet=True)
