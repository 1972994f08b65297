"""Temperature-smoothed self-attention: the forget-teacher of Attention Smoothing Unlearning (ASU).

ASU (arXiv 2603.01285) distils the model being unlearned towards a *forget-teacher*: the frozen
original model whose every self-attention softmax runs at a temperature ``tau > 1``::

    Attn_tau(Q, K, V) = softmax(Q K^T / (tau * sqrt(d_k))) V

A flatter attention pattern blurs the lexical/factual associations the model relies on to recall the
forget set while keeping fluent language. This module makes any transformers decoder compute exactly
that, without copying model code or touching weights:

* :func:`smoothed_attention` - context manager; inside it the model's attention runs at ``tau``
  (optionally only in some decoder layers).
* :func:`attention_weights` / :func:`attention_entropy` - eager attention probabilities and their
  mean entropy per layer; they honour an active :func:`smoothed_attention` context.

Why dividing the scale by tau is the temperature
------------------------------------------------
Every attention function in transformers computes ``softmax(scaling * Q K^T + mask) V`` with
``scaling = 1/sqrt(d_k)`` for most models (GPT-2 folds its ``scale_attn_weights`` /
``scale_attn_by_inverse_layer_idx`` options into the same ``scaling`` attribute, Gemma 2 uses
``query_pre_attn_scalar``). Calling the stock function with ``scaling / tau`` therefore gives
``softmax((scaling * Q K^T) / tau + mask)``. The mask entries are 0 or a huge negative number, and a
huge negative number divided by tau is still huge and negative, so masked positions stay at
probability ~0 and the result is exactly the temperature-``tau`` softmax of the original logits.
Two refinements keep it exact for every pre-softmax transform a model applies:

* logit soft-capping (Gemma 2: ``c * tanh(s * x / c)``): passing ``softcap = c / tau`` together with
  ``scaling = s / tau`` gives ``(c / tau) * tanh(s * x / c)``, i.e. the original capped logits / tau;
* an additive ``position_bias`` (T5-style) is divided by tau as well.

How it is wired (and the pitfalls it avoids)
--------------------------------------------
* Attention functions are looked up by name in ``transformers.AttentionInterface``; on entry we
  register a wrapper under a fresh name and switch the model to it with
  ``PreTrainedModel.set_attn_implementation``; on exit (also on exceptions) the exact original
  implementation string of every (sub-)config is put back and the names are unregistered.
* The wrapper calls the implementation the model was using: ``sdpa`` from ``ALL_ATTENTION_FUNCTIONS``,
  or for ``eager`` the model file's own ``eager_attention_forward`` (it is not in the registry and
  differs per model, e.g. Gemma 2's applies soft-capping).
* The mask function MUST be registered under the same name in
  ``transformers.masking_utils.AttentionMaskInterface``: ``create_causal_mask`` returns *no mask at
  all* for implementation names it does not know, which silently drops padding and, on the eager
  path, even causality.
* transformers matches implementation names by substring (``"sdpa"``, ``"flash"``,
  ``"flex_attention"``, ``"paged|"``, ``"/"`` for hub kernels trigger special checks; Gemma 2
  rejects any name containing ``"sdpa"``), hence neutral names ``uk_smoothed_fused_<n>`` /
  ``uk_smoothed_eager_<n>``. Flash/flex/paged/custom implementations are refused with a
  :class:`~unlearnkit.errors.UserError` (they come with their own mask formats and code paths);
  switch such a model to ``"sdpa"`` or ``"eager"`` first.
* Passing the temperature through ``forward``/``generate`` kwargs does not work (they are not
  forwarded to every attention call); the context manager does, including inside ``generate``.
* ``sdpa`` returns no attention weights; :func:`attention_weights` temporarily switches to the
  (smoothed, when inside the context) eager variant.
* PEFT wrappers (``PeftModel``), ``torch.compile``'d and DDP-wrapped models are unwrapped to the
  underlying ``PreTrainedModel``; ``peft_model.disable_adapter()`` can be nested either way.

Nesting :func:`smoothed_attention` on the same model raises a ``UserError`` (temperatures would
otherwise silently compound or override each other). GPT-2 with ``reorder_and_upcast_attn=True`` loses
its special upcast path inside the context (the stock eager function is used; differences are at
float rounding level).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import operator
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from unlearnkit.errors import UserError

__all__ = ["attention_entropy", "attention_weights", "check_smoothable", "smoothed_attention"]

_PREFIX = "uk_smoothed_"
_FUSED_BASE = "sdpa"  # the only registry implementation we wrap; see module docstring
_SUPPORTED = ("eager", _FUSED_BASE)
_counter = itertools.count()


@dataclass(frozen=True)
class _Smoothing:
    """State of one active :func:`smoothed_attention` context (shared by its two registered names)."""

    tau: float
    layers: frozenset[int] | None
    eager_name: str
    fused_name: str
    calls: list[int] = field(default_factory=lambda: [0])  # attention calls that went through the wrapper


# registered implementation name -> smoothing it performs; lets attention_weights() find the eager twin
_ACTIVE: dict[str, _Smoothing] = {}


def pretrained_model(model: nn.Module):
    """Return the ``transformers.PreTrainedModel`` behind ``model`` (PEFT, compile, DDP wrappers)."""
    from transformers import PreTrainedModel

    seen: set[int] = set()
    todo: list[object] = [model]
    while todo:
        cur = todo.pop(0)
        if cur is None or id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, PreTrainedModel):
            return cur
        # PeftModel.get_base_model(); LoraModel.model; DDP.module; torch.compile's _orig_mod
        get_base = getattr(cur, "get_base_model", None)
        if callable(get_base):
            with contextlib.suppress(Exception):
                todo.append(get_base())
        for attr in ("base_model", "model", "module", "_orig_mod"):
            sub = getattr(cur, attr, None)
            if isinstance(sub, nn.Module):
                todo.append(sub)
    raise UserError(
        f"smoothed_attention: {type(model).__name__} is not (and does not wrap) a transformers "
        "PreTrainedModel, so its attention cannot be temperature-scaled"
    )


def _all_configs(base) -> list:
    """Every distinct config whose ``_attn_implementation`` selects attention code in ``base``."""
    from transformers import PreTrainedModel

    configs: dict[int, object] = {}
    todo = [m.config for m in base.modules() if isinstance(m, PreTrainedModel)]
    while todo:
        cfg = todo.pop()
        if id(cfg) in configs:
            continue
        configs[id(cfg)] = cfg
        for key in getattr(cfg, "sub_configs", {}) or {}:
            sub = getattr(cfg, key, None)
            if sub is not None and hasattr(sub, "_attn_implementation_internal"):
                todo.append(sub)
    return list(configs.values())


def _snapshot(base) -> list[tuple[object, str | None]]:
    return [(cfg, cfg._attn_implementation_internal) for cfg in _all_configs(base)]


def _restore(snapshot: list[tuple[object, str | None]]) -> None:
    # Written back on the internal attribute (what set_attn_implementation itself writes) so that the
    # original strings come back exactly, without re-validation, per sub-config.
    for cfg, impl in snapshot:
        cfg._attn_implementation_internal = impl


def _switch(base, name: str) -> None:
    """``base.set_attn_implementation(name)``, turning its failures (incl. silent no-ops) into UserError."""
    cls = type(base).__name__
    try:
        base.set_attn_implementation(name)
    except Exception as err:  # any failure means we cannot patch this architecture
        msg = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise UserError(f"smoothed_attention: {cls} refused attn_implementation={name!r}: {msg}") from err
    # set_attn_implementation only logs a warning for models whose attention does not go through
    # AttentionInterface; doing nothing silently would make the teacher equal the original model.
    if base.config._attn_implementation != name:
        raise UserError(
            f"smoothed_attention: {cls} does not route attention through transformers' "
            "AttentionInterface, so its softmax temperature cannot be changed"
        )


_EAGER_CACHE: dict[type, Callable] = {}


def _model_eager(module: nn.Module) -> Callable:
    """The ``eager_attention_forward`` of the modeling file that defines ``module``'s class."""
    cls = type(module)
    fn = _EAGER_CACHE.get(cls)
    if fn is None:
        for klass in cls.__mro__:  # a subclass defined elsewhere still uses its parent file's function
            cand = getattr(sys.modules.get(klass.__module__), "eager_attention_forward", None)
            if callable(cand):
                fn = _EAGER_CACHE[cls] = cand
                break
        else:
            raise UserError(
                f"smoothed_attention: no eager_attention_forward found for {cls.__name__} "
                f"(module {cls.__module__}); load the model with attn_implementation='sdpa'"
            )
    return fn


def _make_wrapper(
    base_fn: Callable[[nn.Module], Callable],
    tau: float,
    layers: frozenset[int] | None,
    calls: list[int] | None = None,
):
    """An AttentionInterface function computing ``base_fn(module)`` at temperature ``tau``."""

    def smoothed_attention_forward(module, query, key, value, attention_mask, *args, **kwargs):
        if args:  # every transformers model passes scaling/dropout by keyword; refuse to guess otherwise
            raise TypeError("smoothed attention expects scaling/dropout as keyword arguments")
        if calls is not None:
            calls[0] += 1
        fn = base_fn(module)
        if layers is not None:
            idx = getattr(module, "layer_idx", None)
            if not isinstance(idx, int):
                raise UserError(
                    f"smoothed_attention: {type(module).__name__} has no layer_idx, so a layer subset "
                    "cannot be applied; pass layers=None"
                )
            if idx not in layers:
                return fn(module, query, key, value, attention_mask, **kwargs)
        if tau != 1.0:  # tau == 1 passes arguments through untouched: bit-identical to the original
            scaling = kwargs.get("scaling")
            if scaling is None:  # the stock functions' own default
                scaling = query.shape[-1] ** -0.5
            kwargs["scaling"] = scaling / tau
            if kwargs.get("softcap") is not None:  # (c/tau)*tanh(s*x/c) = capped logits / tau
                kwargs["softcap"] = kwargs["softcap"] / tau
            if kwargs.get("position_bias") is not None:  # additive logits are part of the softmax input
                kwargs["position_bias"] = kwargs["position_bias"] / tau
        return fn(module, query, key, value, attention_mask, **kwargs)

    return smoothed_attention_forward


def _registries():
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    return AttentionInterface, AttentionMaskInterface


def _register(name: str, fn: Callable, mask_fn: Callable) -> None:
    attn_reg, mask_reg = _registries()
    attn_reg.register(name, fn)
    mask_reg.register(name, mask_fn)


def _unregister(name: str) -> None:
    # GeneralInterface has no public "unregister"; drop our own keys so the global registries do not
    # grow with every context (names are unique per entry).
    for reg in _registries():
        reg._global_mapping.pop(name, None)
    _ACTIVE.pop(name, None)


def _check_layers(base, layers: Sequence[int] | None) -> frozenset[int] | None:
    if layers is None:
        return None
    cls = type(base).__name__
    try:  # operator.index accepts ints and numpy ints, rejects floats and strings
        chosen = [operator.index(i) for i in layers]
    except TypeError as err:
        raise UserError(f"smoothed_attention: layers must be a sequence of ints, got {layers!r}") from err
    if not chosen:
        raise UserError("smoothed_attention: layers is empty; pass layers=None to smooth every layer")
    n_layers = getattr(base.config.get_text_config(), "num_hidden_layers", None)
    if not isinstance(n_layers, int):
        raise UserError(f"smoothed_attention: cannot tell how many layers {cls} has; pass layers=None")
    bad = [i for i in chosen if not 0 <= i < n_layers]
    if bad:
        raise UserError(f"smoothed_attention: layers {bad} out of range for {cls} with {n_layers} layers")
    if not any(isinstance(getattr(m, "layer_idx", None), int) for m in base.modules()):
        raise UserError(f"smoothed_attention: {cls} attention modules have no layer_idx; pass layers=None")
    return frozenset(chosen)


@contextlib.contextmanager
def smoothed_attention(
    model: nn.Module, tau: float, layers: Sequence[int] | None = None
) -> Iterator[nn.Module]:
    """Run every self-attention softmax of ``model`` at temperature ``tau`` inside the context.

    Args:
        model (`PreTrainedModel`): a transformers model or a wrapper of one (PEFT ``PeftModel``, DDP,
            ``torch.compile``). Its config must use ``"sdpa"`` or ``"eager"`` attention.
        tau (`float`): softmax temperature, ``> 0``; ``> 1`` flattens attention (ASU teacher), ``1`` is
            a no-op.
        layers (`list[int]`, *optional*, defaults to ``None``): decoder-layer indices (0-based) to
            smooth; ``None`` = all layers.

    Yields:
        ``model`` itself (unchanged object; weights are neither copied nor modified).

    Raises:
        UserError: bad ``tau``/``layers``, a model that is not a transformers model, an attention
            implementation that cannot be wrapped (flash/flex/paged/custom, or code that bypasses
            ``AttentionInterface``), or nesting on the same model.

    Works with gradients, ``model.generate`` and KV caches; ``attention_weights``/``attention_entropy``
    called inside the context see the smoothed attention.
    """
    if isinstance(tau, bool) or not isinstance(tau, (int, float)) or not math.isfinite(tau) or tau <= 0:
        raise UserError(f"smoothed_attention: tau must be a finite number > 0, got {tau!r}")
    tau = float(tau)
    base = pretrained_model(model)
    cls = type(base).__name__
    layer_set = _check_layers(base, layers)

    snapshot = _snapshot(base)
    impls = {impl for _, impl in snapshot}
    if impls & _ACTIVE.keys():
        raise UserError(
            f"smoothed_attention: {cls} is already inside smoothed_attention; nesting is not supported"
        )
    if len(impls) != 1 or not impls <= set(_SUPPORTED):
        found = sorted(str(i) for i in impls)
        raise UserError(
            f"smoothed_attention: {cls} uses attn_implementation {', '.join(found)}; only 'sdpa' or 'eager' can "
            "be temperature-scaled (call model.set_attn_implementation('sdpa') first)"
        )
    (original,) = impls

    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    n = next(_counter)
    state = _Smoothing(tau, layer_set, f"{_PREFIX}eager_{n}", f"{_PREFIX}fused_{n}")
    sdpa_fn = ALL_ATTENTION_FUNCTIONS[_FUSED_BASE]
    # Both variants are registered whatever the model uses, so attention_weights() can switch an sdpa
    # model to the smoothed *eager* twin to read the (smoothed) probabilities.
    variants = {
        state.eager_name: (
            _make_wrapper(_model_eager, tau, layer_set, state.calls),
            ALL_MASK_ATTENTION_FUNCTIONS["eager"],
        ),
        state.fused_name: (
            _make_wrapper(lambda _m: sdpa_fn, tau, layer_set, state.calls),
            ALL_MASK_ATTENTION_FUNCTIONS[_FUSED_BASE],
        ),
    }
    try:
        for name, (fn, mask_fn) in variants.items():
            _register(name, fn, mask_fn)
            _ACTIVE[name] = state
        target = state.eager_name if original == "eager" else state.fused_name
        if original == "eager":  # fail at entry, not mid-forward, if the modeling file has no eager function
            _model_eager(base)
        _switch(base, target)
        yield model
    finally:
        _restore(snapshot)
        for name in variants:
            _unregister(name)


def check_smoothable(model: nn.Module) -> int:
    """Prove that ``smoothed_attention`` changes ``model``: returns how many attention calls one forward
    makes through the temperature wrapper, or raises a one-line ``UserError`` saying why none can.

    A two-token forward (no gradients, eval mode) runs inside :func:`smoothed_attention`. It catches
    what the configuration alone cannot tell: ``set_attn_implementation`` succeeds on models with no
    self-attention at all (state-space models such as Mamba), where the teacher would silently equal
    the original model. Models whose attention bypasses ``AttentionInterface`` (Bloom, GPT-Neo, ...)
    or uses flash/flex kernels are refused by :func:`smoothed_attention` itself.
    """
    base = pretrained_model(model)
    cls = type(base).__name__
    can_set = getattr(type(base), "_can_set_attn_implementation", None)
    if callable(can_set) and not can_set():
        raise UserError(
            f"smoothed_attention: {cls} computes attention in its own modeling code, outside transformers' "
            "AttentionInterface, so its softmax temperature cannot be changed"
        )
    if base.config._attn_implementation == "eager" and not getattr(base, "_supports_sdpa", False):
        try:
            _model_eager(next(m for m in base.modules() if getattr(m, "layer_idx", None) is not None))
        except (StopIteration, UserError):
            raise UserError(
                f"smoothed_attention: {cls} has no attention function to smooth (no eager_attention_forward "
                "in its modeling file and no sdpa support: not a softmax-attention model, e.g. a state-space model)"
            ) from None
    embeddings = base.get_input_embeddings() if hasattr(base, "get_input_embeddings") else None
    weight = getattr(embeddings, "weight", None)
    device = weight.device if isinstance(weight, torch.Tensor) else next(base.parameters()).device
    vocab = int(weight.shape[0]) if isinstance(weight, torch.Tensor) else 2
    ids = torch.tensor([[0, min(1, vocab - 1)]], device=device)
    was_training = model.training
    model.eval()
    try:
        with smoothed_attention(model, 2.0), torch.no_grad():
            state = _ACTIVE[base.config._attn_implementation]
            model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    finally:
        model.train(was_training)
    if state.calls[0] == 0:
        raise UserError(
            f"smoothed_attention: {cls} ran a forward pass without any self-attention call through "
            "transformers' AttentionInterface (it has no softmax attention to smooth, e.g. a state-space model)"
        )
    return state.calls[0]


def attention_weights(
    model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, ...]:
    """Eager attention probabilities of every decoder layer, each ``[batch, heads, query, key]``.

    The model is switched to its eager attention for this one forward (``sdpa`` cannot return
    weights) and switched back afterwards. Inside :func:`smoothed_attention` the smoothed eager twin is
    used, so the returned probabilities are the temperature-scaled ones. Runs under ``torch.no_grad``;
    put the model in ``eval()`` mode (attention dropout would perturb the weights).
    """
    base = pretrained_model(model)
    cls = type(base).__name__
    current = base.config._attn_implementation
    target = _ACTIVE[current].eager_name if current in _ACTIVE else "eager"
    snapshot = _snapshot(base)
    try:
        if current != target:
            _switch(base, target)
        with torch.no_grad():
            out = model(
                input_ids=input_ids, attention_mask=attention_mask, output_attentions=True, use_cache=False
            )
    finally:
        _restore(snapshot)
    attentions = getattr(out, "attentions", None)
    if not attentions or any(a is None for a in attentions):
        raise UserError(
            f"attention_weights: {cls} did not return attention weights with output_attentions=True"
        )
    return tuple(attentions)


def attention_entropy(
    model: nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    *,
    tau: float | None = None,
    layers: Sequence[int] | None = None,
) -> torch.Tensor:
    """Mean attention entropy (nats) per layer, shape ``[n_layers]``, float32 on the model's device.

    For each layer: the Shannon entropy of every query's attention distribution (eager weights, see
    :func:`attention_weights`), averaged over heads, then over the batch and the *valid* query
    positions (``attention_mask == 1``; padded queries are ignored; all positions without a mask).

    Inside :func:`smoothed_attention` the smoothed attention is measured. ``tau``/``layers`` are a
    shortcut for ``with smoothed_attention(model, tau, layers): attention_entropy(model, ...)``.
    """
    if tau is not None:
        with smoothed_attention(model, tau, layers):
            return attention_entropy(model, input_ids, attention_mask)
    if layers is not None:
        raise UserError("attention_entropy: layers only applies together with tau")
    attentions = attention_weights(model, input_ids, attention_mask)
    if attention_mask is None:
        valid = torch.ones(input_ids.shape, dtype=torch.float32, device=attentions[0].device)
    else:
        valid = attention_mask.to(device=attentions[0].device, dtype=torch.float32)
    if valid.sum() == 0:
        raise UserError("attention_entropy: attention_mask has no valid positions")
    per_layer = []
    for probs in attentions:
        probs = probs.float()
        # xlogy(0, 0) = 0: masked keys (probability exactly 0) contribute nothing
        ent = -torch.special.xlogy(probs, probs).sum(-1).mean(1)  # [batch, query]
        per_layer.append((ent * valid).sum() / valid.sum())
    return torch.stack(per_layer)
