"""The catalog's facts the guard needs (temporary: to be generated from catalog/)."""

# rule id -> (name, op_family, summary)
RULES = {
    "DA101": ("embedding-index-out-of-range", "index_select", "an index passed to index_select / nn.Embedding is outside the table"),
    "DA102": ("embedding-bag-index-out-of-range", "embedding_bag", "an id passed to embedding_bag / nn.EmbeddingBag is outside the table"),
    "DA103": ("embedding-bag-offsets-invalid", "embedding_bag", "embedding_bag offsets do not start at 0, decrease, or run past the input"),
    "DA111": ("advanced-index-out-of-range", "index", "an integer index tensor in x[idx] / index_put is outside the indexed dimension"),
    "DA112": ("take-put-index-out-of-range", "index", "a flat index passed to take / put / take_along_dim is outside the tensor"),
    "DA113": ("index-add-out-of-range", "index", "an index passed to index_add / index_reduce is outside the dimension"),
    "DA114": ("index-copy-out-of-range", "index", "an index passed to index_copy is outside the dimension"),
    "DA115": ("index-fill-out-of-range", "index", "an index passed to index_fill is outside the dimension"),
    "DA121": ("gather-scatter-index-out-of-range", "gather_scatter", "an index passed to gather / scatter is outside the dimension"),
    "DA122": ("one-hot-class-out-of-range", "one_hot", "a value passed to one_hot is negative or >= num_classes"),
    "DA123": ("bincount-negative-input", "bincount", "a value passed to bincount is negative"),
    "DA201": ("cross-entropy-target-out-of-range", "nll_loss", "a class target of cross_entropy / nll_loss is outside [0, C) and not ignore_index"),
    "DA202": ("spatial-cross-entropy-target-out-of-range", "nll_loss2d", "a class target of cross_entropy / nll_loss on [N, C, d1, ...] input is outside [0, C)"),
    "DA203": ("bce-input-out-of-range", "bce", "an input of binary_cross_entropy is outside [0, 1] or NaN"),
    "DA204": ("bce-target-out-of-range", "bce", "a target of binary_cross_entropy is outside [0, 1] or NaN"),
    "DA205": ("ctc-loss-invalid-target", "ctc_loss", "a CTC target is outside [0, C), equal to blank, or a length is invalid"),
    "DA206": ("multi-margin-target-out-of-range", "unknown", "a target of multi_margin_loss is outside [0, C)"),
    "DA303": ("bernoulli-probability-out-of-range", "unknown", "a bernoulli probability is outside [0, 1] or NaN"),
    "DA304": ("poisson-negative-rate", "unknown", "a poisson rate is negative or NaN"),
    "DA501": ("repeat-interleave-invalid-repeats", "unknown", "a repeat count passed to repeat_interleave is negative"),
    "DA301": ("multinomial-invalid-probabilities", "multinomial", "a multinomial probability is negative, NaN or inf"),
    "DA302": ("multinomial-zero-sum", "multinomial", "a multinomial row's probabilities sum to zero"),
}

# Vocabulary sizes of common base tokenizers: a table of exactly this size with
# ids a little past it means tokens were added without resizing the embeddings.
BASE_VOCABS = {
    30000, 30522, 21128, 28996, 32000, 32001, 32100, 32128, 49152, 50257, 50265,
    50280, 51200, 65024, 100277, 100352, 119547, 128000, 128256, 151643, 151936,
    250002, 250880, 256000, 262144,
}
