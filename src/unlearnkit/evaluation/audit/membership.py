"""Check 1, membership inference (MUSE's PrivLeak setting, arXiv 2407.06460): ROC AUC of the LOSS,
zlib, Min-K% and Min-K%++ scores separating forget items (members) from holdout items (non-members).

About 0.5 = no membership signal, which is what the oracle gets; far above 0.5 = the forget set is
still recognisably "seen"; far below 0.5 = it was pushed below never-seen data, which is itself
detectable. QA rows are scored by :func:`unlearnkit.evaluation.evaluate.evaluate_split`; raw texts
whole by :func:`text_membership_scores`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from unlearnkit.errors import UserError
from unlearnkit.evaluation.audit.common import check_row, others_line

if TYPE_CHECKING:  # the checks read the auditor's rows; run.py imports this module
    from unlearnkit.evaluation.audit.run import Auditor


MIA_ATTACKS = (("loss", "LOSS"), ("zlib", "zlib"), ("min_k", "Min-K%"), ("min_k_plus_plus", "Min-K%++"))


def text_membership_scores(
    model, tokenizer, texts: Sequence[str], max_length: int = 512, batch_size: int = 32
) -> dict[str, list[float]]:
    """Per-text membership scores (higher = more likely trained on) of the audit's four attacks.

    Each text is scored whole, as MUSE scores its PrivLeak texts (:func:`unlearnkit.protocols.muse.
    min_k_scores`): tokenised with the tokenizer's special tokens, cut to its first ``max_length``
    tokens, every token after the first a target. LOSS and zlib (over the scored text) read the mean
    log-prob, Min-K% and Min-K%++ the lowest 40 % (k = 0.4, MUSE's); the Min-K% numbers are
    :func:`~unlearnkit.protocols.muse.min_k_scores`'. A text of fewer than 2 tokens is a UserError."""
    import torch

    from unlearnkit.data.encode import pad_batch, pad_id_of
    from unlearnkit.metrics import mia
    from unlearnkit.tokens import shift, token_logps

    encoded, scored = [], []
    for i, text in enumerate(texts):
        ids = list(
            tokenizer(text, add_special_tokens=True, truncation=True, max_length=max_length)["input_ids"]
        )
        if len(ids) < 2:
            raise UserError(
                f"text {i + 1} has fewer than 2 tokens; nothing to score for membership inference"
            )
        encoded.append({"input_ids": ids, "labels": ids})
        full = len(tokenizer(text, add_special_tokens=True)["input_ids"])
        scored.append(text if full == len(ids) else tokenizer.decode(ids, skip_special_tokens=True))
    out: dict[str, list[float]] = {attack: [0.0] * len(texts) for attack, _ in MIA_ATTACKS}
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]["input_ids"]))
    device, pad = next(model.parameters()).device, pad_id_of(tokenizer)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for s in range(0, len(order), batch_size):
                idx = order[s : s + batch_size]
                batch = {k: v.to(device) for k, v in pad_batch([encoded[i] for i in idx], pad).items()}
                logits = model(
                    input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False
                ).logits
                logps, mask = token_logps(logits, batch["labels"], exact=True)
                mu, sigma = mia.logprob_stats(shift(logits, batch["labels"])[0].float())
                for row, i in enumerate(idx):
                    lp, m = logps[row : row + 1], mask[row : row + 1]
                    out["loss"][i] = float(mia.loss_score(lp, m)[0])
                    out["zlib"][i] = float(mia.zlib_score(lp, m, [scored[i]])[0])
                    out["min_k"][i] = float(mia.min_k_score(lp, m, 0.4)[0])
                    out["min_k_plus_plus"][i] = float(
                        mia.min_k_plus_plus_score(lp, mu[row : row + 1], sigma[row : row + 1], m, 0.4)[0]
                    )
    finally:
        model.train(was_training)
    return out


def mia_check(measured: dict, a: Auditor) -> dict[str, Any]:
    noun = "texts" if a.text else "items"
    check: dict[str, Any] = {
        "id": "mia",
        "title": "Membership inference (forget = members, holdout = non-members)",
        "about": "ROC AUC per attack; 0.5 = no membership signal (what the retain oracle gets). "
        f"Above 0.5: forget {noun} still look trained-on; below 0.5: they look less likely than "
        f"never-seen {noun}, which also gives the unlearning away."
        + (
            " Each text is scored whole (every token after the first, at most max_length tokens); "
            "MUSE's PrivLeak AUC is 1 minus the Min-K% one here (it counts holdout above forget)."
            if a.text
            else ""
        ),
    }
    if not a.holdout:
        if a.text and a.kind == "wmdp":
            reason = (
                "a WMDP-like folder has no holdout passages (holdout.jsonl): no passage of the domain "
                "that no model trained on to compare the forget passages with (a lab world of format 11 "
                "or later writes wmdp/holdout.jsonl)"
            )
        else:
            reason = "the benchmark has no holdout split (holdout.jsonl)"
        check.update(rows=[], skipped=reason)
        check["verdict"] = (
            f"membership inference: skipped, {reason}"
            if a.text
            else "membership inference: skipped, no holdout split to compare the forget set with"
        )
        return check
    check["rows"] = [
        check_row(f"AUC {label}", measured, lambda m, k=k: m[f"mia_{k}_auc"]) for k, label in MIA_ATTACKS
    ]

    def strongest(role: str) -> tuple[str, float] | None:
        aucs = [(label, measured[role].get(f"mia_{k}_auc")) for k, label in MIA_ATTACKS]
        aucs = [(label, v) for label, v in aucs if v is not None]
        return max(aucs, key=lambda t: abs(t[1] - 0.5)) if aucs else None

    best = strongest("audited")
    if best is None:
        check["verdict"] = "membership inference: no AUC could be computed"
        return check
    label, value = best
    parts = {}
    for role in ("oracle", "original"):
        if role in measured and measured[role].get(f"mia_{_attack_key(label)}_auc") is not None:
            parts[role] = f"{measured[role][f'mia_{_attack_key(label)}_auc']:.2f}"
    direction = "above" if value >= 0.5 else "below"
    check["verdict"] = (
        f"membership inference: the strongest attack ({label}) separates the {len(a.forget)} forget {noun} "
        f"from the {len(a.holdout)} holdout {noun} with AUC {value:.2f} ({abs(value - 0.5):.2f} {direction} "
        f"the no-signal 0.5){others_line(parts)}"
    )
    check["strongest_attack"] = label
    return check


def _attack_key(label: str) -> str:
    return dict((lab, k) for k, lab in MIA_ATTACKS)[label]
