# Generated from unlearnkit.catalog by `python -m unlearnkit.methods > src/unlearnkit/methods.pyi`: do not edit.
# The config classes are built at run time (unlearnkit/methods.py); this stub gives IDEs and type checkers
# their signatures. tests/test_api.py fails when it differs from what the catalog declares.

from typing import Any, ClassVar

class UnlearnConfig:
    """What every method's config class shares: the method it runs, and the fields its caller set."""

    method: ClassVar[str]
    def given(self) -> dict[str, Any]: ...
    def values(self) -> dict[str, Any]: ...

def class_name(method: str) -> str: ...
def check_method_name(name: Any, argument: str = "method") -> str: ...
def config_class(method: str) -> type[UnlearnConfig]: ...
def configs() -> dict[str, type[UnlearnConfig]]: ...
def stub_text() -> str: ...

class GAConfig(UnlearnConfig):
    """The settings of ``ga``: its own (forget_weight, retain_weight, retain_loss, loss_reduction, sam_rho;
    from unlearnkit.catalog.GAConfig: Gradient ascent alone (no retain term by default).) and the
    training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments
    only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "none",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class GDConfig(UnlearnConfig):
    """The settings of ``gd``: its own (forget_weight, retain_weight, retain_loss, loss_reduction, sam_rho;
    from unlearnkit.catalog.GDConfig: Gradient difference: GA on forget + NLL on retain.) and the
    training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments
    only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "nll",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class NPOConfig(UnlearnConfig):
    """The settings of ``npo``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, beta; from unlearnkit.catalog.NPOConfig: NPO (arXiv 2404.05868); beta from the paper.) and
    the training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword
    arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    beta: float
    """inverse temperature of the preference loss (NPO, SimNPO, DPO, AP); WGA: confidence exponent; UNDIAL:
    logit decrease (valid: > 0 (UNDIAL: >= 0))
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "nll",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        beta: float = 0.1,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class WGAConfig(UnlearnConfig):
    """The settings of ``wga``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, beta; from unlearnkit.catalog.WGAConfig: Weighted gradient ascent (arXiv 2502.19301); beta
    in the paper's range 1-5.) and the training settings of unlearnkit.config.TrainConfig (lr, epochs,
    batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    beta: float
    """inverse temperature of the preference loss (NPO, SimNPO, DPO, AP); WGA: confidence exponent; UNDIAL:
    logit decrease (valid: > 0 (UNDIAL: >= 0))
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "nll",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        beta: float = 1.0,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class IDKConfig(UnlearnConfig):
    """The settings of ``idk``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho; from unlearnkit.catalog.IDKConfig: IDK fine-tuning: NLL of a refusal to each forget
    question, plus the retain term.) and the training settings of unlearnkit.config.TrainConfig (lr,
    epochs, batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "nll",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class SIMNPOConfig(UnlearnConfig):
    """The settings of ``simnpo``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, beta, gamma; from unlearnkit.catalog.SimNPOConfig: SimNPO (arXiv 2410.07163): reference-
    free, length-normalised NPO; beta 2.5-4.5, gamma 0.) and the training settings of
    unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    beta: float
    """inverse temperature of the preference loss (NPO, SimNPO, DPO, AP); WGA: confidence exponent; UNDIAL:
    logit decrease (valid: > 0 (UNDIAL: >= 0))
    """
    gamma: float
    """SimNPO reward margin (valid: any number (paper: 0))"""
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "nll",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        beta: float = 2.5,
        gamma: float = 0.0,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class IDKDPOConfig(UnlearnConfig):
    """The settings of ``idk_dpo``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, beta; from unlearnkit.catalog.DPOConfig: IdkDPO (arXiv 2404.05868 baseline): prefer a
    refusal over the forget answer; beta 0.1.) and the training settings of
    unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    beta: float
    """inverse temperature of the preference loss (NPO, SimNPO, DPO, AP); WGA: confidence exponent; UNDIAL:
    logit decrease (valid: > 0 (UNDIAL: >= 0))
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "nll",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        beta: float = 0.1,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class IDKAPConfig(UnlearnConfig):
    """The settings of ``idk_ap``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, beta; from unlearnkit.catalog.IDKAPConfig: IDK+AP (arXiv 2410.08109): refusal NLL on forget
    + answer preservation on retain (replaces retain NLL).) and the training settings of
    unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    beta: float
    """inverse temperature of the preference loss (NPO, SimNPO, DPO, AP); WGA: confidence exponent; UNDIAL:
    logit decrease (valid: > 0 (UNDIAL: >= 0))
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "none",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        beta: float = 0.1,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class MEGDConfig(UnlearnConfig):
    """The settings of ``me_gd``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho; from unlearnkit.catalog.MEConfig: ME+GD (arXiv 2410.08109): maximise entropy on forget
    answers (weight 0.1) + retain NLL.) and the training settings of unlearnkit.config.TrainConfig (lr,
    epochs, batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 0.1,
        retain_weight: float = 1.0,
        retain_loss: str = "nll",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class UNDIALConfig(UnlearnConfig):
    """The settings of ``undial``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, beta; from unlearnkit.catalog.UNDIALConfig: UNDIAL (arXiv 2402.10052): self-distillation
    towards the reference with the true token's logit lowered.) and the training settings of
    unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    beta: float
    """inverse temperature of the preference loss (NPO, SimNPO, DPO, AP); WGA: confidence exponent; UNDIAL:
    logit decrease (valid: > 0 (UNDIAL: >= 0))
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "none",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        beta: float = 10.0,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class RMUConfig(UnlearnConfig):
    """The settings of ``rmu``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, layer, steering_coeff, steering_scale, train_layers, train_modules; from
    unlearnkit.catalog.RMUConfig: RMU (WMDP, arXiv 2403.03218): steer layer-``layer`` activations on
    forget data to ``steering_coeff * u``. ``retain_weight`` is the paper's alpha (1200 for Zephyr-7B);
    only ``train_layers`` x ``train_modules`` are updated (Zephyr: layers 5,6,7 ``mlp.down_proj``);
    empty ``train_layers`` = every layer. The retain term is the activation MSE to the frozen model, not
    NLL/KL. ``steering_scale`` > 0 is Adaptive RMU (arXiv 2408.06223): ``c`` follows the model's
    activation norm, for models whose activations are far from Zephyr-7B's scale.) and the training
    settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    layer: int
    """RMU: decoder layer whose output activations are steered (valid: >= 0 (< number of layers))"""
    steering_coeff: float
    """RMU: norm c of the random target direction c*u (valid: > 0)"""
    steering_scale: float
    """Adaptive RMU (arXiv 2408.06223): when > 0, c is steering_scale x the frozen model's mean layer
    activation norm on the forget batch (steering_coeff is then unused) (valid: >= 0 (0 = a fixed
    steering_coeff; the paper's beta is 5))
    """
    train_layers: str
    """RMU: layers whose train_modules are updated (others frozen) (valid: comma-separated indices, empty =
    all)
    """
    train_modules: str
    """RMU: module names updated inside train_layers (valid: comma-separated names, e.g. mlp.down_proj)"""
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1200.0,
        retain_loss: str = "none",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        layer: int = 7,
        steering_coeff: float = 6.5,
        steering_scale: float = 0.0,
        train_layers: str = "5,6,7",
        train_modules: str = "mlp.down_proj",
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class ASURMUConfig(UnlearnConfig):
    """The settings of ``asu_rmu``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, layer, steering_coeff, steering_scale, train_layers, train_modules, tau, layers; from
    unlearnkit.catalog.ASURMUConfig: ASU representation variant (arXiv 2603.01285, WMDP): RMU whose
    target is the frozen model's own layer activation under smoothed attention (instead of
    ``steering_coeff * u``).) and the training settings of unlearnkit.config.TrainConfig (lr, epochs,
    batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    layer: int
    """RMU: decoder layer whose output activations are steered (valid: >= 0 (< number of layers))"""
    steering_coeff: float
    """RMU: norm c of the random target direction c*u (valid: > 0)"""
    steering_scale: float
    """Adaptive RMU (arXiv 2408.06223): when > 0, c is steering_scale x the frozen model's mean layer
    activation norm on the forget batch (steering_coeff is then unused) (valid: >= 0 (0 = a fixed
    steering_coeff; the paper's beta is 5))
    """
    train_layers: str
    """RMU: layers whose train_modules are updated (others frozen) (valid: comma-separated indices, empty =
    all)
    """
    train_modules: str
    """RMU: module names updated inside train_layers (valid: comma-separated names, e.g. mlp.down_proj)"""
    tau: float
    """ASU attention temperature of the smoothed teacher; > 1 flattens attention (valid: > 0 (stable in [2,
    2.8] on 7B))
    """
    layers: str
    """decoder layers whose attention is smoothed (valid: comma-separated indices, empty = all)"""
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1200.0,
        retain_loss: str = "none",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        layer: int = 7,
        steering_coeff: float = 6.5,
        steering_scale: float = 0.0,
        train_layers: str = "5,6,7",
        train_modules: str = "mlp.down_proj",
        tau: float = 2.0,
        layers: str = "",
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class ASUConfig(UnlearnConfig):
    """The settings of ``asu``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, tau, layers, idk, lambda_scales_idk, raw_text; from unlearnkit.catalog.ASUConfig: Attention
    Smoothing Unlearning (arXiv 2603.01285). ``forget_weight`` is the paper's lambda. Defaults from the
    authors' Llama-2-7B TOFU recipe: tau 2.3, lambda 0.1 (stable for tau in [2, 2.8]). ``layers``:
    comma-separated decoder-layer indices to smooth (empty = all layers). ``idk``: ASU+IDK (first answer
    token excluded from the KL, plus the IDK loss). ``lambda_scales_idk``: with ``idk``, whether lambda
    (``forget_weight``) multiplies the IDK term too, ``L = lambda * (KL + IDK) + L_retain`` (true, the
    default) or only the KL, ``L = lambda * KL + IDK + L_retain`` (false). The authors' code never ran
    this combination, so neither is 'theirs'. ``raw_text``: KL over every token of the passage (MUSE-
    style); raw ``text`` rows are used as they are, QA rows become 'question answer' passages.) and the
    training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments
    only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    tau: float
    """ASU attention temperature of the smoothed teacher; > 1 flattens attention (valid: > 0 (stable in [2,
    2.8] on 7B))
    """
    layers: str
    """decoder layers whose attention is smoothed (valid: comma-separated indices, empty = all)"""
    idk: bool
    """ASU+IDK: exclude the first answer token from the KL and add the IDK refusal loss (valid: true |
    false)
    """
    lambda_scales_idk: bool
    """with idk: lambda multiplies the IDK term too (else only the KL) (valid: true | false)"""
    raw_text: bool
    """KL over every token of the passage (MUSE-style raw text) instead of the answer only (valid: true |
    false)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 0.1,
        retain_weight: float = 1.0,
        retain_loss: str = "nll",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        tau: float = 2.3,
        layers: str = "",
        idk: bool = False,
        lambda_scales_idk: bool = True,
        raw_text: bool = False,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class ASUGDConfig(UnlearnConfig):
    """The settings of ``asu_gd``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, tau, layers, idk, lambda_scales_idk, raw_text; from unlearnkit.catalog.ASUConfig: Attention
    Smoothing Unlearning (arXiv 2603.01285). ``forget_weight`` is the paper's lambda. Defaults from the
    authors' Llama-2-7B TOFU recipe: tau 2.3, lambda 0.1 (stable for tau in [2, 2.8]). ``layers``:
    comma-separated decoder-layer indices to smooth (empty = all layers). ``idk``: ASU+IDK (first answer
    token excluded from the KL, plus the IDK loss). ``lambda_scales_idk``: with ``idk``, whether lambda
    (``forget_weight``) multiplies the IDK term too, ``L = lambda * (KL + IDK) + L_retain`` (true, the
    default) or only the KL, ``L = lambda * KL + IDK + L_retain`` (false). The authors' code never ran
    this combination, so neither is 'theirs'. ``raw_text``: KL over every token of the passage (MUSE-
    style); raw ``text`` rows are used as they are, QA rows become 'question answer' passages.) and the
    training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments
    only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    tau: float
    """ASU attention temperature of the smoothed teacher; > 1 flattens attention (valid: > 0 (stable in [2,
    2.8] on 7B))
    """
    layers: str
    """decoder layers whose attention is smoothed (valid: comma-separated indices, empty = all)"""
    idk: bool
    """ASU+IDK: exclude the first answer token from the KL and add the IDK refusal loss (valid: true |
    false)
    """
    lambda_scales_idk: bool
    """with idk: lambda multiplies the IDK term too (else only the KL) (valid: true | false)"""
    raw_text: bool
    """KL over every token of the passage (MUSE-style raw text) instead of the answer only (valid: true |
    false)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 0.1,
        retain_weight: float = 1.0,
        retain_loss: str = "nll",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        tau: float = 2.3,
        layers: str = "",
        idk: bool = False,
        lambda_scales_idk: bool = True,
        raw_text: bool = False,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class ASUKLConfig(UnlearnConfig):
    """The settings of ``asu_kl``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, tau, layers, idk, lambda_scales_idk, raw_text; from unlearnkit.catalog.ASUConfig: Attention
    Smoothing Unlearning (arXiv 2603.01285). ``forget_weight`` is the paper's lambda. Defaults from the
    authors' Llama-2-7B TOFU recipe: tau 2.3, lambda 0.1 (stable for tau in [2, 2.8]). ``layers``:
    comma-separated decoder-layer indices to smooth (empty = all layers). ``idk``: ASU+IDK (first answer
    token excluded from the KL, plus the IDK loss). ``lambda_scales_idk``: with ``idk``, whether lambda
    (``forget_weight``) multiplies the IDK term too, ``L = lambda * (KL + IDK) + L_retain`` (true, the
    default) or only the KL, ``L = lambda * KL + IDK + L_retain`` (false). The authors' code never ran
    this combination, so neither is 'theirs'. ``raw_text``: KL over every token of the passage (MUSE-
    style); raw ``text`` rows are used as they are, QA rows become 'question answer' passages.) and the
    training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments
    only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    tau: float
    """ASU attention temperature of the smoothed teacher; > 1 flattens attention (valid: > 0 (stable in [2,
    2.8] on 7B))
    """
    layers: str
    """decoder layers whose attention is smoothed (valid: comma-separated indices, empty = all)"""
    idk: bool
    """ASU+IDK: exclude the first answer token from the KL and add the IDK refusal loss (valid: true |
    false)
    """
    lambda_scales_idk: bool
    """with idk: lambda multiplies the IDK term too (else only the KL) (valid: true | false)"""
    raw_text: bool
    """KL over every token of the passage (MUSE-style raw text) instead of the answer only (valid: true |
    false)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 0.1,
        retain_weight: float = 1.0,
        retain_loss: str = "kl",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        tau: float = 2.3,
        layers: str = "",
        idk: bool = False,
        lambda_scales_idk: bool = True,
        raw_text: bool = False,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class ASUIDKConfig(UnlearnConfig):
    """The settings of ``asu_idk``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, tau, layers, idk, lambda_scales_idk, raw_text; from unlearnkit.catalog.ASUConfig: Attention
    Smoothing Unlearning (arXiv 2603.01285). ``forget_weight`` is the paper's lambda. Defaults from the
    authors' Llama-2-7B TOFU recipe: tau 2.3, lambda 0.1 (stable for tau in [2, 2.8]). ``layers``:
    comma-separated decoder-layer indices to smooth (empty = all layers). ``idk``: ASU+IDK (first answer
    token excluded from the KL, plus the IDK loss). ``lambda_scales_idk``: with ``idk``, whether lambda
    (``forget_weight``) multiplies the IDK term too, ``L = lambda * (KL + IDK) + L_retain`` (true, the
    default) or only the KL, ``L = lambda * KL + IDK + L_retain`` (false). The authors' code never ran
    this combination, so neither is 'theirs'. ``raw_text``: KL over every token of the passage (MUSE-
    style); raw ``text`` rows are used as they are, QA rows become 'question answer' passages.) and the
    training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments
    only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    tau: float
    """ASU attention temperature of the smoothed teacher; > 1 flattens attention (valid: > 0 (stable in [2,
    2.8] on 7B))
    """
    layers: str
    """decoder layers whose attention is smoothed (valid: comma-separated indices, empty = all)"""
    idk: bool
    """ASU+IDK: exclude the first answer token from the KL and add the IDK refusal loss (valid: true |
    false)
    """
    lambda_scales_idk: bool
    """with idk: lambda multiplies the IDK term too (else only the KL) (valid: true | false)"""
    raw_text: bool
    """KL over every token of the passage (MUSE-style raw text) instead of the answer only (valid: true |
    false)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 0.1,
        retain_weight: float = 1.0,
        retain_loss: str = "nll",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        tau: float = 2.3,
        layers: str = "",
        idk: bool = True,
        lambda_scales_idk: bool = True,
        raw_text: bool = False,
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class TGAConfig(UnlearnConfig):
    """The settings of ``t-ga``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, selection, r, alpha, tau_w, mask_token, tagger; from unlearnkit.catalog.TokenGAConfig:
    TokenUnlearn variant of GAConfig: Gradient ascent alone (no retain term by default).) and the
    training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments
    only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    selection: str
    """token selection: top-r tokens (hard) or softmax weights (soft) (valid: hard | soft)"""
    r: float
    """hard selection: share of answer tokens kept by importance (valid: (0, 1])"""
    alpha: float
    """importance mix: alpha x masking score + (1 - alpha) x entropy score (valid: [0, 1])"""
    tau_w: float
    """soft selection: softmax temperature of the token weights (valid: > 0)"""
    mask_token: str
    """word that replaces a token when its masking importance is measured (valid: one word)"""
    tagger: str
    """part-of-speech tagger for the importance prior (spaCy if installed, else a rule-based fallback)
    (valid: auto | spacy | heuristic)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "kl",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        selection: str = "hard",
        r: float = 0.2,
        alpha: float = 0.7,
        tau_w: float = 1.0,
        mask_token: str = "something",
        tagger: str = "auto",
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class SGAConfig(UnlearnConfig):
    """The settings of ``s-ga``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, selection, r, alpha, tau_w, mask_token, tagger; from unlearnkit.catalog.TokenGAConfig:
    TokenUnlearn variant of GAConfig: Gradient ascent alone (no retain term by default).) and the
    training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments
    only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    selection: str
    """token selection: top-r tokens (hard) or softmax weights (soft) (valid: hard | soft)"""
    r: float
    """hard selection: share of answer tokens kept by importance (valid: (0, 1])"""
    alpha: float
    """importance mix: alpha x masking score + (1 - alpha) x entropy score (valid: [0, 1])"""
    tau_w: float
    """soft selection: softmax temperature of the token weights (valid: > 0)"""
    mask_token: str
    """word that replaces a token when its masking importance is measured (valid: one word)"""
    tagger: str
    """part-of-speech tagger for the importance prior (spaCy if installed, else a rule-based fallback)
    (valid: auto | spacy | heuristic)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "kl",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        selection: str = "soft",
        r: float = 0.2,
        alpha: float = 0.7,
        tau_w: float = 1.0,
        mask_token: str = "something",
        tagger: str = "auto",
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class TWGAConfig(UnlearnConfig):
    """The settings of ``t-wga``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, beta, selection, r, alpha, tau_w, mask_token, tagger; from
    unlearnkit.catalog.TokenWGAConfig: TokenUnlearn variant of WGAConfig: Weighted gradient ascent
    (arXiv 2502.19301); beta in the paper's range 1-5.) and the training settings of
    unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    beta: float
    """inverse temperature of the preference loss (NPO, SimNPO, DPO, AP); WGA: confidence exponent; UNDIAL:
    logit decrease (valid: > 0 (UNDIAL: >= 0))
    """
    selection: str
    """token selection: top-r tokens (hard) or softmax weights (soft) (valid: hard | soft)"""
    r: float
    """hard selection: share of answer tokens kept by importance (valid: (0, 1])"""
    alpha: float
    """importance mix: alpha x masking score + (1 - alpha) x entropy score (valid: [0, 1])"""
    tau_w: float
    """soft selection: softmax temperature of the token weights (valid: > 0)"""
    mask_token: str
    """word that replaces a token when its masking importance is measured (valid: one word)"""
    tagger: str
    """part-of-speech tagger for the importance prior (spaCy if installed, else a rule-based fallback)
    (valid: auto | spacy | heuristic)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "kl",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        beta: float = 1.0,
        selection: str = "hard",
        r: float = 0.2,
        alpha: float = 0.7,
        tau_w: float = 1.0,
        mask_token: str = "something",
        tagger: str = "auto",
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class SWGAConfig(UnlearnConfig):
    """The settings of ``s-wga``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, beta, selection, r, alpha, tau_w, mask_token, tagger; from
    unlearnkit.catalog.TokenWGAConfig: TokenUnlearn variant of WGAConfig: Weighted gradient ascent
    (arXiv 2502.19301); beta in the paper's range 1-5.) and the training settings of
    unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    beta: float
    """inverse temperature of the preference loss (NPO, SimNPO, DPO, AP); WGA: confidence exponent; UNDIAL:
    logit decrease (valid: > 0 (UNDIAL: >= 0))
    """
    selection: str
    """token selection: top-r tokens (hard) or softmax weights (soft) (valid: hard | soft)"""
    r: float
    """hard selection: share of answer tokens kept by importance (valid: (0, 1])"""
    alpha: float
    """importance mix: alpha x masking score + (1 - alpha) x entropy score (valid: [0, 1])"""
    tau_w: float
    """soft selection: softmax temperature of the token weights (valid: > 0)"""
    mask_token: str
    """word that replaces a token when its masking importance is measured (valid: one word)"""
    tagger: str
    """part-of-speech tagger for the importance prior (spaCy if installed, else a rule-based fallback)
    (valid: auto | spacy | heuristic)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "kl",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        beta: float = 1.0,
        selection: str = "soft",
        r: float = 0.2,
        alpha: float = 0.7,
        tau_w: float = 1.0,
        mask_token: str = "something",
        tagger: str = "auto",
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class TNPOConfig(UnlearnConfig):
    """The settings of ``t-npo``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, beta, selection, r, alpha, tau_w, mask_token, tagger; from
    unlearnkit.catalog.TokenNPOConfig: TokenUnlearn variant of NPOConfig: NPO (arXiv 2404.05868); beta
    from the paper.) and the training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size
    ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    beta: float
    """inverse temperature of the preference loss (NPO, SimNPO, DPO, AP); WGA: confidence exponent; UNDIAL:
    logit decrease (valid: > 0 (UNDIAL: >= 0))
    """
    selection: str
    """token selection: top-r tokens (hard) or softmax weights (soft) (valid: hard | soft)"""
    r: float
    """hard selection: share of answer tokens kept by importance (valid: (0, 1])"""
    alpha: float
    """importance mix: alpha x masking score + (1 - alpha) x entropy score (valid: [0, 1])"""
    tau_w: float
    """soft selection: softmax temperature of the token weights (valid: > 0)"""
    mask_token: str
    """word that replaces a token when its masking importance is measured (valid: one word)"""
    tagger: str
    """part-of-speech tagger for the importance prior (spaCy if installed, else a rule-based fallback)
    (valid: auto | spacy | heuristic)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "kl",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        beta: float = 0.1,
        selection: str = "hard",
        r: float = 0.2,
        alpha: float = 0.7,
        tau_w: float = 1.0,
        mask_token: str = "something",
        tagger: str = "auto",
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class SNPOConfig(UnlearnConfig):
    """The settings of ``s-npo``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, beta, selection, r, alpha, tau_w, mask_token, tagger; from
    unlearnkit.catalog.TokenNPOConfig: TokenUnlearn variant of NPOConfig: NPO (arXiv 2404.05868); beta
    from the paper.) and the training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size
    ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    beta: float
    """inverse temperature of the preference loss (NPO, SimNPO, DPO, AP); WGA: confidence exponent; UNDIAL:
    logit decrease (valid: > 0 (UNDIAL: >= 0))
    """
    selection: str
    """token selection: top-r tokens (hard) or softmax weights (soft) (valid: hard | soft)"""
    r: float
    """hard selection: share of answer tokens kept by importance (valid: (0, 1])"""
    alpha: float
    """importance mix: alpha x masking score + (1 - alpha) x entropy score (valid: [0, 1])"""
    tau_w: float
    """soft selection: softmax temperature of the token weights (valid: > 0)"""
    mask_token: str
    """word that replaces a token when its masking importance is measured (valid: one word)"""
    tagger: str
    """part-of-speech tagger for the importance prior (spaCy if installed, else a rule-based fallback)
    (valid: auto | spacy | heuristic)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1.0,
        retain_loss: str = "kl",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        beta: float = 0.1,
        selection: str = "soft",
        r: float = 0.2,
        alpha: float = 0.7,
        tau_w: float = 1.0,
        mask_token: str = "something",
        tagger: str = "auto",
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class TRMUConfig(UnlearnConfig):
    """The settings of ``t-rmu``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, layer, steering_coeff, steering_scale, train_layers, train_modules, selection, r, alpha,
    tau_w, mask_token, tagger; from unlearnkit.catalog.TokenRMUConfig: TokenUnlearn variant of
    RMUConfig: RMU (WMDP, arXiv 2403.03218): steer layer-``layer`` activations on forget data to
    ``steering_coeff * u``. ``retain_weight`` is the paper's alpha (1200 for Zephyr-7B); only
    ``train_layers`` x ``train_modules`` are updated (Zephyr: layers 5,6,7 ``mlp.down_proj``); empty
    ``train_layers`` = every layer. The retain term is the activation MSE to the frozen model, not
    NLL/KL. ``steering_scale`` > 0 is Adaptive RMU (arXiv 2408.06223): ``c`` follows the model's
    activation norm, for models whose activations are far from Zephyr-7B's scale.) and the training
    settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    layer: int
    """RMU: decoder layer whose output activations are steered (valid: >= 0 (< number of layers))"""
    steering_coeff: float
    """RMU: norm c of the random target direction c*u (valid: > 0)"""
    steering_scale: float
    """Adaptive RMU (arXiv 2408.06223): when > 0, c is steering_scale x the frozen model's mean layer
    activation norm on the forget batch (steering_coeff is then unused) (valid: >= 0 (0 = a fixed
    steering_coeff; the paper's beta is 5))
    """
    train_layers: str
    """RMU: layers whose train_modules are updated (others frozen) (valid: comma-separated indices, empty =
    all)
    """
    train_modules: str
    """RMU: module names updated inside train_layers (valid: comma-separated names, e.g. mlp.down_proj)"""
    selection: str
    """token selection: top-r tokens (hard) or softmax weights (soft) (valid: hard | soft)"""
    r: float
    """hard selection: share of answer tokens kept by importance (valid: (0, 1])"""
    alpha: float
    """importance mix: alpha x masking score + (1 - alpha) x entropy score (valid: [0, 1])"""
    tau_w: float
    """soft selection: softmax temperature of the token weights (valid: > 0)"""
    mask_token: str
    """word that replaces a token when its masking importance is measured (valid: one word)"""
    tagger: str
    """part-of-speech tagger for the importance prior (spaCy if installed, else a rule-based fallback)
    (valid: auto | spacy | heuristic)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1200.0,
        retain_loss: str = "none",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        layer: int = 7,
        steering_coeff: float = 6.5,
        steering_scale: float = 0.0,
        train_layers: str = "5,6,7",
        train_modules: str = "mlp.down_proj",
        selection: str = "hard",
        r: float = 0.2,
        alpha: float = 0.7,
        tau_w: float = 1.0,
        mask_token: str = "something",
        tagger: str = "auto",
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class SRMUConfig(UnlearnConfig):
    """The settings of ``s-rmu``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, layer, steering_coeff, steering_scale, train_layers, train_modules, selection, r, alpha,
    tau_w, mask_token, tagger; from unlearnkit.catalog.TokenRMUConfig: TokenUnlearn variant of
    RMUConfig: RMU (WMDP, arXiv 2403.03218): steer layer-``layer`` activations on forget data to
    ``steering_coeff * u``. ``retain_weight`` is the paper's alpha (1200 for Zephyr-7B); only
    ``train_layers`` x ``train_modules`` are updated (Zephyr: layers 5,6,7 ``mlp.down_proj``); empty
    ``train_layers`` = every layer. The retain term is the activation MSE to the frozen model, not
    NLL/KL. ``steering_scale`` > 0 is Adaptive RMU (arXiv 2408.06223): ``c`` follows the model's
    activation norm, for models whose activations are far from Zephyr-7B's scale.) and the training
    settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    layer: int
    """RMU: decoder layer whose output activations are steered (valid: >= 0 (< number of layers))"""
    steering_coeff: float
    """RMU: norm c of the random target direction c*u (valid: > 0)"""
    steering_scale: float
    """Adaptive RMU (arXiv 2408.06223): when > 0, c is steering_scale x the frozen model's mean layer
    activation norm on the forget batch (steering_coeff is then unused) (valid: >= 0 (0 = a fixed
    steering_coeff; the paper's beta is 5))
    """
    train_layers: str
    """RMU: layers whose train_modules are updated (others frozen) (valid: comma-separated indices, empty =
    all)
    """
    train_modules: str
    """RMU: module names updated inside train_layers (valid: comma-separated names, e.g. mlp.down_proj)"""
    selection: str
    """token selection: top-r tokens (hard) or softmax weights (soft) (valid: hard | soft)"""
    r: float
    """hard selection: share of answer tokens kept by importance (valid: (0, 1])"""
    alpha: float
    """importance mix: alpha x masking score + (1 - alpha) x entropy score (valid: [0, 1])"""
    tau_w: float
    """soft selection: softmax temperature of the token weights (valid: > 0)"""
    mask_token: str
    """word that replaces a token when its masking importance is measured (valid: one word)"""
    tagger: str
    """part-of-speech tagger for the importance prior (spaCy if installed, else a rule-based fallback)
    (valid: auto | spacy | heuristic)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 1.0,
        retain_weight: float = 1200.0,
        retain_loss: str = "none",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        layer: int = 7,
        steering_coeff: float = 6.5,
        steering_scale: float = 0.0,
        train_layers: str = "5,6,7",
        train_modules: str = "mlp.down_proj",
        selection: str = "soft",
        r: float = 0.2,
        alpha: float = 0.7,
        tau_w: float = 1.0,
        mask_token: str = "something",
        tagger: str = "auto",
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class TASUConfig(UnlearnConfig):
    """The settings of ``t-asu``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, tau, layers, idk, lambda_scales_idk, raw_text, selection, r, alpha, tau_w, mask_token,
    tagger; from unlearnkit.catalog.TokenASUConfig: TokenUnlearn variant of ASUConfig: Attention
    Smoothing Unlearning (arXiv 2603.01285). ``forget_weight`` is the paper's lambda. Defaults from the
    authors' Llama-2-7B TOFU recipe: tau 2.3, lambda 0.1 (stable for tau in [2, 2.8]). ``layers``:
    comma-separated decoder-layer indices to smooth (empty = all layers). ``idk``: ASU+IDK (first answer
    token excluded from the KL, plus the IDK loss). ``lambda_scales_idk``: with ``idk``, whether lambda
    (``forget_weight``) multiplies the IDK term too, ``L = lambda * (KL + IDK) + L_retain`` (true, the
    default) or only the KL, ``L = lambda * KL + IDK + L_retain`` (false). The authors' code never ran
    this combination, so neither is 'theirs'. ``raw_text``: KL over every token of the passage (MUSE-
    style); raw ``text`` rows are used as they are, QA rows become 'question answer' passages.) and the
    training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments
    only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    tau: float
    """ASU attention temperature of the smoothed teacher; > 1 flattens attention (valid: > 0 (stable in [2,
    2.8] on 7B))
    """
    layers: str
    """decoder layers whose attention is smoothed (valid: comma-separated indices, empty = all)"""
    idk: bool
    """ASU+IDK: exclude the first answer token from the KL and add the IDK refusal loss (valid: true |
    false)
    """
    lambda_scales_idk: bool
    """with idk: lambda multiplies the IDK term too (else only the KL) (valid: true | false)"""
    raw_text: bool
    """KL over every token of the passage (MUSE-style raw text) instead of the answer only (valid: true |
    false)
    """
    selection: str
    """token selection: top-r tokens (hard) or softmax weights (soft) (valid: hard | soft)"""
    r: float
    """hard selection: share of answer tokens kept by importance (valid: (0, 1])"""
    alpha: float
    """importance mix: alpha x masking score + (1 - alpha) x entropy score (valid: [0, 1])"""
    tau_w: float
    """soft selection: softmax temperature of the token weights (valid: > 0)"""
    mask_token: str
    """word that replaces a token when its masking importance is measured (valid: one word)"""
    tagger: str
    """part-of-speech tagger for the importance prior (spaCy if installed, else a rule-based fallback)
    (valid: auto | spacy | heuristic)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 0.1,
        retain_weight: float = 1.0,
        retain_loss: str = "kl",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        tau: float = 2.3,
        layers: str = "",
        idk: bool = False,
        lambda_scales_idk: bool = True,
        raw_text: bool = False,
        selection: str = "hard",
        r: float = 0.2,
        alpha: float = 0.7,
        tau_w: float = 1.0,
        mask_token: str = "something",
        tagger: str = "auto",
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...

class SASUConfig(UnlearnConfig):
    """The settings of ``s-asu``: its own (forget_weight, retain_weight, retain_loss, loss_reduction,
    sam_rho, tau, layers, idk, lambda_scales_idk, raw_text, selection, r, alpha, tau_w, mask_token,
    tagger; from unlearnkit.catalog.TokenASUConfig: TokenUnlearn variant of ASUConfig: Attention
    Smoothing Unlearning (arXiv 2603.01285). ``forget_weight`` is the paper's lambda. Defaults from the
    authors' Llama-2-7B TOFU recipe: tau 2.3, lambda 0.1 (stable for tau in [2, 2.8]). ``layers``:
    comma-separated decoder-layer indices to smooth (empty = all layers). ``idk``: ASU+IDK (first answer
    token excluded from the KL, plus the IDK loss). ``lambda_scales_idk``: with ``idk``, whether lambda
    (``forget_weight``) multiplies the IDK term too, ``L = lambda * (KL + IDK) + L_retain`` (true, the
    default) or only the KL, ``L = lambda * KL + IDK + L_retain`` (false). The authors' code never ran
    this combination, so neither is 'theirs'. ``raw_text``: KL over every token of the passage (MUSE-
    style); raw ``text`` rows are used as they are, QA rows become 'question answer' passages.) and the
    training settings of unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments
    only.
    """

    forget_weight: float
    """weight of the forget term (alias 'lambda': ASU's lambda) (valid: >= 0)"""
    retain_weight: float
    """weight of the retain term (RMU: the paper's alpha) (valid: >= 0)"""
    retain_loss: str
    """retain term: NLL on retain answers, KL to the original model, or none (valid: nll | kl | none)"""
    loss_reduction: str
    """token averaging of the losses: token = one mean over every answer token of the batch (as TOFU /
    open-unlearning); sequence = per-sequence mean then batch mean (the same run whatever the batch
    layout) (valid: token | sequence)
    """
    sam_rho: float
    """SAM radius: the forget gradient is taken at a worst-case weight perturbation (arXiv 2502.05374)
    (valid: >= 0 (0 = off))
    """
    tau: float
    """ASU attention temperature of the smoothed teacher; > 1 flattens attention (valid: > 0 (stable in [2,
    2.8] on 7B))
    """
    layers: str
    """decoder layers whose attention is smoothed (valid: comma-separated indices, empty = all)"""
    idk: bool
    """ASU+IDK: exclude the first answer token from the KL and add the IDK refusal loss (valid: true |
    false)
    """
    lambda_scales_idk: bool
    """with idk: lambda multiplies the IDK term too (else only the KL) (valid: true | false)"""
    raw_text: bool
    """KL over every token of the passage (MUSE-style raw text) instead of the answer only (valid: true |
    false)
    """
    selection: str
    """token selection: top-r tokens (hard) or softmax weights (soft) (valid: hard | soft)"""
    r: float
    """hard selection: share of answer tokens kept by importance (valid: (0, 1])"""
    alpha: float
    """importance mix: alpha x masking score + (1 - alpha) x entropy score (valid: [0, 1])"""
    tau_w: float
    """soft selection: softmax temperature of the token weights (valid: > 0)"""
    mask_token: str
    """word that replaces a token when its masking importance is measured (valid: one word)"""
    tagger: str
    """part-of-speech tagger for the importance prior (spaCy if installed, else a rule-based fallback)
    (valid: auto | spacy | heuristic)
    """
    lr: float
    """peak learning rate (AdamW) (valid: > 0)"""
    epochs: float
    """passes over the forget set (ignored when max_steps > 0) (valid: > 0)"""
    max_steps: int
    """optimiser steps; > 0 overrides epochs (valid: -1 (off) or >= 1)"""
    batch_size: int
    """forget (and paired retain) examples per device per micro-batch (valid: >= 1)"""
    grad_accum: int
    """micro-batches per optimiser step (effective batch = batch_size x grad_accum x devices) (valid: >= 1)"""
    weight_decay: float
    """AdamW weight decay (valid: >= 0)"""
    anchor_decay: float
    """after each optimiser step every trained weight moves this share of the way back to its value at the
    start of training (L2-SP, Li et al. 2018): a fine-tune keeps more of what the model knew; costs one
    copy of the trained weights (valid: [0, 1) (0 = off))
    """
    warmup_epochs: float
    """linear warm-up length, in epochs (valid: >= 0)"""
    lr_scheduler: str
    """learning-rate schedule after warm-up (valid: linear | cosine | constant | constant_with_warmup)"""
    max_grad_norm: float
    """gradient clipping norm (valid: >= 0 (0 = no clipping))"""
    seed: int
    """seed of data order, initialisation and sampling: same seed, same weights (valid: any integer)"""
    max_length: int
    """longest question + answer in tokens; longer rows are an error, never cut (valid: >= 8)"""
    save_every: int
    """optimiser steps between checkpoints (for --resume) (valid: >= 0 (0 = none))"""
    save_total_limit: int
    """checkpoints kept (valid: >= 1)"""
    reference: str
    """how the original model's outputs are obtained (NPO, KL retain, ASU): a frozen copy, the LoRA base
    with adapters off, a cache computed before training, or the cheapest exact one (valid: auto | copy |
    adapter (needs lora_r > 0) | cache)
    """
    cache_topk: int
    """reference=cache: keep the top-k logits + residual mass instead of the full vocabulary (valid: >= 0
    (0 = exact))
    """
    precision: str
    """training precision: bf16 / fp16 are mixed (float32 master weights under autocast), bf16-true trains
    bfloat16 weights and optimiser states (as open-unlearning); auto follows the weights' dtype
    (--dtype): bfloat16 -> bf16-true, float32 -> bf16 on GPUs that have it, else fp32 (valid: auto |
    fp32 | bf16 | fp16 | bf16-true)
    """
    optim: str
    """the optimiser (TrainingArguments.optim; auto: transformers' default adamw_torch_fused);
    bitsandbytes' paged / 8-bit ones (paged_adamw_32bit as open-unlearning, adamw_8bit ...) need pip
    install 'unlearnkit[bnb]' (valid: auto | any transformers OptimizerNames value)
    """
    report_to: str
    """where the Trainer sends its logs (loss terms, --eval-every metrics); same as --report-to (valid:
    none | tensorboard | wandb (needs the package: unlearnkit[tracking]))
    """
    gradient_checkpointing: bool
    """recompute activations in the backward pass (less memory, ~30% slower) (valid: true | false)"""
    prompt_format: str
    """how a question is shown to the model: its chat template, or 'Question: ... Answer:' (valid: auto |
    chat | plain)
    """
    system_prompt: str
    """chat templates only: the system message (auto: none for Llama-2-chat templates and templates without
    a system role, else 'You are a helpful assistant.', as open-unlearning) (valid: auto | any text (''
    = none))
    """
    date_string: str
    """chat templates only: the date Llama-3.x templates print (fixed for reproducibility) (valid: any
    text)
    """
    lora_r: int
    """LoRA rank; 0 trains every weight (valid: >= 0)"""
    lora_alpha: float
    """LoRA scaling alpha (valid: > 0)"""
    lora_dropout: float
    """LoRA dropout (valid: [0, 1))"""
    lora_target: str
    """modules that get LoRA adapters (valid: all-linear or comma-separated module names)"""
    lora_save: str
    """with LoRA: save the merged model or the adapter alone (valid: merged | adapter)"""
    collapse_guard: str
    """unlearn: a few retain / general questions (raw text: passage continuations) answered greedily at
    step 0, halfway and at the last step (stop: every ~10%); on a collapse (ROUGE-L or token entropy
    below collapse_fraction x step 0, or repeated 3-grams) warn on stderr + in the card, or stop and
    keep the last state that passed (--no-collapse-guard = off) (valid: off | warn | stop)
    """
    collapse_fraction: float
    """collapse guard: the probe fails below this share of its step-0 ROUGE-L (or token entropy) (valid:
    (0, 1))
    """
    def __init__(
        self,
        *,
        forget_weight: float = 0.1,
        retain_weight: float = 1.0,
        retain_loss: str = "kl",
        loss_reduction: str = "token",
        sam_rho: float = 0.0,
        tau: float = 2.3,
        layers: str = "",
        idk: bool = False,
        lambda_scales_idk: bool = True,
        raw_text: bool = False,
        selection: str = "soft",
        r: float = 0.2,
        alpha: float = 0.7,
        tau_w: float = 1.0,
        mask_token: str = "something",
        tagger: str = "auto",
        lr: float = 1e-05,
        epochs: float = 5.0,
        max_steps: int = -1,
        batch_size: int = 8,
        grad_accum: int = 4,
        weight_decay: float = 0.01,
        anchor_decay: float = 0.0,
        warmup_epochs: float = 1.0,
        lr_scheduler: str = "linear",
        max_grad_norm: float = 1.0,
        seed: int = 0,
        max_length: int = 512,
        save_every: int = 0,
        save_total_limit: int = 2,
        reference: str = "auto",
        cache_topk: int = 0,
        precision: str = "auto",
        optim: str = "auto",
        report_to: str = "none",
        gradient_checkpointing: bool = False,
        prompt_format: str = "auto",
        system_prompt: str = "auto",
        date_string: str = "10 Apr 2025",
        lora_r: int = 0,
        lora_alpha: float = 16.0,
        lora_dropout: float = 0.0,
        lora_target: str = "all-linear",
        lora_save: str = "merged",
        collapse_guard: str = "warn",
        collapse_fraction: float = 0.5,
    ) -> None: ...
