"""A tiny randomly initialised Llama with a byte-level tokenizer trained on the kit's traces: the fixture that tests the
transformers backend and the chat-template bound on a real model in seconds, with no weights to fetch (a helper of the
tests, not part of the kit; `nbs/02a_transformers` and `nbs/01a_chat_template` use it too).

Tests of batching, padding, stop strings and token counts need a real transformers model but not a good one. This one
is a 2-layer Llama with hidden size 64 and random weights (seed 0), with a byte-level BPE tokenizer trained in code on
traces and a ChatML chat template. It builds in a few seconds into the kit's cache and generates in milliseconds; its
text is gibberish."""
from __future__ import annotations
import shutil, tempfile
from pathlib import Path
from l0kit.backends.hf import cache_dir

_CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
           "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

_PROGRAM = "def function(x, lst_y, cond_x):\n    lst_y.append(x)\n    if cond_x:\n        x = x + 2\n    lst_y.pop()\n    return\n"

def _trace(x: int) -> str:
    "The L0 trace of `_PROGRAM` on x, lst_y = [0..x % 5), cond_x = x odd, written out (tests/test_models.py checks it against the tracer)."
    lst = list(range(x % 5))
    show = lambda v: '[' + ','.join(map(str, v)) + ']'
    return '\n'.join([f"L2,lst_y:{show(lst + [x])}", 'L3,', *([f"L4,x:{x + 2}"] if x % 2 else []), f"L5,lst_y:{show(lst)}", 'L6,'])

def tiny_llama_dir() -> Path:
    "A tiny random Llama with a trained byte-level tokenizer, built once into the cache."
    dest = cache_dir() / 'tiny-llama-test-1'
    if (dest / 'config.json').is_file(): return dest
    import torch  # the models extra (the backend checks it is there with a clear message)
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    corpus = [_trace(x) for x in range(40)] + [_PROGRAM, "Execute the program below and write its execution trace. Input: Output: Program:"]
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer, tk.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>']
    tk.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=400, special_tokens=specials,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, eos_token='<|im_end|>', pad_token='<|endoftext|>', bos_token='<|im_start|>')
    tok.chat_template = _CHATML
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=tk.get_vocab_size(), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=4096,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    model = LlamaForCausalLM(cfg)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + '.tmp', dir=dest.parent))
    model.save_pretrained(tmp); tok.save_pretrained(tmp)
    try: tmp.rename(dest)
    except OSError: shutil.rmtree(tmp, ignore_errors=True)
    return dest
