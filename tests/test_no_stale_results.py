"""No stale results (open-unlearning #161): whatever is kept for evaluation or the reference is
keyed by the CONTENT it was computed from (weights, data rows, settings), so rerunning after a change
never brings back the old numbers.

* TokenUnlearn scores (``<work>/attribution``): reused for the same original weights, forget rows,
  token ids and attribution settings; recomputed when any of them changes.
* The sweep's ``reference.json`` (target / oracle metrics): keyed by the model folders' file digests
  and the data rows, not only by their paths.
* The quickstart's trained target / oracle (``unlearnkit.pipelines.embedded``): keyed by the base's weights, the
  split files and the recipe.
* ``reference=cache``: never kept between runs; built from the model being unlearned, every run.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from tiny_models import random_llama
from tolerances import SAME_LOGITS_REL

from unlearnkit.data.encode import PromptFormat
from unlearnkit.errors import UserError


@pytest.fixture
def attribution_inputs(world_tokenizer, mini_bench):
    from unlearnkit.pipelines.unlearn import resolve_configs

    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    rows = [dict(r) for r in mini_bench.forget[:4]]
    _, train_cfg, method_cfg = resolve_configs("t-npo", {"tagger": "heuristic"})
    return fmt, rows, train_cfg, method_cfg


def test_attribution_scores_follow_the_weights_the_rows_and_the_settings(
    world_tokenizer, attribution_inputs, tmp_path, monkeypatch
):
    import unlearnkit.attribution as attribution
    from unlearnkit.pipelines.unlearn import resolve_configs
    from unlearnkit.train.tokenweights import attach_token_weights
    from unlearnkit.train.trainer import encode_rows

    fmt, rows, train_cfg, method_cfg = attribution_inputs
    cache = tmp_path / "attribution"
    computed = []
    stock = attribution.compute_scores

    def counting(*args, **kwargs):
        computed.append(1)
        return stock(*args, **kwargs)

    monkeypatch.setattr(attribution, "compute_scores", counting)
    model = random_llama(world_tokenizer)

    def scores(model, rows, method_cfg=method_cfg):
        enc = encode_rows(rows, world_tokenizer, fmt, train_cfg.max_length)
        attach_token_weights(model, world_tokenizer, fmt, rows, enc, method_cfg, train_cfg, cache, quiet=True)
        lines = (cache / "scores.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(x)["phi"] for x in lines], [e["weights"] for e in enc]

    first, weights = scores(model, rows)
    assert len(computed) == 1
    again, weights_again = scores(model, rows)  # the same run resumed: reused, same weights
    assert len(computed) == 1 and again == first and weights_again == weights

    with torch.no_grad():  # another model in the same object (a retrained target): recomputed
        for p in model.parameters():
            p.mul_(1.5)
    retrained, _ = scores(model, rows)
    assert len(computed) == 2 and retrained != first

    edited = [dict(r) for r in rows]  # same number of rows, one answer changed
    edited[0]["answer"] = edited[0]["answer"] + " indeed"
    new_rows, _ = scores(model, edited)
    assert len(computed) == 3 and new_rows[0] != retrained[0]

    _, _, alpha_cfg = resolve_configs("t-npo", {"tagger": "heuristic", "alpha": 0.2})
    new_alpha, _ = scores(model, edited, alpha_cfg)
    assert len(computed) == 4 and new_alpha != new_rows

    (cache / "cache_key.json").write_text("{not json", encoding="utf-8")  # a torn key: recompute, no crash
    recomputed, _ = scores(model, edited, alpha_cfg)
    assert len(computed) == 5 and recomputed == new_alpha


def test_weights_digest_sees_one_changed_value(world_tokenizer):
    from unlearnkit.fingerprint import weights_digest

    model = random_llama(world_tokenizer)
    before = weights_digest(model)
    assert weights_digest(random_llama(world_tokenizer)) == before  # the same weights: the same digest
    with torch.no_grad():
        model.model.layers[1].mlp.down_proj.weight[3, 5] += 1e-6
    assert weights_digest(model) != before


@pytest.fixture
def sweep_folders(tmp_path, world_tokenizer, mini_world):
    from unlearnkit.models import save_model

    for name, seed in (("target", 0), ("oracle", 1)):
        model = random_llama(world_tokenizer, hidden=32, kv_heads=4, tie_word_embeddings=True, seed=seed)
        save_model(model, world_tokenizer, tmp_path / name, {"kind": f"test {name}"})
    shutil.copytree(mini_world, tmp_path / "data")
    (tmp_path / "sweep").mkdir()  # the sweep's output folder (run_sweep creates it)
    return tmp_path


def _sweep_context(root):
    from unlearnkit.pipelines.sweep import SweepSettings, load_context

    st = SweepSettings(
        model=str(root / "target"),
        data=str(root / "data"),
        method="gd",
        output=str(root / "sweep"),
        retain_model=str(root / "oracle"),
        max_items=4,
        max_new_tokens=2,
    )
    return load_context(st)


def test_sweep_reference_numbers_follow_the_model_and_data_content(
    sweep_folders, world_tokenizer, monkeypatch
):
    import unlearnkit.pipelines.sweep.reference as reference
    from unlearnkit.models import save_model

    root = sweep_folders
    computed = []
    stock = reference._compute_reference
    monkeypatch.setattr(reference, "_compute_reference", lambda *a: computed.append(1) or stock(*a))
    ref = reference.ensure_reference(_sweep_context(root), log=lambda _: None)
    assert len(computed) == 1
    assert reference.ensure_reference(_sweep_context(root), log=lambda _: None) == ref  # same inputs: reused
    assert len(computed) == 1

    # the target retrained in place: same path, same settings, other weights -> new numbers
    retrained = random_llama(world_tokenizer, hidden=32, kv_heads=4, tie_word_embeddings=True, seed=7)
    save_model(retrained, world_tokenizer, root / "target", {"kind": "retrained"}, overwrite=True)
    new = reference.ensure_reference(_sweep_context(root), log=lambda _: None)
    assert len(computed) == 2 and new["key"] != ref["key"]
    assert new["target_selection"] != ref["target_selection"]
    assert new["oracle_selection"] == ref["oracle_selection"]  # the oracle did not change

    # a data row edited under the same file name: another key (the halves' rows are other rows)
    forget = root / "data" / "forget.jsonl"
    lines = forget.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    row["answer"] = row["answer"] + " indeed"
    forget.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n", encoding="utf-8")
    assert reference._reference_key(_sweep_context(root)) != new["key"]


def test_sweep_reference_key_ignores_the_model_card(sweep_folders):
    """Only what transformers reads is content: rewriting README.md / unlearnkit.json keeps the numbers."""
    import unlearnkit.pipelines.sweep.reference as reference

    key = reference._reference_key(_sweep_context(sweep_folders))
    (sweep_folders / "target" / "README.md").write_text("# edited card\n", encoding="utf-8")
    assert reference._reference_key(_sweep_context(sweep_folders)) == key


def test_embedded_lab_model_cache_follows_the_files_it_trains_on(mini_world, tiny_model_dir, tmp_path):
    """The quickstart's cached target / oracle (unlearnkit.pipelines.embedded) are keyed by the base's weights, the
    split files, the recipe and the seed: an edit, a row moved from one split to the next, retrained
    base weights or another recipe each give another cache entry."""
    from unlearnkit.pipelines.embedded import digest

    world = tmp_path / "world"
    shutil.copytree(mini_world, world)
    base = tmp_path / "base"
    shutil.copytree(tiny_model_dir, base)
    forget, retain, weights = world / "forget.jsonl", world / "retain.jsonl", base / "model.safetensors"
    recipe = {"lr": 1e-3}

    def key(recipe=recipe, seed=0):
        return digest("finetune", recipe, "all", seed, files=[weights, forget, retain])

    first = key()
    assert key(dict(recipe)) == first  # the same inputs: the cached models are reused
    assert key(seed=1) != first and key({"lr": 2e-3}) != first

    # one row moved from the end of forget.jsonl to the start of retain.jsonl: the concatenated bytes are
    # the same, the splits (and so the target trained on them) are not
    f_lines = forget.read_text(encoding="utf-8").splitlines(keepends=True)
    forget.write_text("".join(f_lines[:-1]), encoding="utf-8")
    retain.write_text(f_lines[-1] + retain.read_text(encoding="utf-8"), encoding="utf-8")
    moved = key()
    assert moved != first

    blob = bytearray(weights.read_bytes())  # the base retrained: other weights under the same name
    blob[-1] ^= 1
    weights.write_bytes(bytes(blob))
    assert key() != moved


def test_reference_cache_is_built_from_the_model_of_each_run(world_tokenizer, mini_bench, tmp_path):
    """NPO's first loss is -(2/beta) log sigmoid(0) exactly when the reference equals the policy: with an
    exact cache it does for two different models in a row, so the second run did not reuse the first's."""
    import math

    from unlearnkit.pipelines.unlearn import unlearn

    first_losses = []
    for seed in (0, 5):
        res = unlearn(
            random_llama(world_tokenizer, seed=seed),
            world_tokenizer,
            mini_bench.forget[:4],
            mini_bench.retain[:4],
            "npo",
            work_dir=tmp_path / f"s{seed}",
            quiet=True,
            reference="cache",
            retain_loss="none",
            batch_size=4,
            max_steps=1,
        )
        assert res.reference["strategy"] == "cache"
        first_losses.append(res.log_history[0]["forget_loss"])
    want = -(2 / 0.1) * math.log(0.5)
    assert first_losses == pytest.approx([want, want], rel=SAME_LOGITS_REL)


def test_reference_cache_refuses_examples_it_was_not_built_for(world_tokenizer, mini_bench):
    from unlearnkit.train.cache import Need, ReferenceCache
    from unlearnkit.train.reference import original_reference
    from unlearnkit.train.trainer import PaddingCollator, PairedDataset, encode_rows

    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    forget = encode_rows(mini_bench.forget[:3], world_tokenizer, fmt, 128)
    retain = encode_rows(mini_bench.retain[:3], world_tokenizer, fmt, 128)
    data = PairedDataset(forget, retain, seed=0)
    collate = PaddingCollator(world_tokenizer.pad_token_id)
    cache = ReferenceCache(0).build(
        original_reference(random_llama(world_tokenizer)),
        {Need("logps", "forget")},
        data.parts(),
        {"forget": range(3)},
        collate,
    )
    other = encode_rows(mini_bench.forget[3:6], world_tokenizer, fmt, 128)  # other rows at the same indices
    batch = collate([{"forget": {**other[i], "index": i}} for i in range(3)])["forget"]
    with pytest.raises(RuntimeError, match="does not match the cached ids"):
        cache.token_logps(batch)


def test_a_world_base_is_keyed_by_every_file_its_tokenizer_reads(tmp_path):
    """The base's tokenizer reads every JSONL file of the world, the multiple-choice questions included:
    a change there is another base (and so another target and oracle), though no training row moved."""
    import json

    from unlearnkit.pipelines.embedded import base_key
    from unlearnkit.world import write_world

    world = tmp_path / "w"
    write_world(world, seed=0, n_authors=12, facts_per_author=3, n_general=18, n_agents=2, n_articles=6)
    first = base_key(world, 0)
    assert base_key(world, 0) == first and base_key(world, 1) != first
    assert base_key(world, 0, ("hazard",)) != first
    mc = world / "wmdp" / "mc_general.jsonl"
    rows = [json.loads(line) for line in mc.read_text(encoding="utf-8").splitlines()]
    rows[0]["question"] = rows[0]["question"].replace("?", " today?")
    mc.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    changed = base_key(world, 0)
    assert changed != first
    # but not the WMDP-like holdout (world.json "unseen"): no tokenizer or model reads it
    held = world / "wmdp" / "holdout.jsonl"
    held.write_text(held.read_text(encoding="utf-8").replace(" ", "  ", 1), encoding="utf-8")
    assert base_key(world, 0) == changed


def test_the_tokenizer_never_reads_the_wmdp_holdout(tmp_path):
    """Its agents' names would be words the tokenizer was fitted to, unlike any text no model has met."""
    from unlearnkit.train.pretrain import tokenizer_files, world_texts
    from unlearnkit.world import write_world

    world = tmp_path / "w"
    write_world(world, seed=0, n_authors=12, facts_per_author=3, n_general=18, n_agents=2, n_articles=6)
    read = {p.relative_to(world).as_posix() for p in tokenizer_files(world)}
    every = {p.relative_to(world).as_posix() for p in world.rglob("*.jsonl")}
    assert every - read == {"wmdp/holdout.jsonl"}
    held = {json.loads(line)["entity"] for line in (world / "wmdp" / "holdout.jsonl").open(encoding="utf-8")}
    text = "\n".join(world_texts(world))
    assert held and not [a for a in held if a in text]
    (world / "world.json").write_text("{", encoding="utf-8")
    with pytest.raises(UserError, match="world.json: not valid JSON"):
        tokenizer_files(world)
