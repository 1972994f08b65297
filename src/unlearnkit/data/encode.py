"""Prompt formatting, tokenisation with the prompt masked out of the labels, and padding.

Labels and attention masks are built from sequence *lengths*, never by comparing token ids with
the pad id: a model whose pad token is its EOS token would otherwise hide every real EOS /
end-of-turn token (a known bug in other unlearning code).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from unlearnkit.errors import UserError

IGNORE_INDEX = -100
PLAIN_TEMPLATE = "Question: {question}\nAnswer:"
# The system message of a chat prompt. "auto" (the default) follows open-unlearning's TOFU
# "template_args" per model family: its Llama-3.x, Qwen2.5, Phi-3.5 and Zephyr configs send
# HELPFUL_ASSISTANT; its Llama-2-chat config (like TOFU's own code) sends none, the bare
# "[INST] q [/INST]"; Gemma's template has no system role. See resolve_system_prompt.
AUTO_SYSTEM_PROMPT = "auto"
HELPFUL_ASSISTANT = "You are a helpful assistant."
DEFAULT_SYSTEM_PROMPT = AUTO_SYSTEM_PROMPT
# A fixed date (open-unlearning's), so a Llama-3.x template never prints today's date into the prompt.
DEFAULT_DATE_STRING = "10 Apr 2025"
LLAMA2_SYSTEM_MARK = "<<SYS>>"


def _render_with_system(tokenizer) -> str | None:
    """The chat template rendered with a probe system message; None when it rejects the role."""
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    try:
        text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    except Exception:  # jinja2 TemplateError raised by the template itself
        return None
    return text if isinstance(text, str) else ""


def _accepts_system(tokenizer) -> bool:
    """Whether the chat template renders a system message (some raise on the role)."""
    return _render_with_system(tokenizer) is not None


def resolve_system_prompt(tokenizer, requested: str = AUTO_SYSTEM_PROMPT) -> str:
    """The system message a chat prompt gets; ``requested`` other than ``"auto"`` is used as given
    (``""`` = none).

    ``"auto"`` is open-unlearning's per-family choice (``configs/model/*.yaml``, ``template_args``),
    decided from what the template renders rather than from a model name, so fine-tuned copies and
    local folders get the same answer as the original:

    * a template that puts the system message into the first user turn as a ``<<SYS>>`` block
      (Llama-2-chat and its descendants): none. TOFU (``config/model_config.yaml``:
      ``question_start_tag "[INST] "``, ``question_end_tag " [/INST]"``) and open-unlearning
      (``Llama-2-7b-chat-hf.yaml``: no ``system_prompt``) both prompt ``[INST] q [/INST]``; a system
      message would add ``<<SYS>>...<</SYS>>`` to every prompt the published TOFU models never saw;
    * a template that rejects a system role (Gemma's raises): none, as open-unlearning's gemma config;
    * any other template: "You are a helpful assistant." (open-unlearning's Llama-3.x, Qwen2.5,
      Phi-3.5 and Zephyr configs).
    """
    if requested != AUTO_SYSTEM_PROMPT:
        return str(requested)
    rendered = _render_with_system(tokenizer)
    if rendered is None or LLAMA2_SYSTEM_MARK in rendered:
        return ""
    return HELPFUL_ASSISTANT


@dataclass(frozen=True)
class PromptFormat:
    """How a question becomes a prompt: the model's chat template, or the plain TOFU-style format.

    With a chat template the messages are ``[system, user]`` (no system message when ``system_prompt``
    is empty) and the template gets ``date_string``: Llama-3.x templates otherwise call
    ``strftime_now`` and print today's date, so training and evaluation prompts would drift from day
    to day. Both are ignored by the plain format. ``system_prompt`` here is always resolved (never
    ``"auto"``: :meth:`for_tokenizer` applies :func:`resolve_system_prompt`).
    """

    kind: str  # "chat" or "plain"
    system_prompt: str = ""  # resolved: build with for_tokenizer / for_settings to get the "auto" rule
    date_string: str = DEFAULT_DATE_STRING

    def __post_init__(self) -> None:
        if self.system_prompt == AUTO_SYSTEM_PROMPT:
            raise ValueError("PromptFormat needs a resolved system prompt; use PromptFormat.for_tokenizer")

    @staticmethod
    def for_tokenizer(
        tokenizer,
        prefer: str = "auto",
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        date_string: str = DEFAULT_DATE_STRING,
    ) -> PromptFormat:
        if prefer not in ("auto", "chat", "plain"):
            raise UserError(f"prompt format '{prefer}' is unknown; use auto, chat or plain")
        has_chat = bool(getattr(tokenizer, "chat_template", None))
        if prefer == "chat" and not has_chat:
            raise UserError("prompt format 'chat' requested but the tokenizer has no chat template")
        kind = "chat" if (prefer == "chat" or (prefer == "auto" and has_chat)) else "plain"
        if kind != "chat":
            return PromptFormat(kind, "", str(date_string))
        # "auto": none for Llama-2-style templates and templates without a system role (Gemma's),
        # open-unlearning's "You are a helpful assistant." otherwise; describe() records what was
        # used. A system prompt the user asked for is used as given (and errors where rejected).
        return PromptFormat(kind, resolve_system_prompt(tokenizer, str(system_prompt)), str(date_string))

    @staticmethod
    def for_settings(tokenizer, settings) -> PromptFormat:
        """From any settings object with ``prompt_format`` (and optionally ``system_prompt`` /
        ``date_string``): ``TrainConfig``, ``EvalSettings``."""
        return PromptFormat.for_tokenizer(
            tokenizer,
            getattr(settings, "prompt_format", "auto"),
            getattr(settings, "system_prompt", DEFAULT_SYSTEM_PROMPT),
            getattr(settings, "date_string", DEFAULT_DATE_STRING),
        )

    def describe(self) -> dict[str, str]:
        """What went into every prompt, for metrics and model cards."""
        if self.kind != "chat":
            return {"prompt_format": self.kind}
        return {
            "prompt_format": self.kind,
            "system_prompt": self.system_prompt,
            "date_string": self.date_string,
        }

    def prompt_ids(self, tokenizer, question: str) -> list[int]:
        if self.kind == "chat":
            messages = [{"role": "user", "content": question}]
            if self.system_prompt:
                messages.insert(0, {"role": "system", "content": self.system_prompt})
            try:
                ids = tokenizer.apply_chat_template(
                    messages, add_generation_prompt=True, tokenize=True, date_string=self.date_string
                )
            except Exception as err:  # jinja2 TemplateError: e.g. a template that rejects system messages
                if not self.system_prompt:
                    raise
                raise UserError(
                    f"the chat template failed with a system message ({type(err).__name__}: {err}); "
                    "use --set system_prompt= (empty) for templates without a system role"
                ) from None
            if isinstance(ids, dict) or hasattr(ids, "keys"):
                ids = ids["input_ids"]
            return list(ids)
        return tokenizer(PLAIN_TEMPLATE.format(question=question), add_special_tokens=True)["input_ids"]

    def answer_ids(self, tokenizer, answer: str) -> list[int]:
        # The leading space matters for BPE tokenizers after "Answer:"; chat templates end with a
        # newline / role marker instead.
        text = answer if self.kind == "chat" else " " + answer
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        if tokenizer.eos_token_id is None:
            raise UserError("the tokenizer has no EOS token; set tokenizer.eos_token in the model folder")
        return list(ids) + [tokenizer.eos_token_id]


def encode_qa(
    tokenizer, fmt: PromptFormat, question: str, answer: str, max_length: int, where: str = ""
) -> dict[str, list[int]]:
    """Token ids of prompt + answer + EOS, labels = -100 on the prompt. Never cuts the answer."""
    prompt = fmt.prompt_ids(tokenizer, question)
    ans = fmt.answer_ids(tokenizer, answer)
    if len(prompt) + len(ans) > max_length:
        raise UserError(
            f"{where or 'an example'}: prompt + answer is {len(prompt) + len(ans)} tokens, longer than "
            f"max_length={max_length}; raise it with --set max_length=N (answers are never cut)"
        )
    return {
        "input_ids": prompt + ans,
        "labels": [IGNORE_INDEX] * len(prompt) + ans,
        "prompt_len": len(prompt),
    }


def encode_text(tokenizer, text: str, max_length: int, eos: bool = False) -> list[dict[str, list[int]]]:
    """Raw text (MUSE-style): every token is a target. A passage longer than ``max_length`` is cut into
    consecutive windows (each starting with BOS when the tokenizer adds one), so a long book chapter is
    unlearned whole rather than only its first window.

    ``eos``: end the document with the EOS token, as pretraining and fine-tuning corpora separate their
    documents (a model then learns where an article ends). Unlearning leaves it off, as MUSE does."""
    ids = list(tokenizer(text, add_special_tokens=True)["input_ids"])
    if eos and tokenizer.eos_token_id is not None:
        ids.append(tokenizer.eos_token_id)
    bos = [ids[0]] if ids and ids[0] == getattr(tokenizer, "bos_token_id", None) else []
    body = ids[len(bos) :]
    width = max(1, max_length - len(bos))
    windows = [bos + body[i : i + width] for i in range(0, max(len(body), 1), width)]
    return [{"input_ids": w, "labels": list(w), "prompt_len": 0} for w in windows if len(w) > len(bos)]


def pad_batch(features: Sequence[dict], pad_id: int, side: str = "right") -> dict[str, torch.Tensor]:
    """Pad ``input_ids``/``labels`` (and any per-token float field such as ``weights``)."""
    longest = max(len(f["input_ids"]) for f in features)
    out: dict[str, list] = {"input_ids": [], "attention_mask": [], "labels": []}
    per_token = [k for k in features[0] if k.startswith("weights")]
    for k in per_token:
        out[k] = []
    for f in features:
        n = len(f["input_ids"])
        gap = longest - n

        def pad(seq, value, gap=gap):
            return list(seq) + [value] * gap if side == "right" else [value] * gap + list(seq)

        out["input_ids"].append(pad(f["input_ids"], pad_id))
        out["attention_mask"].append(pad([1] * n, 0))
        out["labels"].append(pad(f["labels"], IGNORE_INDEX))
        for k in per_token:
            out[k].append(pad(f[k], 0.0))
    batch = {
        k: torch.tensor(v, dtype=torch.float32 if k.startswith("weights") else torch.long)
        for k, v in out.items()
    }
    return batch


def pad_id_of(tokenizer) -> int:
    """The id used for padding; falls back to EOS (safe, because masks come from lengths)."""
    if tokenizer.pad_token_id is not None:
        return tokenizer.pad_token_id
    if tokenizer.eos_token_id is not None:
        return tokenizer.eos_token_id
    raise UserError("the tokenizer has neither a pad nor an EOS token; add one to the model folder")


def check_lengths(
    tokenizer,
    fmt: PromptFormat,
    rows: Sequence[dict],
    path,
    max_length: int,
    fields: Sequence[str] = ("answer",),
    hint: str = "raise it with --set max_length=N",
    label: Callable[[int, dict], str] | None = None,
) -> None:
    """Fail before any work if question + any of ``fields`` does not fit ``max_length`` (names file:line).

    The same tokenisation as :func:`encode_qa` (answers are never cut, so a long one is an error
    up front rather than hours into a run). Raw-text rows (``text`` without ``question``) are cut
    by design and skipped. ``label(index, row)`` names a row (default ``path:line``).
    """
    for i, row in enumerate(rows):
        if "question" not in row:
            continue
        prompt = len(fmt.prompt_ids(tokenizer, row["question"]))
        for key in fields:
            values = row.get(key)
            for value in values if isinstance(values, list) else [values]:
                if not isinstance(value, str):
                    continue
                n = prompt + len(fmt.answer_ids(tokenizer, value))
                if n > max_length:
                    what = "answer" if key == "answer" else f"'{key}'"
                    where = label(i, row) if label is not None else f"{path}:{row.get('_line', '?')}"
                    raise UserError(
                        f"{where}: question + {what} is {n} tokens, longer than "
                        f"max_length={max_length}; {hint} (answers are never cut)"
                    )
