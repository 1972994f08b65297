"""A guard against silent collapse during unlearning (open-unlearning #167: default settings
that destroy the model while every loss looks fine).

Gradient-ascent-style objectives are unbounded: run too long or too fast they drive the model into
repeating one token or answering nothing, which a falling forget metric alone reads as success. The
guard asks a **probe** a handful of questions the model must keep answering and compares the answers
with those it gave at step 0:

* **QA data**: :data:`PROBE_ROWS` retain questions plus :data:`PROBE_ROWS` general ones (``unlearn``
  passes the selection half of the benchmark's retain / general rows), answered greedily with at most
  :data:`PROBE_NEW_TOKENS` new tokens in the training prompt format;
* **raw text** (MUSE-like, WMDP-like, plain text folders): a text-continuation probe: the first
  :data:`TEXT_PROMPT_TOKENS` tokens (at most half) of a few retain passages, continued greedily, against
  the passage's true next :data:`PROBE_NEW_TOKENS` tokens.

Measured per probe (means over its items): ROUGE-L recall of the generation against the reference
(:func:`rouge_l_recall`: rouge_score's tokenization and longest common subsequence, without TOFU's
Porter stemmer, see there why), the normalised token entropy of the
generation (closer-look, :func:`unlearnkit.metrics.scores.token_entropy`: 0 for "the the the") and
:func:`repetition`, the share of its token 3-grams that repeat an earlier one. A probe **fails**
(:func:`verdict`) when

* utility fell: ROUGE-L < ``collapse_fraction`` x its step-0 value (skipped when the step-0 value is
  below :data:`MIN_START_ROUGE`: a model that never answered cannot lose it), or
* the output degenerated: repetition > max(:data:`REPEAT_LIMIT`, step 0 + :data:`REPEAT_MARGIN`), or
  token entropy < ``collapse_fraction`` x its step-0 value (when that was at least
  :data:`MIN_START_ENTROPY`).

Then ``collapse_guard=warn`` (the default) prints one line on stderr naming what to lower (lr,
forget_weight, epochs) and records the step in the model card; ``stop`` also ends training and
restores the weights of the last probe that passed (a CPU copy of the trainable weights is kept at
each passing probe: LoRA's adapters, or one copy of the full weights); ``off`` (``--no-collapse-guard``)
does nothing. Cost: a probe at step 0, every ceil(steps / :data:`PROBES`) steps (``stop``:
:data:`STOP_PROBES`) and at the last step (:func:`probe_steps`), so at most ``PROBES + 2`` probes of at
most ``2 * PROBE_ROWS`` short greedy generations each; not counted in the run's compute.

Why 2 probes after step 0 by default (``warn``) and 10 with ``stop``: a probe is ~14 sequential forward
passes (greedy decoding until the answers' EOS), as long as 1-2 training steps of the
quickstart's lab model; with a probe every ~10 % of the steps (the default until bench/speed.py measured
it) the guard took 8-19 % of the training time of the quickstart's methods, 5-10 % without its first
probe's import of nltk (now gone, :func:`rouge_l_recall`), and with one every ~25 % still 4.5-8.3 %
(lab version 9), over the few percent a default should cost; halfway only, 2.8-5.4 % (the most for GA,
whose steps are the cheapest: its halfway probe reads a collapsed model, which never stops before the
token cap, so it paid the full 24 tokens). Hence the cap of 16 new tokens (24 before): an answer of the
lab (at most 13 tokens and EOS; 2.5 % of its general answers are longer) still ends before it, so a
healthy probe costs what it did, while a collapsed one is cut to 16 tokens, 14 3-grams, enough for
:func:`repetition` to read a loop of up to 6 tokens above :data:`REPEAT_LIMIT`, and for the entropy and
ROUGE-L, which are compared with their own step-0 values on the same cap (measured with it: 1.5-2.8 %,
GA the most, bench/results/speed.md). ``warn`` only reports, and its last probe
always reads the weights the run ends with, so a collapsed output is flagged however few probes came
before; fewer probes only make the step it names coarser (halfway or the end). ``stop`` goes back to
the last probe that passed: its probes are the states it can keep, so it keeps every ~10 %. Multi-process runs: the main process probes, the others wait (with
``stop`` the decision is broadcast). FSDP / ZeRO-3 shard the weights: the guard is off there.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from transformers import TrainerCallback
from transformers.trainer_callback import ExportableState

from unlearnkit.train.callback_state import (
    broadcast_flag,
    load_trainable_state,
    looking_at,
    stored_attributes,
    trainable_state,
)

PROBE_ROWS = 4  # questions (or passages) per source: retain, general
PROBE_NEW_TOKENS = 16  # covers a lab answer (<= 13 tokens + EOS); a loop or gibberish shows within it
TEXT_PROMPT_TOKENS = 32
MIN_TEXT_TOKENS = 8  # a passage shorter than this gives no continuation to compare
PROBES = 2  # warn: probes after step 0, halfway and at the end (see the module docstring)
STOP_PROBES = 10  # stop: about every 10 % (the states it can go back to)
MIN_START_ROUGE = 0.05
MIN_START_ENTROPY = 0.1
REPEAT_LIMIT = 0.5
REPEAT_MARGIN = 0.25


def probe_interval(max_steps: int, action: str = "warn") -> int:
    """Steps between two probes of a run of ``max_steps`` steps (``stop``: :data:`STOP_PROBES` of them,
    else :data:`PROBES`)."""
    return max(1, math.ceil(max_steps / (STOP_PROBES if action == "stop" else PROBES)))


def probe_steps(max_steps: int, action: str = "warn") -> list[int]:
    """The steps a fresh run probes: 0, every :func:`probe_interval` steps and the last one."""
    every = probe_interval(max_steps, action)
    return sorted({0, *range(every, max_steps + 1, every), max_steps})


_NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")


def rouge_l_recall(prediction: str, reference: str) -> float:
    """ROUGE-L recall of ``prediction`` against ``reference`` as rouge_score computes it (lower-cased,
    non-alphanumerics dropped, longest common subsequence of the tokens / reference tokens) without the
    Porter stemmer that TOFU's ROUGE (:func:`unlearnkit.metrics.scores.rouge_l_recall`) adds.

    Why not TOFU's: rouge_score imports nltk, and on the guard's first probe that import took 0.3-1.2 s
    and 167 MiB of resident memory (2 shared CPU cores), more than the other probes of a quickstart run
    together; the guard only compares each probe with its own step-0 value, where a stemmer changes
    nothing it decides. Equal to ``RougeScorer(["rougeL"], use_stemmer=False)`` (tests/test_collapse_guard.py).
    """
    ref = _NON_ALPHANUMERIC.sub(" ", reference.lower()).split()
    pred = _NON_ALPHANUMERIC.sub(" ", prediction.lower()).split()
    if not ref or not pred:
        return 0.0
    row = [0] * (len(pred) + 1)  # one row of the LCS table at a time
    for r in ref:
        prev_diag = 0
        for j, p in enumerate(pred, 1):
            prev_diag, row[j] = row[j], prev_diag + 1 if r == p else max(row[j], row[j - 1])
    return row[-1] / len(ref)


def repetition(ids: Sequence[int], n: int = 3) -> float:
    """Share of the ``n``-grams of one generation that repeat an earlier one: 0 when none does, close to
    1 for a loop (``a a a a a``: 1 - 1/3); 0 for generations shorter than ``n`` tokens."""
    grams = [tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)]
    if not grams:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)


@dataclass
class ProbeItem:
    prompt_ids: list[int]
    reference: str
    shown: str  # the question (or the passage's start), for the warning line


class UtilityProbe:
    """A few prompts and their references; :meth:`measure` answers them greedily and scores the answers."""

    def __init__(self, items: list[ProbeItem], kind: str) -> None:
        self.items, self.kind = items, kind

    @classmethod
    def from_rows(
        cls, tokenizer, fmt, retain: Sequence[dict], general: Sequence[dict] = (), seed: int = 0
    ) -> UtilityProbe | None:
        """QA rows give questions, raw ``text`` rows continuations; None when no row is usable."""
        from unlearnkit.evaluation.evaluate import subsample

        qa = [r for r in list(retain) + list(general) if "question" in r and "answer" in r]
        if qa:
            rows = subsample([r for r in retain if "question" in r], PROBE_ROWS, seed)
            rows += subsample([r for r in general if "question" in r], PROBE_ROWS, seed)
            items = [
                ProbeItem(fmt.prompt_ids(tokenizer, r["question"]), r["answer"], r["question"]) for r in rows
            ]
            return cls(items, "qa")
        items = []
        for row in subsample([r for r in retain if r.get("text")], 2 * PROBE_ROWS, seed):
            ids = tokenizer(row["text"], add_special_tokens=True)["input_ids"]
            if len(ids) < MIN_TEXT_TOKENS:
                continue
            cut = min(TEXT_PROMPT_TOKENS, len(ids) // 2)
            reference = tokenizer.decode(ids[cut : cut + PROBE_NEW_TOKENS], skip_special_tokens=True)
            if reference.strip():
                shown = tokenizer.decode(ids[:cut], skip_special_tokens=True)
                items.append(ProbeItem(ids[:cut], reference, shown))
        return cls(items, "text") if items else None

    def describe(self) -> dict[str, Any]:
        kind = "retain / general questions" if self.kind == "qa" else "retain passage continuations"
        return {"kind": kind, "items": len(self.items), "max_new_tokens": PROBE_NEW_TOKENS}

    def measure(self, model, tokenizer) -> dict[str, Any]:
        """Mean ROUGE-L recall, token entropy and repetition of greedy answers (call under no_grad)."""
        from unlearnkit.metrics import scores as S
        from unlearnkit.metrics.passes import greedy_token_ids

        prompts = [item.prompt_ids for item in self.items]
        ids = greedy_token_ids(model, tokenizer, prompts, PROBE_NEW_TOKENS, batch_size=len(prompts))
        texts = [tokenizer.decode(t, skip_special_tokens=True).strip() for t in ids]
        rouge = [rouge_l_recall(text, item.reference) for text, item in zip(texts, self.items)]
        n = len(self.items)
        worst = max(range(n), key=lambda i: (repetition(ids[i]), -rouge[i]))
        return {
            "rougeL_recall": round(sum(rouge) / n, 6),
            "token_entropy": round(sum(S.token_entropy(t) for t in ids) / n, 6),
            "repetition": round(sum(repetition(t) for t in ids) / n, 6),
            "empty": sum(1 for t in texts if not t),
            "sample": texts[worst][:80],
        }


def verdict(start: dict[str, Any], now: dict[str, Any], fraction: float) -> list[str]:
    """Why the probe ``now`` counts as a collapse against its step-0 value ``start`` (empty: it does not)."""
    reasons = []
    if start["rougeL_recall"] >= MIN_START_ROUGE and now["rougeL_recall"] < fraction * start["rougeL_recall"]:
        reasons.append(
            f"the utility probe's ROUGE-L fell to {now['rougeL_recall']:.3f} "
            f"(step 0: {start['rougeL_recall']:.3f}; limit {fraction:g} x that)"
        )
    limit = max(REPEAT_LIMIT, start["repetition"] + REPEAT_MARGIN)
    if now["repetition"] > limit:
        reasons.append(
            f"its answers repeat themselves ({now['repetition']:.0%} of 3-grams repeated, "
            f"step 0: {start['repetition']:.0%})"
        )
    elif (
        start["token_entropy"] >= MIN_START_ENTROPY
        and now["token_entropy"] < fraction * start["token_entropy"]
    ):
        reasons.append(
            f"their token entropy fell to {now['token_entropy']:.2f} (step 0: {start['token_entropy']:.2f})"
        )
    return reasons


class CollapseGuard(TrainerCallback, ExportableState):
    """Probes at step 0, halfway (``stop``: every ~10 %) and at the end; warns or stops on a
    collapse.

    ``hint``: the settings to name in the message (``lr``, ``forget_weight``, ``epochs`` / ``max_steps``).
    ``record()`` is what the model card gets. Resumable: the step-0 probe and the checks are stored in
    every checkpoint (``trainer_state.json``) and read back by :meth:`restore`.
    """

    def __init__(
        self,
        probe: UtilityProbe,
        tokenizer,
        action: str = "warn",
        fraction: float = 0.5,
        hint: dict[str, Any] | None = None,
        counter=None,
        quiet: bool = False,
    ) -> None:
        self.probe, self.tokenizer, self.action, self.fraction = probe, tokenizer, action, fraction
        self.hint, self.counter, self.quiet = dict(hint or {}), counter, quiet
        self.start: dict[str, Any] | None = None
        self.checks: list[dict[str, Any]] = []
        self.triggered: dict[str, Any] | None = None
        self.interval = 1
        self._good: dict | None = None  # stop: trainable weights at the last passing probe
        self._good_step: int | None = None

    # --- Trainer hooks ----------------------------------------------------------------------------

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.interval = probe_interval(state.max_steps, self.action)
        # Fresh: the step-0 probe every later one is compared with. Resumed: a probe of the resumed
        # weights (the last good state of this process; the step-0 values come from the checkpoint).
        if self.triggered is None and (self.start is None or self.action == "stop"):
            self._check(model, state, control)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        step = state.global_step
        if self.triggered is not None and self.action == "warn":
            return  # said once; the card has the step
        if step % self.interval == 0 or step >= state.max_steps:
            self._check(model, state, control)

    # --- the check --------------------------------------------------------------------------------

    def _check(self, model, state, control) -> None:
        step = state.global_step
        failed = False
        if state.is_world_process_zero:
            with looking_at(model, self.counter):
                now = self.probe.measure(model, self.tokenizer)
            if self.start is None:
                self.start = now
            reasons = verdict(self.start, now, self.fraction)
            failed = bool(reasons)
            self.checks.append(
                {"step": step, **{k: now[k] for k in ("rougeL_recall", "token_entropy", "repetition")}}
            )
        if self.action == "stop":
            failed = broadcast_flag(failed)  # every process stops at the same step, or none does
        if not failed:
            if self.action == "stop":
                self._good, self._good_step = trainable_state(model), step
            return
        if state.is_world_process_zero:
            self.triggered = {
                "step": step,
                "of_steps": state.max_steps,
                "why": reasons,
                "sample": now["sample"],
            }
        if self.action == "stop":
            control.should_training_stop = True
            if self._good is not None:
                load_trainable_state(model, self._good)
            if self.triggered is not None:  # None: the weights this run resumed from already fail
                self.triggered["kept_step"] = self._good_step
        if state.is_world_process_zero and not self.quiet:
            from tqdm import tqdm

            tqdm.write(f"unlearnkit: warning: {self.message()}", file=sys.stderr)  # above a progress bar

    def message(self) -> str:
        t = self.triggered or {}
        named = [
            f"{key} (now {self.hint[key]:g})"
            for key in ("lr", "forget_weight", "epochs", "max_steps")
            if isinstance(self.hint.get(key), int | float)
        ]
        change = " or ".join([", ".join(named[:-1]), named[-1]]) if len(named) > 1 else "".join(named)
        sample = f' (e.g. "{t["sample"]}")' if t.get("sample") else " (answers are empty)"
        head = f"collapse guard: at step {t.get('step')} of {t.get('of_steps')} " + "; ".join(
            t.get("why", [])
        )
        if "kept_step" in t and t["kept_step"] is None:
            tail = f"; training stopped: the weights it resumed from already fail the probe. Lower {change}"
        elif "kept_step" in t:
            tail = (
                f"; training stopped, the output keeps the weights of step {t['kept_step']} (the last probe "
                f"that passed{': nothing unlearned' if t['kept_step'] == 0 else ''}). Lower {change}"
            )
        else:
            tail = (
                f"; lower {change}; --set collapse_guard=stop ends training at the last good state, "
                "--no-collapse-guard turns the guard off"
            )
        return head + sample + tail

    def record(self) -> dict[str, Any]:
        """For ``unlearnkit.json`` / the model card."""
        return {
            "action": self.action,
            "collapse_fraction": self.fraction,
            "probe": {**self.probe.describe(), "every_steps": self.interval},
            "step_0": {k: self.start[k] for k in ("rougeL_recall", "token_entropy", "repetition")}
            if self.start
            else None,
            "checks": self.checks,
            "triggered": self.triggered,
        }

    # --- resume -----------------------------------------------------------------------------------

    def state(self) -> dict:
        return {
            "args": {},
            "attributes": {"start": self.start, "checks": self.checks, "triggered": self.triggered},
        }

    def restore(self, checkpoint) -> None:
        stored = stored_attributes(checkpoint, type(self).__name__)
        if stored:
            self.start, self.checks = stored.get("start"), list(stored.get("checks") or [])
            self.triggered = stored.get("triggered")


def probe_rows_of(bench, seed: int) -> tuple[list[dict], list[dict]]:
    """The retain and general rows the probe of a run on ``bench`` asks: their selection halves
    (:func:`unlearnkit.data.halves.split_halves`: ``stop`` chooses a state, and choices never read the
    test half), or the whole parts when they cannot be cut (fewer than 2 entities)."""
    from unlearnkit.data.halves import split_halves
    from unlearnkit.errors import UserError

    try:
        selection, _, _ = split_halves(bench, seed)
    except UserError:
        selection = bench
    return list(selection.retain), list(selection.general)
