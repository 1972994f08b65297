"""``reference=cache``: reference / teacher outputs computed once, before training, by example index.

What a method asks of its reference is found by a *probe*: one step of the method on one paired
batch against the original model, recording every request (kind, batch part, tau / layers). The
cache then runs the ORIGINAL model (adapters off, dropout off, before any update; ASU teachers under
``smoothed_attention`` with the method's tau / layers) over every example that training will ask
about, batched and sorted by length, and stores per example only the label positions (answer tokens;
every objective masks the prompt out):

* ``logps``  per-token reference log-probs (NPO, DPO): ``n_tokens * 4`` bytes, always exact;
* ``hidden`` raw decoder-layer outputs (RMU-style), at every real token of the example (RMU reads
  the tokens' own positions): ``n_tokens * H * 4`` bytes, exact;
* ``logits`` / ``teacher`` full-vocabulary distributions (KL retain, ASU teacher, UNDIAL):
  ``cache_topk = 0``: the exact logits (``n_tokens * V * 4`` bytes);
  ``cache_topk = k``: the top-k log-probs, their ids and the log of the residual mass
  (``n_tokens * (8k + 4)`` bytes). The KL against a top-k cache treats the residual as ONE bucket:
  ``sum_topk p_i log(p_i/q_i) + r log(r/Q_rest)`` with ``Q_rest`` the policy's mass outside the
  top-k. That is the KL between the two distributions coarsened to k+1 outcomes: a lower bound of the
  exact KL, short of it by ``r * KL(p_rest/r || q_rest/Q_rest)``. It is computed through the
  ordinary ``forward_kl_loss`` by giving the residual the policy's own (detached) shape,
  ``p_hat_j = r q_j / Q_rest``, which gives exactly the bucket KL and its gradient; so a top-k lookup
  needs the policy's logits (``needs_student``; ``unlearnkit.train.trainer.TrainStepContext`` passes them).

Keys: forget-side entries by forget index, retain-side entries by retain index (the retain partner
of a forget example changes every epoch, so every retain example the run will pair is cached). A
lookup checks the stored input ids against the batch, so an index mix-up fails loudly. Every rank of
a multi-process run computes the full cache itself (deterministic, no communication).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import torch

from unlearnkit.attention import smoothed_attention
from unlearnkit.data.encode import IGNORE_INDEX
from unlearnkit.tokens import token_logps
from unlearnkit.train.reference import ModelReference, Reference, layer_outputs

log = logging.getLogger(__name__)

FULL_VOCAB = ("logits", "teacher")


@dataclass(frozen=True)
class Need:
    """One kind of reference output a method asks for, on one part of the paired batch."""

    kind: str  # logps | logits | teacher | hidden
    part: str  # forget | retain | idk | retain_idk
    tau: float | None = None  # teacher / smoothed hidden
    layers: tuple[int, ...] | None = None  # smoothed layers (None = all)
    layer: int | None = None  # decoder-layer index (0-based) of a hidden need

    @property
    def smoothing(self) -> tuple[float, tuple[int, ...] | None] | None:
        return (self.tau, self.layers) if self.tau is not None else None

    def describe(self) -> str:
        extra = f", tau={self.tau}, layers={list(self.layers) if self.layers else 'all'}" if self.tau else ""
        extra += f", layer={self.layer}" if self.layer is not None else ""
        return f"{self.kind}({self.part}{extra})"


def _part(batch) -> str:
    part = batch.get("part")
    if not isinstance(part, str) or "index" not in batch:
        raise RuntimeError(
            "reference=cache needs batches built by unlearnkit.train.trainer.PairedDataset/PaddingCollator "
            "(each part carries 'part' and 'index'); use reference=copy for other data"
        )
    return part


def _layers(layers) -> tuple[int, ...] | None:
    return tuple(int(x) for x in layers) if layers is not None else None


class RecordingReference(Reference):
    """Answers like ``inner`` and records what was asked (the probe of a method's needs)."""

    def __init__(self, inner: Reference) -> None:
        self.inner = inner
        self.name = f"recording({inner.name})"
        self.needs: set[Need] = set()
        self.vocab: int | None = None
        self.hidden_size: int | None = None
        self.logits_dtype: torch.dtype | None = None

    def _note_logits(self, out):
        self.vocab, self.logits_dtype = out.shape[-1], out.dtype
        return out

    def logits(self, batch):
        self.needs.add(Need("logits", _part(batch)))
        return self._note_logits(self.inner.logits(batch))

    def token_logps(self, batch):
        self.needs.add(Need("logps", _part(batch)))
        return self.inner.token_logps(batch)

    def teacher_logits(self, batch, tau, layers):
        self.needs.add(Need("teacher", _part(batch), float(tau), _layers(layers)))
        return self._note_logits(self.inner.teacher_logits(batch, tau, layers))

    def hidden(self, batch, layer, tau=None, layers=None):
        smooth = (float(tau), _layers(layers)) if tau is not None else (None, None)
        self.needs.add(Need("hidden", _part(batch), *smooth, layer=int(layer)))
        out = self.inner.hidden(batch, layer, tau, layers)
        self.hidden_size = out.shape[-1]
        return out


def answer_positions(labels: Sequence[int]) -> list[int]:
    """Aligned positions ``t`` (logits at t predict token t+1) whose next token is a label."""
    return [t for t in range(len(labels) - 1) if labels[t + 1] != IGNORE_INDEX]


def estimate_bytes(
    needs: Iterable[Need],
    examples: dict[str, list[dict]],
    indices: dict[str, Sequence[int]],
    vocab: int,
    hidden_size: int,
    topk: int = 0,
    logits_bytes: int = 4,
) -> int:
    """Bytes the cache of ``needs`` will hold (the answer positions of every example it covers)."""
    total = 0
    for need in needs:
        n_tok = sum(len(answer_positions(examples[need.part][i]["labels"])) for i in indices[need.part])
        if need.kind == "logps":
            per = 4
        elif need.kind == "hidden":  # stored at every real token, not only answer positions
            total += (
                sum(len(examples[need.part][i]["input_ids"]) for i in indices[need.part]) * hidden_size * 4
            )
            continue
        elif topk > 0 and topk < vocab:
            per = topk * 8 + 4
        else:
            per = vocab * logits_bytes
        total += n_tok * per
    return total


@dataclass
class _Entry:
    ids: torch.Tensor  # the example's input ids (lookup check)
    pos: torch.Tensor  # aligned answer positions
    values: dict[Need, object] = field(default_factory=dict)


class ReferenceCache(Reference):
    """Reference / teacher outputs of the original model, stored per (part, example index)."""

    name = "cache"

    def __init__(self, topk: int = 0) -> None:
        self.topk = int(topk)
        self.entries: dict[tuple[str, int], _Entry] = {}
        self.needs: set[Need] = set()
        self.nbytes = 0
        self.build_seconds = 0.0
        self._residual = [0.0, 0]  # sum and count of the top-k residual mass r over cached positions

    @property
    def residual_mass(self) -> float:
        """Mean probability mass outside the top-k (0 for an exact cache): the top-k error scale."""
        total, count = self._residual
        return total / count if count else 0.0

    @property
    def needs_student(self) -> bool:
        return self.topk > 0 and any(n.kind in FULL_VOCAB for n in self.needs)

    # --- building -----------------------------------------------------------------------------

    @torch.no_grad()
    def build(
        self,
        original: ModelReference,
        needs: Iterable[Need],
        examples: dict[str, list[dict]],
        indices: dict[str, Sequence[int]],
        collate: Callable[[list[dict]], dict],
        batch_size: int = 8,
        device: torch.device | str | None = None,
        autocast: Callable[[], contextlib.AbstractContextManager] | None = None,
    ) -> ReferenceCache:
        """Run ``original`` (the model before any update) over every example ``needs`` covers."""
        t0 = time.perf_counter()
        self.needs |= set(needs)
        model = original.model
        device = device or next(model.parameters()).device
        groups: dict[tuple, list[Need]] = defaultdict(list)  # one forward per (part, smoothing)
        for need in sorted(self.needs, key=lambda n: (n.part, str(n.smoothing), n.kind, str(n.layer))):
            groups[(need.part, need.smoothing)].append(need)
        for (part, smoothing), group in groups.items():
            order = sorted(indices[part], key=lambda i: (len(examples[part][i]["input_ids"]), i))
            hidden_layers = sorted({n.layer for n in group if n.kind == "hidden"})
            for start in range(0, len(order), batch_size):
                chunk = order[start : start + batch_size]
                batch = collate([examples[part][i] for i in chunk])
                batch = {k: v.to(device) for k, v in batch.items() if isinstance(v, torch.Tensor)}
                smooth = (
                    smoothed_attention(model, smoothing[0], list(smoothing[1]) if smoothing[1] else None)
                    if smoothing
                    else contextlib.nullcontext()
                )
                # Raw decoder-layer outputs through hooks (hidden_states[-1] would be after the final norm).
                with (
                    layer_outputs(model, hidden_layers) as captured,
                    original.model_context(),
                    smooth,
                    (autocast or contextlib.nullcontext)(),
                ):
                    out = model(
                        input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False
                    )
                logps = (
                    token_logps(out.logits, batch["labels"])[0]
                    if any(n.kind == "logps" for n in group)
                    else None
                )
                for row, idx in enumerate(chunk):
                    entry = self._entry(part, idx, examples[part][idx])
                    pos = entry.pos.to(device)
                    for need in group:
                        if need.kind == "logps":
                            value = logps[row, pos].float().cpu()
                        elif need.kind == "hidden":
                            # Every real token (RMU reads activations at the tokens' own positions).
                            value = captured[need.layer][row, : len(entry.ids)].detach().cpu()
                        else:
                            value = self._store_distribution(out.logits[row, pos])
                        entry.values[need] = value
                        self.nbytes += _nbytes(value)
                del out, logps, captured  # free this batch's activations before the next forward
        self.build_seconds += time.perf_counter() - t0
        return self

    def _entry(self, part: str, idx: int, example: dict) -> _Entry:
        key = (part, idx)
        if key not in self.entries:
            self.entries[key] = _Entry(
                torch.tensor(example["input_ids"]), torch.tensor(answer_positions(example["labels"]))
            )
        return self.entries[key]

    def _store_distribution(self, logits: torch.Tensor):
        vocab = logits.shape[-1]
        if self.topk <= 0 or self.topk >= vocab:
            return logits.detach().cpu()  # exact: the logits themselves, in the model's output dtype
        logp = torch.log_softmax(logits.float(), dim=-1)
        top = logp.topk(self.topk, dim=-1)
        log_rest = logp.scatter(-1, top.indices, float("-inf")).logsumexp(-1)
        self._residual[0] += float(log_rest.exp().sum())
        self._residual[1] += log_rest.numel()
        return (top.values.cpu(), top.indices.to(torch.int32).cpu(), log_rest.cpu())

    # --- lookups ------------------------------------------------------------------------------

    def _check_need(self, need: Need) -> None:
        if need not in self.needs:
            known = ", ".join(sorted(n.describe() for n in self.needs)) or "nothing"
            raise RuntimeError(
                f"reference=cache: the method asked for {need.describe()}, which was not cached (cached: "
                f"{known}); use reference=copy for this method"
            )

    def _rows(self, batch, need: Need) -> list[_Entry]:
        self._check_need(need)
        ids, mask = batch["input_ids"], batch["attention_mask"]
        rows = []
        for b, idx in enumerate(batch["index"].tolist()):
            entry = self.entries.get((need.part, idx))
            n = int(mask[b].sum())
            if entry is None or need not in entry.values:
                raise RuntimeError(f"reference=cache: {need.part} example {idx} was not cached")
            if len(entry.ids) != n or not torch.equal(entry.ids, ids[b, :n].cpu()):
                raise RuntimeError(
                    f"reference=cache: {need.part} example {idx} does not match the cached ids"
                )
            rows.append(entry)
        return rows

    def _dense(self, batch, need: Need, width: int, dtype: torch.dtype) -> torch.Tensor:
        rows = self._rows(batch, need)
        ids = batch["input_ids"]
        out = torch.zeros(ids.shape[0], ids.shape[1], width, dtype=dtype, device=ids.device)
        for b, entry in enumerate(rows):
            if len(entry.pos):
                out[b, entry.pos.to(ids.device)] = entry.values[need].to(ids.device, dtype)
        return out

    def token_logps(self, batch):
        need = Need("logps", _part(batch))
        rows = self._rows(batch, need)
        ids = batch["input_ids"]
        out = torch.zeros(ids.shape[0], ids.shape[1] - 1, dtype=torch.float32, device=ids.device)
        for b, entry in enumerate(rows):
            if len(entry.pos):
                out[b, entry.pos.to(ids.device)] = entry.values[need].to(ids.device)
        return out

    def hidden(self, batch, layer, tau=None, layers=None):
        """Unshifted ``[B,T,D]`` layer outputs at every real token (0 on padding)."""
        smooth = (float(tau), _layers(layers)) if tau is not None else (None, None)
        need = Need("hidden", _part(batch), *smooth, layer=int(layer))
        sample = self._sample(need)
        rows = self._rows(batch, need)
        ids = batch["input_ids"]
        out = torch.zeros(ids.shape[0], ids.shape[1], sample.shape[-1], dtype=sample.dtype, device=ids.device)
        for b, entry in enumerate(rows):
            value = entry.values[need]
            out[b, : value.shape[0]] = value.to(ids.device)
        return out

    def logits(self, batch, student: torch.Tensor | None = None):
        return self._distribution(batch, Need("logits", _part(batch)), student)

    def teacher_logits(self, batch, tau, layers, student: torch.Tensor | None = None):
        return self._distribution(batch, Need("teacher", _part(batch), float(tau), _layers(layers)), student)

    def _sample(self, need: Need):
        self._check_need(need)
        for entry in self.entries.values():
            if need in entry.values:
                return entry.values[need]
        raise RuntimeError(f"reference=cache: nothing cached for {need.describe()}")

    def _distribution(self, batch, need: Need, student: torch.Tensor | None) -> torch.Tensor:
        """``[B,T,V]`` logits whose softmax is the cached distribution (top-k: bucketed, see module doc)."""
        sample = self._sample(need)
        if isinstance(sample, torch.Tensor):  # exact
            return self._dense(batch, need, sample.shape[-1], sample.dtype)
        if student is None:
            raise RuntimeError(
                "reference=cache with cache_topk > 0 needs the policy's logits (use the trainer's "
                "TrainStepContext, or cache_topk=0)"
            )
        return self._bucketed(batch, need, student)

    def _bucketed(self, batch, need: Need, student: torch.Tensor) -> torch.Tensor:
        rows = self._rows(batch, need)
        ids = batch["input_ids"]
        # student: the policy's aligned logits [B, T-1, V]; rest of the vocab gets its (detached) shape.
        target = torch.log_softmax(student.detach().float(), dim=-1)
        for b, entry in enumerate(rows):
            if not len(entry.pos):
                continue
            top_logp, top_idx, log_rest = (x.to(ids.device) for x in entry.values[need])
            pos, top_idx = entry.pos.to(ids.device), top_idx.long()
            q = target[b, pos]  # [n, V] policy log-probs
            log_q_rest = q.scatter(-1, top_idx, float("-inf")).logsumexp(-1)
            row = q + (log_rest - log_q_rest).unsqueeze(-1)
            target[b, pos] = row.scatter(-1, top_idx, top_logp)
        pad = torch.zeros_like(target[:, :1])
        return torch.cat([target, pad], dim=1)  # [B,T,V], callers drop the last position


def _nbytes(value) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    return sum(_nbytes(v) for v in value)
