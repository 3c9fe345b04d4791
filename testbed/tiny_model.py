"""A tiny randomly initialised causal LM with a locally trained tokenizer, saved to a folder.

For tests and ``python -m bench.inference --tiny``: it is loaded through the same code path as
real models (``TransformersScorer(folder)``) and needs no download. The tokenizer is a byte-level
BPE trained on a small built-in Portuguese/English corpus, so it merges across newlines the way
real byte-level tokenizers do (e.g. "\\n\\n" is one token) and has both "A" and " A" letter
tokens. It prepends a BOS token like Llama tokenizers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

# torch and transformers are imported by the functions that use them, never at import time:
# collecting the test suite must not load them (5,000 modules) for the tests that never build
# a model.
if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

_CORPUS = """\
Here are some questions from a college entrance exam. Choose the correct answer to the best of
your ability, and output in the following format:
Answer: (Option)

Question: Which gas do plants absorb during photosynthesis?
Options:
(A) Oxygen
(B) Carbon dioxide
(C) Nitrogen
(D) Helium
(E) Hydrogen
Answer: (B)

Questão: Qual gás as plantas absorvem na fotossíntese?
Alternativas:
(A) Oxigênio
(B) Gás carbônico
(C) Nitrogênio
(D) Hélio
(E) Hidrogênio
Resposta: (B)

A seguir estão algumas questões de um exame de admissão ao ensino superior. Escolha a
alternativa correta da melhor forma possível e responda no seguinte formato:
Resposta: (Alternativa)
The answer is A. The answer is B. The answer is C. The answer is D. The answer is E.
A resposta é A. A resposta é B. A resposta é C. A resposta é D. A resposta é E.
"""


def build_tokenizer(vocab_size: int = 400) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on the built-in corpus (BOS "<s>", EOS "</s>")."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<pad>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    # Paragraphs end in a blank line, so "\n\n" is learnt as one token (as in real byte-level
    # BPEs) and a prompt's prefix tokenises differently alone than followed by the question.
    paragraphs = [p + "\n\n" for p in _CORPUS.split("\n\n")]
    tok.train_from_iterator(paragraphs * 20, trainer=trainer)
    bos = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )


def build_tiny_model(
    folder: str | Path,
    *,
    arch: Literal["llama", "gpt2"] = "llama",
    hidden: int = 32,
    layers: int = 2,
    seed: int = 0,
    init_scale: float = 0.3,
) -> Path:
    """Create and save a random tiny model + tokenizer in ``folder``; returns the folder.

    ``init_scale`` (the initializer range) is large so that next-token distributions are far
    from uniform and differences between scoring paths would show.
    """
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    folder = Path(folder)
    tokenizer = build_tokenizer()
    torch.manual_seed(seed)
    vocab = len(tokenizer)
    if arch == "llama":
        config = LlamaConfig(
            vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden,
            num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
            max_position_embeddings=8192, initializer_range=init_scale,
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=False,
        )
        model = LlamaForCausalLM(config)
    elif arch == "gpt2":
        config = GPT2Config(
            vocab_size=vocab, n_embd=hidden, n_layer=layers, n_head=4, n_positions=8192,
            initializer_range=init_scale, bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        )
        model = GPT2LMHeadModel(config)
    else:
        raise ValueError(f"unknown arch {arch!r}")
    model.eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
