"""Loading and saving models safely: safetensors only, no remote code unless asked, atomic output.

A model folder is an ordinary Hugging Face folder (config, tokenizer, ``*.safetensors``) plus
``unlearnkit.json`` (how it was made) and a ``README.md`` model card.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from unlearnkit.config import PRECISIONS
from unlearnkit.errors import UserError
from unlearnkit.gguf_models import check as check_gguf
from unlearnkit.gguf_models import converted_folder, is_gguf_reference, known_name_hint
from unlearnkit.gguf_models import resolve as resolve_gguf
from unlearnkit.io import atomic_dir

if TYPE_CHECKING:  # torch is imported by the loaders only: path checks must stay instant
    import torch

PICKLE_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json", "model.pt", "model.pth", "model.ckpt")
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
# A Hugging Face Hub id: ``name`` or ``owner/name`` (letters, digits, ``-``, ``_``, ``.``).
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


def is_local(name: str) -> bool:
    """A path, never to be sent to the Hub: it exists, or it cannot be a hub id (``./x``, ``~/x``,
    ``a/b/c``, a backslash), or its parent folder exists (``runs/target`` with ``./runs`` present), or
    it is one word a letter or two away from a model folder of the current directory (a typo)."""
    path = Path(name).expanduser()
    if path.exists() or not _HUB_ID.match(name) or name.endswith("."):
        return True
    if "/" in name:
        return path.parent.is_dir()
    return bool(_near_local_models(name))


def _near_local_models(name: str) -> list[str]:
    import difflib

    try:
        here = [p.name for p in Path.cwd().iterdir() if p.is_dir() and (p / "config.json").is_file()]
    except OSError:
        return []
    return difflib.get_close_matches(name, here, n=1, cutoff=0.8)


@functools.lru_cache(maxsize=1)
def hub_reachable(timeout: float = 3.0) -> bool:
    """One TCP connection to the Hub endpoint (``HF_ENDPOINT``), once per process.

    Without it a hub id costs about a minute of huggingface_hub's retries before failing offline.
    """
    import socket
    from urllib.parse import urlparse

    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname or "huggingface.co", port), timeout=timeout).close()
    except OSError:
        return False
    return True


def go_offline_if_unreachable() -> bool:
    """With the Hub unreachable (one probe), switch huggingface_hub and datasets to their local caches
    so that a miss fails at once instead of after a minute of retries. True when offline now."""
    if hub_offline():
        return True
    if hub_reachable():
        return False
    _go_offline()
    return True


def _go_offline() -> None:
    """Cached files only from now on (the Hub is unreachable): no retries, no per-file timeouts."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:  # read at import: already imported (Python API), so set it there too
        constants.HF_HUB_OFFLINE = True


def hub_offline() -> bool:
    """``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE``, read at call time (huggingface_hub reads it at import)."""
    return offline_variable() is not None


def offline_variable() -> str | None:
    """The offline variable that is set (``HF_HUB_OFFLINE`` first), or None."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on"):
            return var
    return None


def check_model_path(name: str, flag: str = "--model") -> None:
    """Before anything is loaded: a local folder must exist, hold ``config.json`` and safetensors weights.

    Pickle-only folders (``pytorch_model.bin`` ...) are refused without being opened: unpickling can
    run arbitrary code. A hub id is accepted, except in offline mode when it is not in the local cache.
    """
    name = str(name)
    path = Path(name).expanduser()
    if is_gguf_reference(name):  # converted on load (load_model / load_tokenizer)
        check_gguf(name, flag)
        return
    if not is_local(name):
        if hub_offline() and not _in_hub_cache(name):
            raise UserError(
                f"{flag} {name}: no such local folder, and {offline_variable()}=1 forbids downloading it from the "
                f"Hugging Face Hub (it is not in the local cache); pass a model folder{known_name_hint(name)}"
            )
        if not hub_offline() and not hub_reachable():
            if not _in_hub_cache(name):
                raise UserError(
                    f"{flag} {name}: no such local folder, and the Hugging Face Hub "
                    f"({os.environ.get('HF_ENDPOINT', 'huggingface.co')}) is not reachable; pass a model "
                    f"folder, or download it where there is network{known_name_hint(name)}"
                )
            _go_offline()
        return  # a hub id: transformers resolves it (with use_safetensors=True, so no pickle either)
    if not path.exists():
        near = _near_local_models(name) if "/" not in name else []
        hint = f"; did you mean {near[0]}?" if near else ""
        raise UserError(f"{flag} {name}: folder does not exist{hint}")
    if not path.is_dir():
        raise UserError(f"{flag} {name}: is a file; pass the model folder (config.json + *.safetensors)")
    if is_adapter_folder(path):
        if not (path / "adapter_model.safetensors").is_file():
            raise UserError(f"{flag} {name}: a LoRA adapter folder without adapter_model.safetensors")
        base = adapter_base(path)
        if not base:
            raise UserError(f"{flag} {name}: adapter_config.json names no base_model_name_or_path")
        check_model_path(base, flag=f"{flag} {name} (its base model)")
        return
    config = path / "config.json"
    if not config.is_file():
        raise UserError(f"{flag} {name}: no config.json; expected a Hugging Face model folder")
    try:
        json.loads(config.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UserError(f"{flag} {name}: config.json is not valid JSON ({err})") from None
    if not any(path.glob("*.safetensors")):
        pickles = sorted(
            p.name for p in path.iterdir() if p.name in PICKLE_WEIGHTS or p.suffix in PICKLE_SUFFIXES
        )
        if pickles:
            raise UserError(
                f"{flag} {name}: only pickle weights ({pickles[0]}); unlearnkit loads safetensors only, because "
                "unpickling can run arbitrary code. Convert it to model.safetensors with a tool you trust first"
            )
        raise UserError(f"{flag} {name}: no *.safetensors weights in the folder")


def is_adapter_folder(path: str | Path) -> bool:
    """A PEFT adapter saved alone (``lora_save=adapter``): adapter_config.json and no config.json."""
    path = Path(path)
    return (path / "adapter_config.json").is_file() and not (path / "config.json").is_file()


def adapter_base(path: str | Path) -> str | None:
    try:
        return json.loads((Path(path) / "adapter_config.json").read_text(encoding="utf-8")).get(
            "base_model_name_or_path"
        )
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def check_remote_code(name: str, trust_remote_code: bool) -> None:
    """Refuse, before transformers sees it, a local folder whose architecture exists only as its own code.

    (transformers would refuse too, with ``trust_remote_code=False``, but only after its own warnings.)
    """
    path = Path(str(name)).expanduser()
    if trust_remote_code or not path.is_dir():
        return
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    for file in ("config.json", "tokenizer_config.json"):
        try:
            data = json.loads((path / file).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or not data.get("auto_map"):
            continue
        if file == "config.json" and data.get("model_type") in CONFIG_MAPPING:
            continue  # a built-in architecture: transformers uses its own code, nothing from the folder
        raise UserError(
            f"--model {name}: {file} maps to the folder's own Python code (auto_map), which unlearnkit does "
            "not run unless you pass --trust-remote-code (only for code you have read and trust)"
        )


def _in_hub_cache(name: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(name, "config.json"), str)
    except Exception:  # noqa: BLE001 - an unusable cache is the same as no cache here
        return False


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _load_error(name: str, what: str, err: BaseException) -> UserError:
    text = str(err)
    if "trust_remote_code" in text or "custom code" in text:
        return UserError(
            f"--model {name}: its {what} needs the folder's own Python code, which unlearnkit does not run "
            "unless you pass --trust-remote-code (only for code you have read and trust)"
        )
    if not is_local(name):
        return UserError(
            f"--model {name}: not a local folder, and the Hugging Face Hub could not provide its {what} "
            f"({_first_line(err)})"
        )
    return UserError(f"--model {name}: cannot load the {what} ({_first_line(err)})")


# ---------------------------------------------------------------------------------------------
# Where a model runs and in which dtype: ``--device`` and ``--dtype`` of every command that loads one

DEVICE_HELP = "auto (the GPU when there is one, else the CPU) | cpu | cuda | cuda:N"
DTYPES = ("float32", "bfloat16", "float16")
DTYPE_CHOICES = ("auto", *DTYPES)
_DEVICE_RE = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")


def check_device_spec(device: str) -> None:
    """``--device`` spelled right (torch-free: answered before any heavy import)."""
    if not _DEVICE_RE.match(str(device)):
        raise UserError(f"--device {device}: use auto, cpu, cuda or cuda:N (N: the GPU's index)")


@dataclass(frozen=True)
class Placement:
    """Where a command runs its model and in which dtype, resolved once and recorded in unlearnkit.json.

    ``precision`` is set for training commands only: ``fp32`` (no autocast), ``bf16`` / ``fp16``
    (mixed: float32 master weights under autocast) or ``bf16-true`` (bfloat16 weights, gradients and
    optimiser states, as open-unlearning's ``torch_dtype: bfloat16``).
    """

    device: str  # "cpu" | "cuda:0" ...
    dtype: str  # one of DTYPES: the dtype the weights are loaded in
    asked_device: str = "auto"
    asked_dtype: str = "auto"
    why: str = ""  # how auto resolved, in words
    precision: str | None = None

    @property
    def torch_dtype(self) -> torch.dtype:
        import torch

        return getattr(torch, self.dtype)

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "device": self.device,
            "dtype": self.dtype,
            "asked": {"device": self.asked_device, "dtype": self.asked_dtype},
        }
        if self.precision is not None:
            out["precision"] = self.precision
        if self.why:
            out["why"] = self.why
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if self.device.startswith("cuda") and visible is not None:
            out["CUDA_VISIBLE_DEVICES"] = visible
        return out

    def load_kwargs(self) -> dict[str, Any]:
        """``dtype`` and ``device`` for :func:`load_model` / :func:`load` (evaluation: where it runs)."""
        return {"dtype": self.torch_dtype, "device": self.device}

    def line(self, extra: str = "") -> str:
        """The one line every command prints: device, dtype, precision (+ optimiser), and why."""
        parts = [f"device {self.device}", f"dtype {self.dtype}"]
        if self.precision is not None:
            parts.append(f"precision {self.precision}")
        if extra:
            parts.append(extra)
        return ", ".join(parts) + (f" ({self.why})" if self.why else "")


def checkpoint_dtype(name: str | None) -> str | None:
    """The ``torch_dtype`` (``dtype`` in transformers 5) a checkpoint's config.json declares, if any
    (None for a model built in memory, ``name`` None)."""
    if name is None:
        return None
    path = Path(str(name)).expanduser()
    if is_local(str(name)) and is_adapter_folder(path):
        base = adapter_base(path)
        return checkpoint_dtype(base) if base else None
    data: dict = {}
    if (path / "config.json").is_file():
        try:
            data = json.loads((path / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
    elif not is_local(str(name)):
        try:
            from transformers import AutoConfig

            data = AutoConfig.from_pretrained(name).to_dict()
        except Exception:  # noqa: BLE001 - unknown dtype: auto falls back to float32
            return None
    text = data.get("dtype") or data.get("torch_dtype") or (data.get("text_config") or {}).get("dtype")
    text = str(text).removeprefix("torch.") if text else None
    return text if text in DTYPES else None


def _cuda_state() -> tuple[int, bool]:
    """(visible GPU count, bf16 supported on the first one); (0, False) without CUDA."""
    import torch

    if not torch.cuda.is_available():
        return 0, False
    return torch.cuda.device_count(), bool(torch.cuda.is_bf16_supported())


def resolve_device(device: str = "auto") -> str:
    """``--device`` as a concrete torch device string; a GPU asked for where none is: one line, exit 2.

    Under ``torchrun`` (``LOCAL_RANK`` set) ``auto`` and ``cuda`` mean this process's own GPU.
    """
    check_device_spec(device)
    count, _ = _cuda_state()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if device == "cpu" or (device == "auto" and count == 0):
        return "cpu"
    if count == 0:
        raise UserError(
            f"--device {device}: no CUDA GPU is visible to this process (torch.cuda.is_available() is "
            "False: no GPU, no driver, a CPU-only torch build or CUDA_VISIBLE_DEVICES hides them); use "
            "--device cpu or auto"
        )
    if device in ("auto", "cuda"):
        return f"cuda:{local_rank if local_rank < count else 0}"
    index = int(device.split(":")[1])
    if index >= count:
        raise UserError(f"--device {device}: only {count} CUDA GPU(s) visible (cuda:0..cuda:{count - 1})")
    return f"cuda:{index}"


def _check_dtype_runs(device: str, dtype: str) -> None:
    """Refuse a dtype the device cannot compute in: bfloat16 on a GPU without it (before Ampere)."""
    if dtype == "bfloat16" and device.startswith("cuda") and not _cuda_state()[1]:
        raise UserError(
            f"--dtype bfloat16: {device} does not support bfloat16 (a GPU before Ampere); use --dtype "
            "float16 for evaluation or float32"
        )
    if dtype == "float32" or device.startswith("cuda"):
        return
    import torch

    try:  # the CPU ops a forward pass needs, in that dtype
        x = torch.ones(2, 2, dtype=getattr(torch, dtype))
        torch.log_softmax(x @ x, dim=-1).sum().item()
    except RuntimeError as err:
        raise UserError(
            f"--dtype {dtype}: the CPU cannot compute in it here ({_first_line(err)}); use float32"
        ) from None


def resolve_placement(
    name: str | None, device: str = "auto", dtype: str = "auto", precision: str | None = None
) -> Placement:
    """Resolve ``--device`` / ``--dtype`` (and, for training, ``precision``) for the model ``name``.

    ``auto`` dtype: float32 on the CPU (the numbers of every CPU run stay what they were); on a GPU the
    checkpoint's own ``torch_dtype`` (bf16 for Llama / Qwen / Gemma checkpoints; float16 ones run in
    bfloat16 where the GPU has it, since fp16 weights cannot be trained without loss scaling), float32
    when it declares none. Training (``precision`` given): bfloat16 weights mean ``bf16-true``;
    float32 weights train under bf16 autocast on a GPU that has it (``bf16``, mixed), fp32 on the CPU.
    Contradictions (``--dtype bfloat16`` with ``precision=fp32``) are one-line errors.
    """
    if dtype not in DTYPE_CHOICES:
        raise UserError(f"--dtype {dtype}: use {', '.join(DTYPE_CHOICES)}")
    if precision is not None and precision not in PRECISIONS:
        raise UserError(f"precision={precision}: use {', '.join(PRECISIONS)}")
    where = resolve_device(device)
    on_gpu = where.startswith("cuda")
    bf16_ok = on_gpu and _cuda_state()[1]
    why = ""
    chosen = dtype
    if dtype == "auto":
        if precision in ("fp32", "bf16", "fp16"):
            chosen, why = "float32", f"dtype auto: precision={precision} keeps float32 master weights"
        elif precision == "bf16-true":
            chosen, why = "bfloat16", "dtype auto: precision=bf16-true"
        elif not on_gpu:
            chosen, why = "float32", "dtype auto: float32 on the CPU"
        else:
            declared = checkpoint_dtype(name)
            chosen = declared or "float32"
            if chosen in ("bfloat16", "float16") and (precision is not None or chosen == "bfloat16"):
                chosen = "bfloat16" if bf16_ok else ("float32" if precision is not None else "float16")
            why = (
                f"dtype auto: the checkpoint's torch_dtype {declared}"
                if declared
                else ("dtype auto: the checkpoint declares no torch_dtype")
            )
            if chosen != (declared or "float32"):
                why += f", run in {chosen} on {where}"
    _check_dtype_runs(where, chosen)
    if precision is None:
        return Placement(where, chosen, device, dtype, why)
    resolved = precision
    if chosen == "float16":
        raise UserError(
            "--dtype float16 cannot be trained (float16 gradients underflow and the Trainer's loss scaler "
            "refuses float16 weights); use --dtype bfloat16, or float32 with --set precision=fp16 (mixed)"
        )
    if chosen == "bfloat16":
        if precision in ("fp32", "bf16", "fp16"):
            raise UserError(
                f"--dtype bfloat16 with --set precision={precision}: mixed / fp32 training keeps float32 "
                "master weights; use --set precision=bf16-true (bfloat16 weights and optimiser states) or "
                "--dtype float32"
            )
        resolved = "bf16-true"
    elif precision == "bf16-true":
        raise UserError(
            f"--set precision=bf16-true trains bfloat16 weights, but --dtype {dtype} loads {chosen}; use "
            "--dtype bfloat16 (or auto)"
        )
    elif precision == "auto":
        resolved = "bf16" if bf16_ok else "fp32"
    if resolved in ("bf16", "bf16-true") and on_gpu and not bf16_ok:
        raise UserError(f"precision={resolved}: {where} does not support bfloat16; use fp16 or fp32")
    if resolved == "fp16" and not on_gpu:
        raise UserError(
            "--set precision=fp16 (mixed, with loss scaling) needs a CUDA device; use fp32 or bf16"
        )
    return Placement(where, chosen, device, dtype, why, resolved)


def load_model(
    name: str,
    trust_remote_code: bool = False,
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
):
    """Load a causal LM from a folder or hub id with ``use_safetensors=True`` (float32 unless ``dtype``;
    on the CPU unless ``device``: see :func:`resolve_placement` for what ``--device`` / ``--dtype`` pick)."""
    import torch
    from transformers import AutoModelForCausalLM

    check_model_path(name)
    name = resolve_gguf(name)
    if is_local(str(name)) and is_adapter_folder(name):
        # An adapter saved alone: load its base, apply the adapter, merge (safetensors on both sides).
        from peft import PeftModel

        base = load_model(adapter_base(name), trust_remote_code, dtype, device)
        try:
            return PeftModel.from_pretrained(base, name, use_safetensors=True).merge_and_unload()
        except Exception as err:  # noqa: BLE001 - mismatched base / corrupt adapter: one line
            raise _load_error(name, "adapter", err) from None
    check_remote_code(name, trust_remote_code)
    try:
        model = AutoModelForCausalLM.from_pretrained(
            name, use_safetensors=True, trust_remote_code=trust_remote_code, dtype=dtype or torch.float32
        )
    except Exception as err:  # noqa: BLE001 - corrupt weights, bad config, custom code, OOM: one line
        raise _load_error(name, "model", err) from None
    if device is not None:
        model.to(device)
    return model


def load_tokenizer(name: str, trust_remote_code: bool = False):
    """Load the tokenizer; a missing pad token falls back to EOS (masks come from lengths, not ids).

    A tokenizer with neither a pad nor an EOS token is refused (answers end with EOS).
    """
    from transformers import AutoTokenizer

    name = resolve_gguf(name)
    if (
        is_local(str(name))
        and is_adapter_folder(name)
        and not (Path(name) / "tokenizer_config.json").is_file()
    ):
        name = adapter_base(name) or name  # an adapter saved without its tokenizer uses the base's
    check_remote_code(name, trust_remote_code)
    try:
        tok = AutoTokenizer.from_pretrained(name, trust_remote_code=trust_remote_code)
    except Exception as err:  # noqa: BLE001 - missing/corrupt tokenizer files, custom code: one line
        raise _load_error(name, "tokenizer", err) from None
    if getattr(tok, "eos_token", None) is None:
        raise UserError(
            f"--model {name}: the tokenizer has no EOS token (answers are trained to end with it); "
            "set eos_token in tokenizer_config.json"
        )
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def load(
    name: str,
    trust_remote_code: bool = False,
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
):
    """Model and tokenizer of ``name``; the model in ``dtype`` on ``device`` (float32, CPU by default)."""
    return load_model(name, trust_remote_code, dtype, device), load_tokenizer(name, trust_remote_code)


def check_supported(
    model,
    method: str,
    *,
    teacher: bool = False,
    layer_activations: bool = False,
    gradient_checkpointing: bool = False,
) -> None:
    """Refuse, in one line and before any work, an architecture this run cannot handle.

    * ``teacher`` (ASU family): the attention must be temperature-scalable, proven by one two-token
      forward through :func:`unlearnkit.attention.check_smoothable` (refuses attention outside
      transformers' AttentionInterface, flash/flex kernels, and models without self-attention);
    * ``layer_activations`` (RMU family): the decoder layers must be found (a ``ModuleList`` of
      ``num_hidden_layers`` blocks, where RMU hooks its layer);
    * ``gradient_checkpointing``: the architecture must implement activation checkpointing.
    """
    from unlearnkit.attention import check_smoothable, pretrained_model

    base = pretrained_model(model)
    cls = type(base).__name__
    if gradient_checkpointing and not getattr(base, "supports_gradient_checkpointing", False):
        raise UserError(
            f"--set gradient_checkpointing=true: {cls} does not implement activation checkpointing in "
            "transformers; drop the setting (or use LoRA / a smaller batch to save memory)"
        )
    if teacher:
        try:
            check_smoothable(model)
        except UserError as err:
            why = str(err).removeprefix("smoothed_attention: ")
            raise UserError(
                f"--method {method} needs the attention-smoothed teacher, but {why}; use a method without a "
                "smoothed teacher (e.g. npo, ga, rmu)"
            ) from None
    if layer_activations:
        try:
            decoder_layers(model)
        except UserError as err:
            raise UserError(
                f"--method {method} reads a decoder layer's activations, but unlearnkit {err} (it looks for "
                "a ModuleList of num_hidden_layers blocks); use a method that needs only the logits (e.g. npo, asu)"
            ) from None


def read_card(model: str | Path) -> dict:
    """The unlearnkit.json of a local model folder ({} for a hub id, 'tiny' or a folder without one)."""
    if is_gguf_reference(model):
        model = converted_folder(model) or model
    path = Path(str(model)).expanduser() / "unlearnkit.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recorded_defaults(model: str | Path) -> dict:
    """``unlearn_defaults`` of a model folder's unlearnkit.json (models made by ``finetune --model
    tiny`` record the tiny-scale recipe there); {} for any other model."""
    found = read_card(model).get("unlearn_defaults")
    return found if isinstance(found, dict) else {}


def scale_defaults(
    model: str | Path | None, method: str, values: dict, override: str = "--set KEY=VALUE"
) -> tuple[dict, str | None]:
    """The settings a run of ``method`` on ``model`` uses: ``values`` (the caller's own: recipe +
    ``--set``, or the Python API's keywords) over the scale defaults the model folder records for
    ``method`` (:func:`recorded_defaults`), and the one line that names the defaults used and how to
    override them (``override``: how the caller spells an override); ``(values, None)`` for other models.

    The one place that decides: ``unlearnkit unlearn``, ``unlearnkit continual`` and
    :func:`unlearnkit.unlearn` call it, so the same folder trains with the same settings from each.
    """
    from unlearnkit.config import ALIASES

    recorded = recorded_defaults(model) if model is not None else {}
    if not recorded:
        return values, None
    defaults = {**recorded.get("train", {}), **recorded.get("method", {}).get(method, {})}
    given = {ALIASES.get(k, k) for k in values}
    used = {k: v for k, v in defaults.items() if k not in given}
    message = None
    if used:
        message = (
            f"{model} records {recorded.get('source', 'scale defaults')}: using "
            + ", ".join(f"{k}={v}" for k, v in used.items())
            + f" (the papers' defaults are for 7B models); {override} overrides any of them"
        )
    return {**used, **values}, message


# ---------------------------------------------------------------------------------------------
# Where a model keeps its decoder layers (RMU's layer, the architecture check, LoRA / PEFT wrappers)


def is_peft_model(model) -> bool:
    """A PEFT (LoRA) wrapper: its adapters can be switched off (the reference ``adapter``)."""
    return hasattr(model, "disable_adapter") and hasattr(model, "peft_config")


def decoder_layers(model) -> torch.nn.ModuleList:
    """The model's list of decoder layers (``model.model.layers`` for Llama, ``transformer.h`` for GPT-2 ...)."""
    import torch

    while not hasattr(model, "config") and hasattr(model, "module"):  # DDP / DeepSpeed wrappers
        model = model.module
    base = model.get_base_model() if is_peft_model(model) else model
    n_layers = getattr(base.config.get_text_config(), "num_hidden_layers", None)
    for _, module in base.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == n_layers:
            return module
    raise UserError(f"cannot find the {n_layers} decoder layers of {type(base).__name__}")


def decoder_layer_prefixes(model) -> list[str]:
    """Parameter-name prefix of each decoder layer in ``model.named_parameters()``: ``model.layers.3.``
    for Llama-style models, ``transformer.h.3.`` for GPT-2 / Bloom (so "layer 3" means the same block
    whatever the architecture calls its list)."""
    blocks = decoder_layers(model)
    for name, module in model.named_modules():
        if module is blocks:
            return [f"{name}.{i}." if name else f"{i}." for i in range(len(blocks))]
    raise UserError(f"cannot find the decoder layers of {type(model).__name__} among its modules")


def check_layer(model, layer: int) -> int:
    """``layer`` as a valid 0-based decoder-layer index of ``model``, or a one-line ``UserError``."""
    n_layers = len(decoder_layers(model))
    if not 0 <= int(layer) < n_layers:
        raise UserError(
            f"layer={layer} is out of range: the model has {n_layers} decoder layers (0..{n_layers - 1})"
        )
    return int(layer)


def resolved_optim(optim: str) -> str:
    """``optim=auto`` as the optimiser transformers' TrainingArguments picks by default."""
    if optim != "auto":
        return optim
    from transformers import TrainingArguments

    default = TrainingArguments.__dataclass_fields__["optim"].default
    return str(getattr(default, "value", default))


def training_record(placement: Placement, cfg) -> dict:
    """What unlearnkit.json records of a training run's placement and choices (``placement``)."""
    return {
        **placement.record(),
        "optim": resolved_optim(cfg.optim),
        "gradient_checkpointing": bool(cfg.gradient_checkpointing),
        "report_to": cfg.report_to,
    }


def save_model(
    model,
    tokenizer,
    output: str | Path,
    provenance: dict[str, Any],
    overwrite: bool = False,
    files: dict[str, bytes] | None = None,
) -> Path:
    """Write a model folder atomically (temporary sibling, renamed when complete); ``files``: extra
    files (relative path -> bytes) written into it too (``unlearn --eval-every``: ``curve.json``,
    ``curve.png``; TokenUnlearn's ``attribution/``)."""
    with atomic_dir(output, overwrite=overwrite) as tmp:
        for name, data in (files or {}).items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)  # "attribution/scores.json"
            (tmp / name).write_bytes(data)
        model.save_pretrained(tmp, safe_serialization=True)
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)
        (tmp / "unlearnkit.json").write_text(
            json.dumps(provenance, indent=2, default=str) + "\n", encoding="utf-8"
        )
        (tmp / "README.md").write_text(model_card(provenance), encoding="utf-8")
    return Path(output)


_ARXIV = re.compile(r"arXiv[ :]*(\d{4}\.\d{4,5})", re.IGNORECASE)


def hub_base_model(name: str | None) -> str | None:
    """The Hub id a model was made from, for the card's ``base_model`` (what links the Hub's model
    tree): ``name`` itself when it is a hub id, else what the local folder's own card names (so a
    chain tiny-scale local folders -> Llama-3.2-1B keeps pointing at the Hub model); None otherwise."""
    if not name or name == "tiny":
        return None
    if not is_local(str(name)):
        return str(name)
    readme = Path(str(name)).expanduser() / "README.md"
    if not readme.is_file():
        return None
    try:
        from huggingface_hub import ModelCard

        found = ModelCard.load(readme).data.to_dict().get("base_model")
    except Exception:  # noqa: BLE001 - an unreadable card names no base
        return None
    return found if isinstance(found, str) else None


def model_card(provenance: dict[str, Any]) -> str:
    """The folder's README.md, written with ``huggingface_hub.ModelCard``: YAML metadata the Hub reads
    (``base_model``, ``library_name``, ``tags`` with the method and ``arxiv:<id>`` of its paper,
    ``unlearning_method``), then how the model was made, every recorded field."""
    from huggingface_hub import ModelCard, ModelCardData

    method = provenance.get("method")
    paper = str(provenance.get("paper") or "")
    arxiv = sorted(set(_ARXIV.findall(paper)))
    kind = str(provenance.get("kind", "model"))
    tags = ["unlearnkit"]
    if kind.startswith(("unlearned", "continual", "distilled")):
        tags.append("machine-unlearning")
    if method:
        tags.append(str(method))
    tags += [f"arxiv:{a}" for a in arxiv]
    base = hub_base_model(provenance.get("base_model") or provenance.get("teacher"))
    extra = {"unlearning_method": str(method)} if method else {}
    if paper:
        extra["paper"] = paper
    data = ModelCardData(library_name="transformers", base_model=base, tags=tags, **extra)
    lines = [f"# {kind} made with unlearnkit", ""]
    if method:
        lines += [f"Method: `{method}`" + (f" ({paper})" if paper else "") + ".", ""]
    for key, value in provenance.items():
        if isinstance(value, dict):
            lines.append(f"- **{key}**:")
            lines.extend(f"  - {k}: `{v}`" for k, v in value.items())
        else:
            lines.append(f"- **{key}**: `{value}`")
    card = ModelCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines) + "\n")
    return str(card)
