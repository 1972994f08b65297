"""Numbers that do not move with the batch layout: batch 8 x accumulation 1 == batch 4 x
accumulation 2 == 2 processes x batch 4, per method family, for ``loss_reduction=sequence``; ``token``
breaks it, for the reason docs/SCALING.md gives; evaluation does not depend on its batch size.

The runs are bench/reproducibility.py's (the script that prints the table into docs/SCALING.md): ONE
``torchrun --nproc_per_node 2`` launch (gloo) runs every family on 2 ranks, the single-process layouts
run here. Tolerances: tests/tolerances.py (``LAYOUT_*``, ``REORDERED_FORWARD_RATIO_REL``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tolerances import LAYOUT_WEIGHT_ATOL, REORDERED_FORWARD_RATIO_REL, SAME_LOGITS_REL

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import reproducibility as repro  # noqa: E402

sys.path.remove(str(REPO / "bench"))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return repro.measure(tmp_path_factory.mktemp("reproducibility"))


def test_sequence_reduction_gives_the_same_run_in_every_layout(results):
    for family in repro.FAMILIES:
        row = results["table"][repro.key(family, "sequence")]
        for layout in ("4x2", "2proc x 4"):
            cell = row[layout]
            assert cell["steps"] == 2, (family, layout, cell)
            assert repro.holds(cell), (family, layout, cell)
            assert cell["update"] > 100 * LAYOUT_WEIGHT_ATOL, (family, cell)  # the weights really moved
        assert row["2proc x 4"]["rank_diff"] == 0.0, family  # DDP: both ranks hold the same weights


def test_token_reduction_depends_on_how_the_batch_is_split(results):
    """``token`` normalises each micro-batch by its own answer-token count; accumulation and DDP then
    average those means with equal weight: the same mean of means in both layouts, not the full batch's."""
    for family, reduction in repro.ROWS:
        if reduction != "token":
            continue
        row = results["table"][repro.key(family, reduction)]
        accum, ddp = row["4x2"], row["2proc x 4"]
        assert accum["weights"] > 10 * LAYOUT_WEIGHT_ATOL and not repro.holds(accum), (family, accum)
        assert ddp["weights"] > 10 * LAYOUT_WEIGHT_ATOL and not repro.holds(ddp), (family, ddp)
        assert abs(accum["weights"] - ddp["weights"]) <= LAYOUT_WEIGHT_ATOL  # one and the same mean of means


def test_token_reduction_is_the_token_count_weighted_mean(world_tokenizer, mini_bench, tiny_random_llama):
    """On one batch of 8 split 4 + 4 with different answer-token counts: ``sequence`` over 8 = the plain
    mean of the halves (what accumulation and DDP compute); ``token`` over 8 = the halves weighted by their
    token counts, which the plain mean misses."""
    import torch

    from unlearnkit.data.encode import PromptFormat, pad_id_of
    from unlearnkit.pipelines.unlearn import resolve_configs
    from unlearnkit.train.methods import StepContext, get_method
    from unlearnkit.train.trainer import PaddingCollator, PairedDataset, encode_rows

    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    forget = encode_rows(mini_bench.forget[:8], world_tokenizer, fmt, 128)
    retain = encode_rows(mini_bench.retain[:8], world_tokenizer, fmt, 128)
    dataset = PairedDataset(forget, retain, seed=0)
    collate = PaddingCollator(pad_id_of(world_tokenizer))
    # shortest four answers in one micro-batch, longest four in the other: unequal token counts
    order = sorted(range(8), key=lambda i: sum(t != -100 for t in forget[i]["labels"]))
    halves = [collate([dataset[i] for i in idx]) for idx in (order[:4], order[4:])]
    whole = collate([dataset[i] for i in order])
    counts = [int((h["forget"]["labels"][:, 1:] != -100).sum()) for h in halves]
    assert counts[0] != counts[1], counts  # the case where the two reductions disagree
    method = get_method("ga")
    with torch.no_grad():  # peaked predictions: answers' NLLs differ, so the weighting is visible
        tiny_random_llama.lm_head.weight.mul_(30)

    def loss(batch, reduction):
        _, _, cfg = resolve_configs(method, {"loss_reduction": reduction})
        with torch.no_grad():
            return float(method.step(StepContext(tiny_random_llama), batch, cfg)[0])

    seq = [loss(h, "sequence") for h in halves]
    assert loss(whole, "sequence") == pytest.approx(sum(seq) / 2, rel=SAME_LOGITS_REL)
    tok = [loss(h, "token") for h in halves]
    weighted = (counts[0] * tok[0] + counts[1] * tok[1]) / sum(counts)
    assert loss(whole, "token") == pytest.approx(weighted, rel=SAME_LOGITS_REL)
    # what accumulation / DDP compute instead misses it by (n_a - n_b)(t_a - t_b) / (2 (n_a + n_b))
    missed = loss(whole, "token") - sum(tok) / 2
    want = (counts[0] - counts[1]) * (tok[0] - tok[1]) / (2 * sum(counts))
    rounding = 2 * SAME_LOGITS_REL * abs(weighted)  # two fp32 losses of this size subtracted
    assert missed == pytest.approx(want, abs=rounding) and abs(missed) > 10 * rounding


def test_evaluation_does_not_depend_on_its_batch_size(results):
    ev = results["evaluation"]
    assert ev["n_metrics"] >= 20
    for b in repro.EVAL_BATCHES:
        # batches of 1, 5 and 32 pad differently: reordered forwards (tests/tolerances.py)
        assert ev[str(b)]["max_rel"] <= REORDERED_FORWARD_RATIO_REL, (b, ev[str(b)])
        assert ev[str(b)]["rouge_equal"], b  # greedy generations identical


def test_scaling_md_holds_this_scripts_table():
    """docs/SCALING.md's table is bench/reproducibility.py's rendering of its results (re-run the script
    after changing the training or evaluation code)."""
    stored = json.loads((repro.RESULTS / "reproducibility.json").read_text(encoding="utf-8"))
    assert stored["rows"] == [repro.key(f, r) for f, r in repro.ROWS]
    scaling = repro.SCALING.read_text(encoding="utf-8")
    assert repro.synced(scaling, repro.render(stored)) == scaling, "run python bench/reproducibility.py"
    for family in repro.FAMILIES:
        row = stored["table"][repro.key(family, "sequence")]
        assert repro.holds(row["4x2"]) and repro.holds(row["2proc x 4"]), family
