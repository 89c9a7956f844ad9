"""The catalog's rules as the guard needs them: id, name, op family,
summary, fixes, and each cause's text and fixes; the base vocabulary
sizes of common tokenizers; and the shares causes are given.

It is over 500 lines because it is data, one entry per rule and per
fact-decided cause, not code to read.

Generated from catalog/ by `make docs`
(`devassert rule --write-python python/devassert/_findings/rules.py`); do not edit.
"""

# rule id -> {name, op_family, summary, fixes, values, causes: {cause id -> {why, fixes}}}
RULES = {
    "DA001": {
        "name": "device-assert-no-kernel-line",
        "op_family": "unknown",
        "summary": "the log says `device-side assert triggered` but holds no kernel assertion line, so the failing op is not named",
        "fixes": ["rerun under `devassert run -- python train.py ...` (keeps stdout, where CUDA prints the assertion lines, and installs the guard; `--blocking` adds CUDA_LAUNCH_BLOCKING=1 for an op the guard does not check)", "or rerun with `CUDA_LAUNCH_BLOCKING=1` and capture both stdout and stderr (`python train.py > log.txt 2>&1`)", "or run the failing batch on CPU: the same op raises a readable IndexError / RuntimeError with the value"],
        "values": None,
        "causes": {
            "label_ge_num_classes": {"why": "a class label >= the number of classes reached cross_entropy / nll_loss / one_hot", "fixes": ["check `target.max() < logits.size(1)`; labels must be 0..C-1"]},
            "seq_len_gt_max_positions": {"why": "a sequence longer than max_position_embeddings reached the position embedding", "fixes": ["truncate inputs to `model.config.max_position_embeddings` less the position offset (RoBERTa-style: `padding_idx + 1`, so 514 → 512) (tokenizer `truncation=True, max_length=...`)"]},
            "token_id_ge_vocab": {"why": "a token id >= the embedding size reached nn.Embedding", "fixes": ["check `input_ids.max() < model.get_input_embeddings().num_embeddings`"]},
            "ignore_label_not_ignored": {"why": "a label map with 255 / -1 borders reached a loss or F.one_hot", "fixes": ["map void labels to ignore_index (e.g. `mask[mask == 255] = -100`) or pass `ignore_index=255`"]},
            "bce_on_logits": {"why": "raw logits (outside [0, 1]) were given to BCELoss / F.binary_cross_entropy", "fixes": ["use `BCEWithLogitsLoss` / `F.binary_cross_entropy_with_logits` on logits"]},
            "nan_inf_probs": {"why": "NaN / inf / negative probabilities reached torch.multinomial", "fixes": ["check logits for NaN/inf before sampling; avoid temperature 0"]},
            "off_by_one": {"why": "ids or class labels are counted from 1: the largest equals the table size or the number of classes", "fixes": ["count ids and labels from 0 (subtract 1 from 1-based ones), or size the table `max_id + 1`"]},
            "unknown": {"why": "none of the above: the log does not say which kernel failed, so the causes above are guesses from the traceback or, where it says nothing, from how common each is", "fixes": ["rerun under `devassert run -- python train.py ...` to capture the assertion line and stop at the real op"]},
        },
    },
    "DA002": {
        "name": "rocm-kernel-abort",
        "op_family": "unknown",
        "summary": "on a ROCm build a kernel assertion aborted the kernel without printing it: `HIP error: unspecified launch failure`",
        "fixes": ["rerun under `devassert run -- python train.py ...` (installs the guard and sets AMD_SERIALIZE_KERNEL=3)", "or rerun with `AMD_SERIALIZE_KERNEL=3` (the ROCm CUDA_LAUNCH_BLOCKING) so the traceback stops at the failing op", "or run the failing batch on CPU to get the readable error"],
        "values": None,
        "causes": {
            "unknown": {"why": "the log does not say which kernel failed; the evidence below only guesses from the traceback", "fixes": ["rerun under `devassert run -- python train.py ...` to capture the assertion line and stop at the real op"]},
            "ignore_label_not_ignored": {"why": "a label map with 255 / -1 borders reached a loss or F.one_hot", "fixes": ["map void labels to ignore_index (e.g. `mask[mask == 255] = -100`) or pass `ignore_index=255`"]},
            "label_ge_num_classes": {"why": "a class label >= the number of classes reached cross_entropy / nll_loss / one_hot", "fixes": ["check `target.max() < logits.size(1)`; labels must be 0..C-1"]},
            "token_id_ge_vocab": {"why": "a token id >= the embedding size reached nn.Embedding", "fixes": ["check `input_ids.max() < model.get_input_embeddings().num_embeddings`"]},
            "seq_len_gt_max_positions": {"why": "a sequence longer than max_position_embeddings reached the position embedding", "fixes": ["truncate inputs to `model.config.max_position_embeddings` less the position offset (RoBERTa-style: `padding_idx + 1`, so 514 → 512) (tokenizer `truncation=True, max_length=...`)"]},
            "bce_on_logits": {"why": "raw logits (outside [0, 1]) were given to BCELoss / F.binary_cross_entropy", "fixes": ["use `BCEWithLogitsLoss` / `F.binary_cross_entropy_with_logits` on logits"]},
            "nan_inf_probs": {"why": "NaN / inf / negative probabilities reached torch.multinomial", "fixes": ["check logits for NaN/inf before sampling; avoid temperature 0"]},
        },
    },
    "DA003": {
        "name": "illegal-memory-access",
        "op_family": "unknown",
        "summary": "a kernel read or wrote outside its memory (`an illegal memory access was encountered`) with no assertion: often an out-of-range index in an op that does not check it",
        "fixes": ["rerun under `devassert run --blocking -- python train.py ...` (CUDA_LAUNCH_BLOCKING=1 plus the guard)", "run with `compute-sanitizer --tool memcheck python train.py` to name the kernel and the bad address", "run the failing batch on CPU to get the readable error"],
        "values": None,
        "causes": {
            "unknown": {"why": "an out-of-bounds access in a kernel without a bounds check (custom / fused op), a race, use-after-free or a kernel bug", "fixes": ["run `compute-sanitizer --tool memcheck` on a small repro", "update the extension / library that owns the kernel"]},
            "index_ge_dim_size": {"why": "an index past the end of the tensor reached an op that does not check it", "fixes": ["check index tensors against the size of the indexed dim before the op"]},
            "token_id_ge_vocab": {"why": "an out-of-range id reached nn.Embedding with max_norm (its renorm step has no check before 2.13) or EmbeddingBag (1.12-2.0 have no check)", "fixes": ["check ids against num_embeddings"]},
            "label_ge_num_classes": {"why": "CTC targets >= the number of classes (or = blank) are not validated and read out of bounds", "fixes": ["check `targets.max() < log_probs.size(-1)` and that targets never equal `blank`"]},
            "index_overflow": {"why": "a tensor with more than 2**31 elements overflowed 32-bit index arithmetic in a kernel", "fixes": ["split the batch; report the op and shapes to PyTorch"]},
        },
    },
    "DA004": {
        "name": "unrecognised-device-assert",
        "op_family": "unknown",
        "summary": "a device assertion from PyTorch's own sources that no catalog rule knows (a new or rare kernel)",
        "fixes": ["read the assertion text: it is the C++ condition that failed (e.g. `idx < size`), and the file/function name the op", "rerun with `CUDA_LAUNCH_BLOCKING=1` (or `devassert run --blocking -- ...`) so the traceback shows the op", "run the failing batch on CPU: most ops raise a readable error there"],
        "values": None,
        "causes": {
            "unknown": {"why": "no rule describes this assertion yet", "fixes": ["open an issue for devassert with the assertion line and the PyTorch version"]},
            "index_ge_dim_size": {"why": "the assertion compares an index with a size: an index past the end of the indexed dim", "fixes": ["check the index tensor of the op against the size of the indexed dim"]},
            "negative_index": {"why": "the assertion requires a non-negative value", "fixes": ["check the index / count argument for negative values"]},
            "nan_in_input": {"why": "the assertion rejects NaN / inf values", "fixes": ["check the input for NaN / inf (`torch.isfinite(x).all()`)"]},
        },
    },
    "DA005": {
        "name": "traceback-without-error-line",
        "op_family": "unknown",
        "summary": "the log ends inside a Python traceback, before its error line, so the error is not known",
        "fixes": ["paste or capture the whole output: the error is the traceback's last line (`RuntimeError: CUDA error: device-side assert triggered`, `IndexError: …`), and the kernel's assertion lines go to stdout", "rerun under `devassert run -- python train.py ...` (keeps both streams and installs the guard)"],
        "values": None,
        "causes": {
            "unknown": {"why": "the error line is missing, so the causes are guesses from the traceback's frames", "fixes": []},
        },
    },
    "DA101": {
        "name": "embedding-index-out-of-range",
        "op_family": "index_select",
        "summary": "an index passed to index_select / nn.Embedding is >= the table size (or negative)",
        "fixes": ["devassert scan DATA --vocab N (find the out-of-range ids in the dataset)", "devassert check MODEL_DIR (tokenizer vs config vs embedding shapes)", "model.resize_token_embeddings(len(tokenizer)) after adding tokens"],
        "values": "ids",
        "causes": {
            "seq_len_gt_max_positions": {"why": "a sequence is longer than max_position_embeddings, so position ids run past the position table", "fixes": ["truncate: tokenizer(..., truncation=True, max_length=N), N = model.config.max_position_embeddings less the position offset (RoBERTa-style models start at padding_idx + 1: 514 rows hold 512 tokens)"]},
            "token_id_ge_vocab": {"why": "token ids at or past num_embeddings reach the token embedding (tokenizer and checkpoint disagree, ids from another tokenizer, generated ids >= the embedding size)", "fixes": ["check `input_ids.max() < model.get_input_embeddings().num_embeddings`", "use the tokenizer that belongs to the checkpoint"]},
            "added_tokens_no_resize": {"why": "tokens were added to the tokenizer but the embedding matrix was not resized, so the new ids are >= num_embeddings", "fixes": ["model.resize_token_embeddings(len(tokenizer))"]},
            "pad_token_id_out_of_range": {"why": "pad_token_id (or a padding_idx) is >= the vocab size, e.g. a pad token added without resizing, or pad_token_id = -1 in the config", "fixes": ["set `tokenizer.pad_token = tokenizer.eos_token` or resize embeddings after adding [PAD]"]},
            "index_ge_dim_size": {"why": "a plain index_select / lookup index >= the size of the selected dim", "fixes": ["check `index.max() < x.size(dim)`"]},
            "negative_index": {"why": "negative ids (-1 or -100 padding) are compared as unsigned and fail the same check", "fixes": ["replace -100 / -1 padding by pad_token_id in input_ids (labels may keep -100, inputs may not)"]},
            "type_vocab_size": {"why": "token_type_ids >= config.type_vocab_size (e.g. segment ids 0..2 with type_vocab_size 2, or RoBERTa with type_vocab_size 1)", "fixes": ["pass token_type_ids only in [0, type_vocab_size), or drop them for RoBERTa-style models"]},
            "off_by_one": {"why": "the ids are counted from 1: the largest equals the table size, or, in R's torch (whose indices start at 1), a 0 is no row", "fixes": ["count ids from 0 (subtract 1 from ids that start at 1), or size the table `max_id + 1`", "in R's torch, pass ids from 1 to num_embeddings: 0 is no row"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA102": {
        "name": "embedding-bag-index-out-of-range",
        "op_family": "embedding_bag",
        "summary": "an id passed to nn.EmbeddingBag / F.embedding_bag is >= num_embeddings (or negative)",
        "fixes": ["devassert scan DATA --vocab N", "hash / clamp categorical ids into the table size (`ids % num_embeddings`) or grow the table"],
        "values": "ids",
        "causes": {
            "index_ge_dim_size": {"why": "categorical / hashed feature ids >= the table size (vocabulary built on other data, unseen categories, hash buckets larger than num_embeddings)", "fixes": ["build the table from the full id range, or map unseen ids to an OOV row"]},
            "negative_index": {"why": "negative ids (-1 for missing values) reach the table", "fixes": ["map missing values to a dedicated row (or padding_idx) instead of -1"]},
            "token_id_ge_vocab": {"why": "token ids from a larger vocabulary (bag-of-words models)", "fixes": ["check `ids.max() < num_embeddings`"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA103": {
        "name": "embedding-bag-offsets-invalid",
        "op_family": "embedding_bag",
        "summary": "the offsets passed to nn.EmbeddingBag / F.embedding_bag are not non-decreasing (a bag ends before it begins) or inconsistent with input",
        "fixes": ["build offsets as `torch.cumsum(lengths, 0) - lengths` (exclusive cumsum) from non-negative lengths", "keep offsets and input from the same batch (after shuffling / truncation)"],
        "values": "index",
        "causes": {
            "unknown": {"why": "offsets decreasing or not starting at 0: built from unsorted lengths, from negative lengths, or taken from another batch than input", "fixes": ["assert `(offsets[1:] >= offsets[:-1]).all()` and `offsets[0] == 0`"]},
            "index_overflow": {"why": "offsets computed in a narrow dtype (int32 / int16 cumsum) wrapped around on a large batch", "fixes": ["compute offsets in int64"]},
            "negative_index": {"why": "a negative length made the cumulative offsets decrease", "fixes": ["check `lengths.min() >= 0`"]},
        },
    },
    "DA111": {
        "name": "advanced-index-out-of-range",
        "op_family": "index",
        "summary": "an integer index tensor used in `x[idx]`, `x[idx] = v` or index_put_ is outside [-size, size) of the indexed dim",
        "fixes": ["check `idx.min() >= -x.size(d)` and `idx.max() < x.size(d)` for each indexed dim d"],
        "values": "index",
        "causes": {
            "index_ge_dim_size": {"why": "an index >= the size of the indexed dim: off by one, an index computed for another tensor (boxes, anchors, top-k of a longer list), `logits[range(B), labels]` with a label >= C", "fixes": ["check `idx.max() < x.size(d)`"]},
            "negative_index": {"why": "an index < -size (e.g. -1 markers on an empty dim, or -100 padding)", "fixes": ["mask -1 / -100 markers before indexing"]},
            "token_id_ge_vocab": {"why": "during generation / beam search a token id >= the vocab / embedding size is used to index scores or embeddings (tokenizer vocab larger than the checkpoint)", "fixes": ["check `len(tokenizer) <= model.get_input_embeddings().num_embeddings`; use the checkpoint's tokenizer"]},
            "label_ge_num_classes": {"why": "class labels used as an index (`logits[range(B), labels]`, one-hot tables) are >= the number of classes", "fixes": ["check `labels.max() < num_classes`"]},
            "seq_len_gt_max_positions": {"why": "position ids past a position table or rotary cache indexed with them (`pe[positions]`, `cos[position_ids]`): a sequence longer than the model's maximum", "fixes": ["truncate inputs (and labels fed to a decoder) to the model's maximum positions (`model.config.max_position_embeddings`; tokenizer `truncation=True, max_length=...`)"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA112": {
        "name": "take-put-index-out-of-range",
        "op_family": "index",
        "summary": "a flat index passed to torch.take / Tensor.put_ is outside [-numel, numel)",
        "fixes": ["check `index.max() < x.numel()` and `index.min() >= -x.numel()`", "flat index = row * x.stride(0) + col: check the strides used"],
        "values": "index",
        "causes": {
            "index_ge_dim_size": {"why": "an index >= the size of the flattened dim (off by one, an index computed for another tensor, a stale cached index)", "fixes": ["check `index.max() < x.size(dim)` before the op"]},
            "negative_index": {"why": "a negative index (e.g. -1 padding or \"not found\" markers from torch.where / searchsorted)", "fixes": ["mask or replace -1 markers before indexing"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA113": {
        "name": "index-add-out-of-range",
        "op_family": "index",
        "summary": "an index passed to index_add_ / index_reduce_ (or the backward of index_select) is >= the size of self along dim (or negative)",
        "fixes": ["check `index.max() < self.size(dim)` and `index.min() >= 0`"],
        "values": "index",
        "causes": {
            "index_ge_dim_size": {"why": "an index >= the size of the destination dim (off by one, an index computed for another tensor, a stale cached index)", "fixes": ["check `index.max() < x.size(dim)` before the op"]},
            "negative_index": {"why": "a negative index (e.g. -1 padding or \"not found\" markers from torch.where / searchsorted)", "fixes": ["mask or replace -1 markers before indexing"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA114": {
        "name": "index-copy-out-of-range",
        "op_family": "index",
        "summary": "an index passed to index_copy_ is outside [0, self.size(dim))",
        "fixes": ["check `index.min() >= 0` and `index.max() < self.size(dim)`"],
        "values": "index",
        "causes": {
            "index_ge_dim_size": {"why": "an index >= the size of the destination dim (off by one, an index computed for another tensor, a stale cached index)", "fixes": ["check `index.max() < x.size(dim)` before the op"]},
            "negative_index": {"why": "a negative index (e.g. -1 padding or \"not found\" markers from torch.where / searchsorted)", "fixes": ["mask or replace -1 markers before indexing"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA115": {
        "name": "index-fill-out-of-range",
        "op_family": "index",
        "summary": "an index passed to index_fill_ is outside [-size, size) of self along dim",
        "fixes": ["check `index.min() >= -self.size(dim)` and `index.max() < self.size(dim)`"],
        "values": "index",
        "causes": {
            "index_ge_dim_size": {"why": "an index >= the size of the filled dim (off by one, an index computed for another tensor, a stale cached index)", "fixes": ["check `index.max() < x.size(dim)` before the op"]},
            "negative_index": {"why": "a negative index (e.g. -1 padding or \"not found\" markers from torch.where / searchsorted)", "fixes": ["mask or replace -1 markers before indexing"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA121": {
        "name": "gather-scatter-index-out-of-range",
        "op_family": "gather_scatter",
        "summary": "an index passed to gather / scatter / scatter_add / scatter_reduce (or F.one_hot on CUDA) is outside [0, size) of the indexed dim",
        "fixes": ["check `index.min() >= 0` and `index.max() < x.size(dim)`"],
        "values": "index",
        "causes": {
            "index_ge_dim_size": {"why": "a gather / scatter index >= the size of the indexed dim (ids for a longer sequence, routing ids >= number of experts / tokens)", "fixes": ["check `index.max() < x.size(dim)`"]},
            "label_ge_num_classes": {"why": "class labels >= the number of classes reach F.one_hot (explicit num_classes) or a log-prob gather `log_softmax(-1).gather(-1, labels)`", "fixes": ["check `labels.max() < num_classes`; labels must be 0..C-1"]},
            "ignore_label_not_ignored": {"why": "void / padding labels (255, -1, -100) reach one_hot or a label gather", "fixes": ["remap void labels before one_hot (`mask = (mask > 127).long()` for 0/255 masks) or drop ignored positions before the gather"]},
            "negative_index": {"why": "a negative index (-1 / -100 padding); gather and scatter do not wrap negative indices", "fixes": ["mask out -1 / -100 before gather / scatter"]},
            "token_id_ge_vocab": {"why": "a token id >= the vocab size: on 2.8+ nn.Embedding lookups of more than 16 ids go through gather, and log-probabilities are gathered by token id (`logits.log_softmax(-1).gather(-1, ids)`)", "fixes": ["check `input_ids.max() < model.get_input_embeddings().num_embeddings`"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA122": {
        "name": "one-hot-class-out-of-range",
        "op_family": "one_hot",
        "summary": "a value passed to F.one_hot is >= num_classes or negative",
        "fixes": ["check `labels.min() >= 0` and `labels.max() < num_classes`", "binary masks stored as 0/255: `mask = (mask > 0).long()`"],
        "values": "labels",
        "causes": {
            "label_ge_num_classes": {"why": "a class value >= num_classes: labels 1..C instead of 0..C-1, num_classes one too small, a mask with more classes than the model", "fixes": ["pass num_classes = max label + 1, or remap labels to 0..C-1"]},
            "ignore_label_not_ignored": {"why": "void labels (255 borders, masks saved as 0/255) reach one_hot", "fixes": ["remap 255 before one_hot (`mask[mask == 255] = 0` or a separate ignore mask)"]},
            "negative_label": {"why": "a negative class value (-1 / -100 padding)", "fixes": ["mask padding positions before one_hot"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA123": {
        "name": "bincount-negative-input",
        "op_family": "bincount",
        "summary": "torch.bincount got a negative value or a non-1-D / non-integral input (a host-side check, even on CUDA)",
        "fixes": ["check `x.dim() == 1 and x.min() >= 0`; shift or drop negative values (e.g. -1 padding) before bincount"],
        "values": None,
        "causes": {
            "negative_index": {"why": "a negative value (-1 / -100 padding or ignore labels) in the input", "fixes": ["drop ignored values first: `torch.bincount(x[x >= 0], minlength=C)`"]},
            "ignore_label_not_ignored": {"why": "label histograms (class weights, confusion matrices) computed over targets that still contain ignore_index -100 / -1", "fixes": ["filter `target != ignore_index` before bincount"]},
            "unknown": {"why": "not established from the log (also raised for a 2-D or float input)", "fixes": []},
        },
    },
    "DA201": {
        "name": "cross-entropy-target-out-of-range",
        "op_family": "nll_loss",
        "summary": "a class target passed to cross_entropy / nll_loss is >= the number of classes or negative, and not ignore_index",
        "fixes": ["check `target[target != ignore_index].max() < logits.size(1)`", "devassert scan LABELS --classes C (finds every label outside [0, C); -100 is ignored, as the loss does)"],
        "values": "labels",
        "causes": {
            "label_ge_num_classes": {"why": "a label >= the number of model outputs: labels 1..C instead of 0..C-1, num_classes / num_labels one too small (e.g. computed as entries - 1), more classes in the data than in the head", "fixes": ["set num_classes / num_labels = max label + 1 (HF: `num_labels=len(label2id)`)", "remap labels to 0..C-1"]},
            "ignore_label_not_ignored": {"why": "padding / unlabelled positions carry -1 or 255 instead of the loss's ignore_index (-100 by default), e.g. `masked_lm_labels` filled with -1", "fixes": ["use -100 for ignored positions, or pass `ignore_index=-1` / `ignore_index=255`"]},
            "negative_label": {"why": "a negative label other than ignore_index (e.g. -2, or -100 with ignore_index changed)", "fixes": ["keep ignore_index equal to the padding value"]},
            "token_id_ge_vocab": {"why": "LM labels (token ids) >= the LM head size: tokenizer bigger than the checkpoint", "fixes": ["check `labels.max() < model.config.vocab_size`"]},
            "added_tokens_no_resize": {"why": "tokens were added to the tokenizer but the LM head was not resized, so labels of new tokens are >= vocab_size", "fixes": ["model.resize_token_embeddings(len(tokenizer))"]},
            "pad_token_id_out_of_range": {"why": "labels are padded with a pad_token_id >= vocab_size (pad token added without resizing)", "fixes": ["pad labels with -100, not with pad_token_id"]},
            "unknown": {"why": "not established from the log (e.g. targets read before they were written: stream / CUDA-graph races)", "fixes": []},
        },
    },
    "DA202": {
        "name": "spatial-cross-entropy-target-out-of-range",
        "op_family": "nll_loss2d",
        "summary": "a pixel / position target of cross_entropy / nll_loss on [N, C, H, W] (or [N, C, L]) input is >= C or negative, and not ignore_index",
        "fixes": ["check `torch.unique(target)` against C = logits.size(1)", "pass `ignore_index=255` for VOC / Cityscapes-style masks", "devassert scan MASKS_DIR --classes C --ignore 255 (every mask: PNG, npy, ...; 255 counts as the void label, which the loss must then ignore)"],
        "values": "labels",
        "causes": {
            "label_ge_num_classes": {"why": "the mask has more classes than the model outputs (n_classes too small, background not counted, class ids 1..C)", "fixes": ["set n_classes = number of distinct labels including background (max label + 1)"]},
            "ignore_label_not_ignored": {"why": "255 void / border pixels (VOC, Cityscapes, ADE20K) or masks saved as 0/255 reach the loss while ignore_index is left at -100", "fixes": ["pass `ignore_index=255`, or convert binary 0/255 masks with `(mask > 127).long()`"]},
            "negative_label": {"why": "negative pixel labels (-1 for unlabelled) with ignore_index -100", "fixes": ["pass `ignore_index=-1` or remap -1 to -100"]},
            "unknown": {"why": "not established from the log (e.g. interpolated masks producing in-between values: resize masks with nearest neighbour)", "fixes": []},
        },
    },
    "DA203": {
        "name": "bce-input-out-of-range",
        "op_family": "bce",
        "summary": "the input (prediction) of binary_cross_entropy / BCELoss is outside [0, 1] or NaN",
        "fixes": ["use `nn.BCEWithLogitsLoss` / `F.binary_cross_entropy_with_logits` on raw logits (numerically stable, no range check needed)", "if a sigmoid is already applied: find where NaN appears (`torch.autograd.set_detect_anomaly(True)`, lower LR, fp32 loss)"],
        "values": None,
        "causes": {
            "bce_on_logits": {"why": "raw logits (no sigmoid) are passed to BCELoss / F.binary_cross_entropy", "fixes": ["switch to `BCEWithLogitsLoss` and drop the sigmoid, or apply `torch.sigmoid` before BCELoss"]},
            "nan_in_input": {"why": "the probabilities became NaN (divergence, fp16 overflow, log of 0 upstream) or a sigmoid output rounded outside [0, 1] in half precision", "fixes": ["compute the loss in fp32 under autocast, lower the learning rate, clip gradients; use BCEWithLogitsLoss"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA204": {
        "name": "bce-target-out-of-range",
        "op_family": "bce",
        "summary": "the target of binary_cross_entropy / BCELoss is outside [0, 1] (2.1+ checks it on the device)",
        "fixes": ["normalise targets to [0, 1] (`mask / 255.`, `(mask > 0).float()`)"],
        "values": None,
        "causes": {
            "bce_target_range": {"why": "targets are not probabilities: masks / edge maps in 0..255, class ids instead of 0/1, soft labels scaled wrongly", "fixes": ["divide image-derived targets by 255 or binarise them (`(t > 0).float()`)"]},
            "nan_in_input": {"why": "the targets contain NaN (e.g. a division by zero when normalising)", "fixes": ["check `target.isnan().any()`"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA205": {
        "name": "ctc-loss-invalid-target",
        "op_family": "ctc_loss",
        "summary": "ctc_loss got targets >= the number of classes, equal to blank or negative (never checked: wrong loss or illegal memory access), or lengths longer than the inputs",
        "fixes": ["check `targets.max() < log_probs.size(-1)` and `(targets != blank).all()` for the valid part of each target", "use `zero_infinity=True` only after the targets are valid"],
        "values": None,
        "causes": {
            "label_ge_num_classes": {"why": "target labels >= C: the label vocabulary has more symbols than the output layer (blank not counted)", "fixes": ["output layer size = number of symbols + 1 (blank)"]},
            "ignore_label_not_ignored": {"why": "targets padded with the blank id (or with -1) are treated as labels: only the first target_lengths entries may be used", "fixes": ["pass correct target_lengths; never use the blank index as a label or pad value inside the lengths"]},
            "negative_label": {"why": "negative target values (-1 / -100 padding inside target_lengths)", "fixes": ["compute target_lengths from the unpadded targets"]},
            "unknown": {"why": "input_lengths > T or target_lengths > S (host errors above), or the lengths do not match the data", "fixes": ["check `input_lengths.max() <= log_probs.size(0)`"]},
        },
    },
    "DA206": {
        "name": "multi-margin-target-out-of-range",
        "op_family": "unknown",
        "summary": "a target of multi_margin_loss / MultiMarginLoss is >= the number of classes or negative",
        "fixes": ["check `target.min() >= 0` and `target.max() < input.size(1)`"],
        "values": "labels",
        "causes": {
            "label_ge_num_classes": {"why": "a label >= the number of classes (labels 1..C, head too small)", "fixes": ["remap labels to 0..C-1"]},
            "ignore_label_not_ignored": {"why": "padding labels (-100 / -1 / 255): MultiMarginLoss has no ignore_index", "fixes": ["drop padded positions before the loss"]},
            "negative_label": {"why": "negative labels", "fixes": ["check `target.min() >= 0`"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA301": {
        "name": "multinomial-invalid-probabilities",
        "op_family": "multinomial",
        "summary": "the probabilities passed to torch.multinomial contain NaN, inf or a negative value",
        "fixes": ["check logits before softmax: `torch.isfinite(logits).all()`", "compute the softmax in fp32; never use temperature 0 (use greedy decoding instead)"],
        "values": None,
        "causes": {
            "nan_inf_probs": {"why": "the logits became NaN / inf before the softmax (fp16 overflow, all -inf after masking, temperature 0, a diverged model), so the probabilities are NaN", "fixes": ["check `torch.isfinite(logits).all()` before sampling", "keep at least one token unmasked; temperature > 0; softmax in fp32"]},
            "nan_in_input": {"why": "the weights passed directly to multinomial (not a softmax) contain NaN / negative values, e.g. sampling weights computed from a loss or a count that went negative", "fixes": ["check the weight tensor: `(w >= 0).all() and torch.isfinite(w).all()`"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA302": {
        "name": "multinomial-zero-sum",
        "op_family": "multinomial",
        "summary": "a row of the probabilities passed to torch.multinomial sums to 0 (nothing can be sampled)",
        "fixes": ["keep at least one non-zero entry per row (e.g. never filter out the top token in top-p / top-k)"],
        "values": None,
        "causes": {
            "nan_inf_probs": {"why": "the sampler filtered out every token (top-p / top-k / min-p / bad-words / repetition penalty), or the softmax underflowed to all zeros in low precision", "fixes": ["make the filters keep at least one token (`min_tokens_to_keep=1`)", "compute the softmax in fp32"]},
            "nan_in_input": {"why": "the weights computed by user code are all zero for a row (e.g. sampling weights, importance weights, an empty mask)", "fixes": ["guard against empty rows: `w.sum(-1) > 0`"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA303": {
        "name": "bernoulli-probability-out-of-range",
        "op_family": "unknown",
        "summary": "a probability tensor passed to torch.bernoulli / bernoulli_ is outside [0, 1] or NaN",
        "fixes": ["pass probabilities, not logits: `torch.bernoulli(torch.sigmoid(logits))`", "clamp: `p.clamp(0, 1)` after fixing NaN"],
        "values": None,
        "causes": {
            "nan_in_input": {"why": "the probabilities are NaN (a diverged model / policy) or slightly outside [0, 1] after arithmetic in low precision", "fixes": ["compute p in fp32 and clamp to [0, 1]; find the NaN source"]},
            "unknown": {"why": "p is not a probability: logits or unnormalised scores passed as p (dropout-style masks with keep-prob > 1)", "fixes": ["apply a sigmoid to logits, or use `torch.distributions.Bernoulli(logits=...)`"]},
        },
    },
    "DA304": {
        "name": "poisson-negative-rate",
        "op_family": "unknown",
        "summary": "a rate passed to torch.poisson is negative or NaN",
        "fixes": ["make rates non-negative (`F.softplus(x)` or `x.exp()` for a predicted rate)"],
        "values": None,
        "causes": {
            "nan_in_input": {"why": "the rates are NaN (divergence) or a raw network output that can be negative", "fixes": ["parametrise the rate with softplus / exp; find the NaN source"]},
            "unknown": {"why": "rates computed by subtraction (noise models, counts minus background) went below 0", "fixes": ["clamp at 0"]},
        },
    },
    "DA401": {
        "name": "inductor-index-out-of-bounds",
        "op_family": "inductor",
        "summary": "a kernel generated by torch.compile (Inductor / Triton) checked an indirect index and found it out of bounds: `index out of bounds: 0 <= tmpN < size`",
        "fixes": ["rerun eagerly (`TORCH_COMPILE_DISABLE=1`) under `devassert run -- ...` to get the op and the values", "if the bound is the vocab size: check token ids against the embedding (DA101)"],
        "values": "index",
        "causes": {
            "token_id_ge_vocab": {"why": "the bound is the vocabulary size: a token id >= vocab_size reached the (compiled) embedding or LM-head gather", "fixes": ["check `input_ids.max() < vocab_size`; compare tokenizer and checkpoint (devassert check MODEL_DIR)"]},
            "index_ge_dim_size": {"why": "an index >= the size of the indexed dim of a compiled gather / scatter / advanced index", "fixes": ["run eagerly to see which op (the eager op has its own rule)"]},
            "label_ge_num_classes": {"why": "a loss target >= the number of classes in a compiled loss (small numeric bound)", "fixes": ["check `target.max() < num_classes`"]},
            "seq_len_gt_max_positions": {"why": "positions past max_position_embeddings (dynamic-shape bound `ks0`, or the position-table size)", "fixes": ["truncate inputs to max_position_embeddings"]},
            "negative_index": {"why": "a negative index that the lowering did not wrap (lower-bound-only assert `0 <= tmpN`)", "fixes": ["check the index for -1 / -100 markers"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA402": {
        "name": "inductor-device-assert",
        "op_family": "inductor",
        "summary": "a Triton kernel (generated by Inductor or written by the user) failed a device assert other than an index bound: NaN checks, injected test asserts, user `tl.device_assert`",
        "fixes": ["rerun eagerly (`TORCH_COMPILE_DISABLE=1`) to find the op", "with nan_asserts: find the first NaN (`torch.autograd.set_detect_anomaly(True)`)"],
        "values": None,
        "causes": {
            "nan_in_input": {"why": "Inductor nan_asserts: a NaN / inf value appeared in a compiled kernel", "fixes": ["find the first NaN eagerly: `torch.autograd.set_detect_anomaly(True)`, fp32, lower LR"]},
            "unknown": {"why": "an assertion of a user Triton kernel, or Inductor's own test hook (`injected assert fail`)", "fixes": ["read the message; for `injected assert fail` check torch._inductor test / debug config"]},
        },
    },
    "DA403": {
        "name": "custom-kernel-assert",
        "op_family": "custom_kernel",
        "summary": "a device assertion from a file outside PyTorch's sources: a user CUDA extension or a third-party library kernel",
        "fixes": ["read the assertion and the extension's source at the printed file:line", "rebuild the extension for the installed torch / CUDA version", "report it to the extension's authors with the line"],
        "values": None,
        "causes": {
            "unknown": {"why": "the extension's own precondition failed; what it means depends on the extension", "fixes": ["read the assertion and the extension's source at the printed file:line"]},
            "index_ge_dim_size": {"why": "the assertion bounds an index (ROI / point / box / token index past the tensor)", "fixes": ["check the index-like inputs of the extension op"]},
            "nan_in_input": {"why": "the assertion tests for NaN / inf", "fixes": ["check inputs with `torch.isfinite`"]},
        },
    },
    "DA501": {
        "name": "repeat-interleave-invalid-repeats",
        "op_family": "unknown",
        "summary": "torch.repeat_interleave got a negative repeat count, or an output_size that differs from repeats.sum()",
        "fixes": ["check `repeats.min() >= 0`", "pass `output_size=int(repeats.sum())` or omit it"],
        "values": None,
        "causes": {
            "unknown": {"why": "output_size passed to repeat_interleave does not equal repeats.sum() (a stale / precomputed length, e.g. in MoE or packed-sequence code)", "fixes": ["compute output_size from the same repeats tensor"]},
            "negative_index": {"why": "a negative repeat count (lengths computed by subtraction, -1 markers)", "fixes": ["clamp or fix the counts: `repeats.clamp(min=0)`"]},
        },
    },
    "DA502": {
        "name": "segment-reduce-negative-length",
        "op_family": "unknown",
        "summary": "torch.segment_reduce got a negative segment length",
        "fixes": ["check `lengths.min() >= 0` and `lengths.sum() == data.size(axis)`"],
        "values": None,
        "causes": {
            "negative_index": {"why": "a negative length (offsets differenced in the wrong order, -1 markers)", "fixes": ["compute lengths as `offsets[1:] - offsets[:-1]` from sorted offsets"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA503": {
        "name": "max-unpool-index-out-of-range",
        "op_family": "unknown",
        "summary": "an index passed to max_unpool2d / max_unpool3d is outside the output plane",
        "fixes": ["use the indices returned by the matching max_pool (`return_indices=True`) on the same input size", "pass the original `output_size` to MaxUnpool"],
        "values": "index",
        "causes": {
            "index_ge_dim_size": {"why": "indices from a max_pool on a different input size (odd sizes, missing output_size) or from another layer", "fixes": ["pass `output_size=x.shape[-2:]` and pair each unpool with its own pool"]},
            "unknown": {"why": "not established from the log", "fixes": []},
        },
    },
    "DA504": {
        "name": "masked-scatter-size-mismatch",
        "op_family": "unknown",
        "summary": "masked_scatter_ got fewer source elements than True entries in the mask: typically more image placeholder tokens in input_ids than image features",
        "fixes": ["make the number of `<image>` placeholder tokens equal the number of image features (use the model's own processor)", "do not truncate prompts through the image tokens (raise max_length or truncate text only)"],
        "values": None,
        "causes": {
            "unknown": {"why": "more image / audio placeholder tokens in input_ids than features produced by the vision tower: a prompt template that repeats `<image>`, a processor from another model version, a different image resolution / patch count", "fixes": ["use the processor that matches the checkpoint; count `(input_ids == image_token_id).sum()` against `image_features.shape[0]`"]},
            "seq_len_gt_max_positions": {"why": "the prompt was truncated to max_length and the cut fell inside the image tokens, so mask and features disagree", "fixes": ["truncate the text only, or raise max_length"]},
        },
    },
    "DA505": {
        "name": "sparse-compressed-invariant-violated",
        "op_family": "unknown",
        "summary": "the indices of a sparse CSR / CSC / BSR / BSC tensor violate an invariant (the CUDA check does not say which)",
        "fixes": ["build the tensor on CPU with `check_invariants=True` to see which invariant fails, then move it to CUDA"],
        "values": "index",
        "causes": {
            "index_ge_dim_size": {"why": "a column / row index >= the number of columns / rows (shape smaller than the indices)", "fixes": ["check `col_indices.max() < ncols`"]},
            "unknown": {"why": "compressed indices not starting at 0, decreasing, or not ending at nnz; unsorted column indices", "fixes": ["build from COO with `.to_sparse_csr()`, which produces valid indices"]},
        },
    },
    "DA506": {
        "name": "grouped-mm-invalid-offsets",
        "op_family": "unknown",
        "summary": "the group offsets `offs` of torch._grouped_mm / _scaled_grouped_mm are decreasing, past the tensor size, or not a multiple of the required alignment",
        "fixes": ["pad each expert's token group to the alignment (multiple of 16 bytes / 32 rows for mxfp8) before computing offs", "compute offs as `torch.cumsum(tokens_per_expert, 0, dtype=torch.int32)`"],
        "values": "index",
        "causes": {
            "unknown": {"why": "token groups per expert not padded to the required alignment (multiple of 16 bytes; 32 rows for mxfp8, 16 for nvfp4)", "fixes": ["pad groups with `torch._grouped_mm`-compatible alignment (torchtitan: `generate_permute_indices` with alignment)"]},
            "index_ge_dim_size": {"why": "an offset beyond the tensor size (offsets computed for more tokens than the input has)", "fixes": ["check `offs[-1] <= x.size(0)`"]},
            "negative_index": {"why": "decreasing offsets (a negative group size)", "fixes": ["offsets must be a cumulative sum of non-negative counts"]},
        },
    },
    "DA507": {
        "name": "nccl-nan-detected",
        "op_family": "unknown",
        "summary": "a tensor sent to an NCCL collective contains NaN (TORCH_NCCL_NAN_CHECK=1)",
        "fixes": ["find the first NaN on the asserting rank: `torch.autograd.set_detect_anomaly(True)`, fp32 loss, lower LR, gradient clipping", "the other ranks then time out: they are fallout"],
        "values": None,
        "causes": {
            "nan_in_input": {"why": "NaN gradients / activations on this rank (divergence, fp16 overflow, a bad batch, log(0), division by zero)", "fixes": ["enable anomaly detection on the asserting rank, use bf16 / fp32, clip gradients, skip batches with non-finite loss"]},
        },
    },
    "DA508": {
        "name": "assert-async-failed",
        "op_family": "unknown",
        "summary": "a torch._assert_async check failed on the device: an ATen-internal validation (often index_put_ with accumulate=True bounds) or a torch.compile / export runtime assertion",
        "fixes": ["rerun with `CUDA_LAUNCH_BLOCKING=1` (or `devassert run -- ...`) to see which op called _assert_async", "for index_put_ / x[idx] += v: check `idx.max() < x.size(d)`"],
        "values": "index",
        "causes": {
            "index_ge_dim_size": {"why": "index_put_ with accumulate=True (or any x[idx] = v / += v under torch.use_deterministic_algorithms(True)) got an index out of range; 2.4 prints `input[0] != 0`, 2.5+ an empty assertion", "fixes": ["check `idx.max() < x.size(d)` and `idx.min() >= -x.size(d)` at the indexing line"]},
            "unknown": {"why": "a torch.compile / torch.export runtime assertion (shape guards, `_assert_async.msg`) or a user `torch._assert_async` call: the message says which", "fixes": ["read the message; for compiled graphs rerun eagerly"]},
            "negative_index": {"why": "a negative index below -size in index_put_(accumulate=True)", "fixes": ["mask -1 markers before the update"]},
        },
    },
    "DA601": {
        "name": "preflight-nothing-checked",
        "op_family": "unknown",
        "summary": "a data source given to devassert.preflight held nothing it could check (no ids, labels or token types, or nothing to check them against): preflight does not pass data it did not read",
        "fixes": ["name the columns preflight checks: input_ids (or decoder_input_ids) against the embedding, token_type_ids, and the labels (label_key=) against the labels' bound", "or pass the ids themselves: devassert.preflight(model, data=ids_tensor), or a DataLoader whose batches are dicts of those keys or (ids, labels) tuples", "pass what the ids and labels are checked against: the model (its input embedding), the tokenizer, or num_classes= for labels"],
        "values": None,
        "causes": {},
    },
    "DA901": {
        "name": "internal-invariant",
        "op_family": "unknown",
        "summary": "a PyTorch-internal consistency check failed on the device: not the user's data but a PyTorch bug, an unsupported configuration or a size overflow",
        "fixes": ["report it to PyTorch (https://github.com/pytorch/pytorch/issues) with the device line, `python -m torch.utils.collect_env`, the op, shapes, dtypes and GPU model", "try the latest PyTorch release / a wheel built for your GPU architecture", "for NLL overflow guards: split the batch so the loss input has fewer than 2**31 elements"],
        "values": None,
        "causes": {
            "unknown": {"why": "a PyTorch bug or an unsupported configuration (dtype, GPU architecture, launch shape), not the user's values", "fixes": ["report with collect_env output, op, shapes and dtypes; update PyTorch"]},
            "index_overflow": {"why": "a size overflow: a tensor too large for 32-bit index arithmetic (NLL overflow guards `index >= 0` / `input_index >= 0`)", "fixes": ["split the batch / sequence so each tensor has fewer than 2**31 elements"]},
        },
    },
}

# Vocabulary sizes of common base tokenizers (catalog/base-vocabs.toml): a
# table of exactly this size with ids a little past it means tokens were
# added without resizing the embeddings.
BASE_VOCABS = frozenset({
    21128, 28996, 30000, 30522, 32000, 32001, 32100, 32128,
    32768, 49152, 50257, 50265, 50280, 51200, 65024, 100277,
    100352, 119547, 128000, 128256, 151643, 151936, 250002, 250880,
    256000, 262144,
})

# The causes decided by measured facts (catalog/causes.toml; its header
# says what the facts and expressions mean), evaluated by _findings/facts.py.
FACT_CAUSES = [
    {
        "id": "negative_index", "kind": "ids",
        "requires": "n_wrapped > 0", "prior": 0.2,
        "fits": "n_neg + n_wrapped > 0",
        "why": "-1 written into an unsigned array (a padding sentinel), not a real id",
        "support": [
            {"when": "n_wrapped > 0", "weight": "0.75 * n_wrapped / count", "fact": "{n_wrapped} of the {count} bad ids are {wrapped}, -1 as an unsigned integer"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "map the sentinel back after loading: `ids[ids == {wrapped}] = pad_token_id` (or write padding as pad_token_id before saving unsigned tokens)", "when": None, "check": None},
        ],
    },
    {
        "id": "negative_index", "kind": "ids",
        "requires": "n_neg > 0", "prior": 0.2,
        "fits": "n_neg + n_wrapped > 0",
        "why": "negative ids reach the lookup: a padding or label sentinel (-1, -100) in the input ids",
        "support": [
            {"when": "n_neg > 0", "weight": "0.6 * n_neg / count", "fact": "{n_neg} of the {count} bad ids are negative (down to {bottom})"},
            {"when": "n_m100 > 0", "weight": "0.1", "fact": "-100, the label padding value, is among them: labels passed as input ids, or ids padded with -100"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "replace negative ids before the lookup (e.g. `ids.masked_fill(ids < 0, pad_token_id)`); never pass labels as input ids", "when": None, "check": None},
        ],
    },
    {
        "id": "off_by_one", "kind": "ids",
        "requires": "n_past > 0 && top == high && col_min == 1", "prior": 0.2,
        "fits": "n_past + n_255 + n_wrapped > 0",
        "why": "the indices are counted from 1: the largest one equals the table size",
        "support": [
            {"when": "col_max == high", "weight": "0.55", "fact": "the values run 1..{high}: smallest 1, largest {high} = the table's rows, and no 0"},
            {"when": "positions", "weight": "0.1", "fact": "they count up by one along the sequence: positions built from 1 (a cumsum without `- 1`)"},
        ],
        "refute": [
            {"when": "base_vocab && positions == 0", "fact": "{high} is a common base vocabulary's size: id {high} is the first token added past it (a tokenizer's ids need not use 0)"},
            {"when": "tok_len > top && positions == 0", "fact": "len(tokenizer) = {tok_len}: the tokenizer makes id {top}"},
        ],
        "fix": [
            {"text": "count from 0: subtract 1 from the indices (positions: `torch.arange(T)`, or `cumsum(...) - 1`)", "when": None, "check": "col_min - 1 >= low && col_max - 1 < high"},
        ],
    },
    {
        "id": "seq_len_gt_max_positions", "kind": "ids",
        "requires": "n_past > 0 && (positions || hint_pos || (top == high && known(positions) == 0 && (known(hint_tok) == 0 || hint_tok == 0) && (high == 512 || high == 514 || high == 1024 || high == 2048 || high == 4096 || high == 4098 || high == 8192)))", "prior": 0.3,
        "fits": "n_past + n_255 + n_wrapped > 0",
        "why": "a sequence is longer than the position table, so position ids run past it",
        "support": [
            {"when": "top == high && known(positions) == 0 && (known(hint_tok) == 0 || hint_tok == 0) && (high == 512 || high == 514 || high == 1024 || high == 2048 || high == 4096 || high == 4098 || high == 8192)", "weight": "0.3", "fact": "id {top} is the first past a table of {high} rows, a common max_position_embeddings: a sequence of more than {high} tokens"},
            {"when": "positions && col_min == 0", "weight": "0.45", "fact": "the ids are positions 0..{col_max} of a sequence of {seq_len}; the table has {high} rows"},
            {"when": "positions && col_min > 1 && seq_len > high - col_min", "weight": "0.45", "fact": "positions start at {col_min} (an offset such as RoBERTa's padding_idx + 1): {seq_len} tokens need {col_min + seq_len} rows, the table has {high}"},
            {"when": "hint_pos", "weight": "0.25", "fact": "the table is a position embedding"},
        ],
        "refute": [
            {"when": "col_min == 1 && col_max == high && seq_len <= high && offset != 1", "fact": "positions run 1..{high} and no sequence is longer than {high}: the count starts at 1, the input is not too long"},
            {"when": "seq_len <= high - col_min", "fact": "no sequence is longer than the {high - col_min} positions the table holds from {col_min}"},
        ],
        "fix": [
            {"text": "truncate inputs to the model's maximum: `tokenizer(..., truncation=True, max_length={high - col_min})`", "when": "hf", "check": "seq_len > high - col_min"},
            {"text": "crop sequences to the position table before the model: `idx[:, -{high - col_min}:]` (the table has {high} rows)", "when": "hf == 0", "check": "seq_len > high - col_min"},
        ],
    },
    {
        "id": "type_vocab_size", "kind": "ids",
        "requires": "n_past > 0 && (hint_type || (high <= 2 && top <= 2))", "prior": 0.3,
        "fits": "n_past + n_255 + n_wrapped > 0",
        "why": "token-type ids at or past type_vocab_size reach the token-type embedding",
        "support": [
            {"when": "hint_type", "weight": "0.45", "fact": "the table is a token-type embedding of {high} row(s) and gets type id {top}"},
            {"when": "high <= 2 && top <= 2", "weight": "0.2", "fact": "a table of {high} row(s) gets id {top}: the size of a token-type table"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "pass token_type_ids below type_vocab_size ({high}), usually zeros, or none", "when": None, "check": None},
        ],
    },
    {
        "id": "added_tokens_no_resize", "kind": "ids",
        "requires": "n_past > 0 && (base_vocab || tok_len > high || adds_tokens)", "prior": 0.15,
        "fits": "n_past + n_255 + n_wrapped > 0",
        "why": "tokens were added to the tokenizer but the embedding was not resized, so the new ids are >= its rows",
        "support": [
            {"when": "tok_len > top && tok_len > high", "weight": "0.6", "fact": "len(tokenizer) = {tok_len} covers id {top}; the embedding has {high} rows"},
            {"when": "tok_added > 0", "weight": "0.15", "fact": "the tokenizer has {tok_added} added token(s)"},
            {"when": "adds_tokens", "weight": "0.3", "fact": "the program adds tokens to its tokenizer"},
            {"when": "base_vocab && top < high + 1024", "weight": "0.5 * n_past / count", "fact": "{high} is a common base vocabulary's size and the ids go a little past it (to {top})"},
            {"when": "pad_id == top && tok_added > 0 && pad_id >= tok_len - tok_added", "weight": "0.3", "fact": "the pad token (id {pad_id}) is one of the tokenizer's added tokens"},
        ],
        "refute": [
            {"when": "tok_len <= top", "fact": "len(tokenizer) = {tok_len} does not reach id {top}: the tokenizer did not make it"},
            {"when": "tok_len - tok_added > high", "fact": "the tokenizer's own vocabulary ({tok_len - tok_added} tokens without its {tok_added} added) is already past the table's {high} rows: not tokens added later"},
            {"when": "positions", "fact": "the ids count up by one along the sequence: positions, not tokens"},
        ],
        "fix": [
            {"text": "model.resize_token_embeddings(len(tokenizer))", "when": "hf && (!known(tok_bare) || tok_bare == 0)", "check": "tok_len > top"},
            {"text": "model.resize_token_embeddings(tokenizer.get_vocab_size(with_added_tokens=True))", "when": "hf && tok_bare", "check": "tok_len > top"},
            {"text": "grow the embedding to the tokenizer's size (`nn.Embedding(len(tokenizer), dim)`); it has {high} rows", "when": "hf == 0 && (!known(tok_bare) || tok_bare == 0)", "check": "tok_len > top"},
            {"text": "grow the embedding to the tokenizer's size (`nn.Embedding(tokenizer.get_vocab_size(with_added_tokens=True), dim)`); it has {high} rows", "when": "hf == 0 && tok_bare", "check": "tok_len > top"},
        ],
    },
    {
        "id": "pad_token_id_out_of_range", "kind": "ids",
        "requires": "n_past > 0 && distinct == 1 && ((trailing && count >= 2) || pad_id == top)", "prior": 0.1,
        "fits": None,
        "why": "the padding id is outside the vocabulary",
        "support": [
            {"when": "pad_id == top", "weight": "0.7", "fact": "pad_token_id is {pad_id}, the out-of-range id"},
            {"when": "trailing && bad_rows >= 2", "weight": "0.5", "fact": "id {top} fills the ends of {bad_rows} rows"},
            {"when": "trailing && count >= 2 && bad_rows < 2", "weight": "0.3", "fact": "id {top} fills the last {count} places of its row"},
        ],
        "refute": [
            {"when": "known(pad_id) && pad_id != top", "fact": "pad_token_id is {pad_id}, not {top}"},
            {"when": "positions", "fact": "the ids count up by one along the sequence: positions, not padded tokens"},
        ],
        "fix": [
            {"text": "pad with an id inside the vocabulary (e.g. `tokenizer.pad_token = tokenizer.eos_token`)", "when": "hf", "check": None},
            {"text": "pad with an id inside the vocabulary (< {high})", "when": "hf == 0", "check": None},
        ],
    },
    {
        "id": "token_id_ge_vocab", "kind": "ids",
        "requires": "n_past > 0", "prior": 0.3,
        "fits": "n_past + n_255 + n_wrapped > 0",
        "why": "ids past the table: the data was tokenized with a larger vocabulary than the model's, or the model's vocab_size is wrong",
        "support": [
            {"when": "top >= high", "weight": "0.05", "fact": "ids reach {top}: they need at least {top + 1} rows, the table has {high}"},
            {"when": "hint_tok", "weight": "0.2", "fact": "the table is the token embedding"},
            {"when": "top >= high + 1024", "weight": "0.4", "fact": "ids reach {top}, far past the table's {high} rows"},
        ],
        "refute": [
            {"when": "positions", "fact": "the ids count up by one along the sequence: positions, not token ids"},
            {"when": "tok_added > 0 && tok_len > top && tok_len - tok_added <= high", "fact": "the live tokenizer's {tok_added} added token(s) make ids up to {tok_len - 1}: the same tokenizer, grown after the model was sized"},
        ],
        "fix": [
            {"text": "re-tokenize the data with the model's own tokenizer, or make the embedding at least {top + 1} rows", "when": None, "check": "top + 1 > high"},
        ],
    },
    {
        "id": "negative_label", "kind": "labels",
        "requires": "n_wrapped > 0", "prior": 0.2,
        "fits": "n_neg + n_m100 + n_wrapped > 0",
        "why": "-1 written into an unsigned array (an ignore / unlabelled sentinel), not a class",
        "support": [
            {"when": "n_wrapped > 0", "weight": "0.75 * n_wrapped / count", "fact": "{n_wrapped} of the {count} bad labels are {wrapped}, -1 as an unsigned integer"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "map the sentinel to the loss's ignore_index after loading: `labels[labels == {wrapped}] = -100` (or save labels signed)", "when": None, "check": None},
        ],
    },
    {
        "id": "ignore_label_not_ignored", "kind": "labels",
        "requires": "n_255 > 0", "prior": 0.2,
        "fits": None,
        "why": "255, the void / border label of VOC-style masks, reaches the loss, which does not ignore it",
        "support": [
            {"when": "n_255 > 0", "weight": "0.7 * n_255 / count", "fact": "{n_255} of the {count} bad labels are 255 with {high} classes"},
        ],
        "refute": [
            {"when": "ignore == 255", "fact": "ignore_index is already 255"},
        ],
        "fix": [
            {"text": "pass `ignore_index=255` to the loss (`nn.CrossEntropyLoss(ignore_index=255)`)", "when": None, "check": None},
        ],
    },
    {
        "id": "ignore_label_not_ignored", "kind": "labels",
        "requires": "n_m100 > 0", "prior": 0.2,
        "fits": None,
        "why": "-100 is the usual ignore label, but the loss's ignore_index is something else",
        "support": [
            {"when": "n_m100 > 0", "weight": "0.7 * n_m100 / count", "fact": "{n_m100} of the {count} bad labels are -100"},
            {"when": "known(ignore)", "weight": "0", "fact": "ignore_index is {ignore}"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "keep `ignore_index=-100` (the default) in the loss", "when": None, "check": None},
        ],
    },
    {
        "id": "ignore_label_not_ignored", "kind": "labels",
        "requires": "n_m1 > 0", "prior": 0.2,
        "fits": None,
        "why": "-1, a common 'unlabelled' marker, reaches the loss, which does not ignore it",
        "support": [
            {"when": "n_m1 > 0", "weight": "0.65 * n_m1 / count", "fact": "{n_m1} of the {count} bad labels are -1"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "pass `ignore_index=-1` to the loss, or map the marker: `labels[labels == -1] = -100`", "when": None, "check": None},
        ],
    },
    {
        "id": "negative_label", "kind": "labels",
        "requires": "n_neg > 0", "prior": 0.2,
        "fits": "n_neg + n_m100 + n_wrapped > 0",
        "why": "negative labels that are not the loss's ignore_index",
        "support": [
            {"when": "n_neg > 0", "weight": "0.6 * n_neg / count", "fact": "{n_neg} of the {count} bad labels are negative (down to {bottom})"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "map negative labels to the loss's ignore_index (`labels[labels < 0] = -100`) or to a real class", "when": None, "check": None},
        ],
    },
    {
        "id": "off_by_one", "kind": "labels",
        "requires": "n_past > 0 && top == high && col_min == 1", "prior": 0.3,
        "fits": "n_past + n_255 + n_wrapped > 0",
        "why": "the labels are counted from 1: the largest one equals num_classes",
        "support": [
            {"when": "col_max == high", "weight": "0.6", "fact": "the labels run 1..{high}: smallest 1, largest {high} = num_classes, and no 0"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "subtract 1 from the labels (they run 1..{high}; the loss wants 0..{high - 1})", "when": None, "check": "col_min - 1 >= low && col_max - 1 < high"},
        ],
    },
    {
        "id": "label_ge_num_classes", "kind": "labels",
        "requires": "n_past > 0", "prior": 0.2,
        "fits": "n_past + n_255 + n_wrapped > 0",
        "why": "the labels need more classes than the model has",
        "support": [
            {"when": "top >= high", "weight": "0.6 * n_past / count", "fact": "labels reach {top}: they need {top + 1} classes, the model has {high}"},
            {"when": "n_past > 0 && !known(high)", "weight": "0.6 * n_past / count", "fact": "label {top} is past the last class: the model needs at least {top + 1} classes"},
            {"when": "col_min == 0", "weight": "0.1", "fact": "0 occurs too, so they are not counted from 1"},
            {"when": "top > high", "weight": "0.05", "fact": "{top} is more than one past the last class"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "set num_labels / num_classes to {top + 1}, or remap the labels to 0..{high - 1}", "when": "!known(sampled) || sampled == 0", "check": "top + 1 > high"},
            {"text": "set num_labels / num_classes to the largest label + 1 (at least {top + 1}), or remap the labels to 0..{high - 1}", "when": "sampled", "check": "top + 1 > high"},
        ],
    },
    {
        "id": "token_id_ge_vocab", "kind": "labels",
        "requires": "n_past > 0 && base_vocab", "prior": 0.2,
        "fits": "n_past + n_255 + n_wrapped > 0",
        "why": "token ids as targets past the vocabulary: the labels were tokenized with a larger vocabulary than the model's, or its vocab_size is wrong",
        "support": [
            {"when": "base_vocab", "weight": "0.3", "fact": "the loss has {high} classes, a common base vocabulary's size: its targets are token ids"},
            {"when": "top >= high + 1024", "weight": "0.4", "fact": "targets reach {top}, far past the vocabulary's {high}"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "re-tokenize the labels with the model's own tokenizer, or make the output layer (vocab_size) at least {top + 1} wide", "when": None, "check": "top + 1 > high"},
        ],
    },
    {
        "id": "added_tokens_no_resize", "kind": "labels",
        "requires": "0", "prior": 0.15,
        "fits": "n_past + n_255 + n_wrapped > 0",
        "why": "tokens were added to the tokenizer but the output layer was not resized, so the new target ids are >= its size",
        "support": [
        ],
        "refute": [
        ],
        "fix": [
        ],
    },
    {
        "id": "negative_index", "kind": "index",
        "requires": "n_wrapped > 0", "prior": 0.2,
        "fits": "n_neg + n_wrapped > 0",
        "why": "-1 written into an unsigned array (a 'none' marker), not a real index",
        "support": [
            {"when": "n_wrapped > 0", "weight": "0.75 * n_wrapped / count", "fact": "{n_wrapped} of the {count} bad indices are {wrapped}, -1 as an unsigned integer"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "read the indices signed, or mask the marker before indexing (`keep = idx != {wrapped}`)", "when": None, "check": None},
        ],
    },
    {
        "id": "negative_index", "kind": "index",
        "requires": "n_neg > 0", "prior": 0.2,
        "fits": "n_neg + n_wrapped > 0",
        "why": "negative indices the op does not accept: -1 / -100 markers ('none', padding), or an index computed for an empty dim",
        "support": [
            {"when": "n_neg > 0", "weight": "0.6 * n_neg / count", "fact": "{n_neg} of the {count} bad indices are negative (down to {bottom})"},
            {"when": "n_m1 + n_m100 > 0", "weight": "0.1", "fact": "-1 / -100, the usual 'none' and padding markers, are among them"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "mask the markers before indexing (`keep = idx >= 0`, then index with `idx[keep]`), or map them to a valid index", "when": None, "check": None},
        ],
    },
    {
        "id": "index_overflow", "kind": "index",
        "requires": "top >= 2147483648 || bottom < -2147483648", "prior": 0.3,
        "fits": None,
        "why": "indices beyond 2^31: an integer overflow or uninitialised memory",
        "support": [
            {"when": "top >= 2147483648", "weight": "0.3", "fact": "index {top} is past 2^31"},
            {"when": "bottom < -2147483648", "weight": "0.3", "fact": "index {bottom} is below -2^31"},
        ],
        "refute": [
        ],
        "fix": [
        ],
    },
    {
        "id": "off_by_one", "kind": "index",
        "requires": "n_past > 0 && top == high && col_min == 1", "prior": 0.2,
        "fits": "n_past + n_wrapped > 0",
        "why": "the indices are counted from 1: the largest one equals the dim's size",
        "support": [
            {"when": "col_max == high", "weight": "0.55", "fact": "the indices run 1..{high}: smallest 1, largest {high} = the dim's size, and no 0"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "count from 0: subtract 1 from the indices", "when": None, "check": "col_min - 1 >= low && col_max - 1 < high"},
        ],
    },
    {
        "id": "index_ge_dim_size", "kind": "index",
        "requires": "n_past > 0", "prior": 0.3,
        "fits": "n_past + n_wrapped > 0",
        "why": "an index >= the size of the indexed dim: off by one, or an index computed for another (longer) tensor",
        "support": [
            {"when": "top == high", "weight": "0", "fact": "index {top} equals the dim's size: one past the last (a length or count used as an index)"},
            {"when": "col_min == 0", "weight": "0.1", "fact": "0 occurs too, so they are not counted from 1"},
        ],
        "refute": [
        ],
        "fix": [
        ],
    },
    {
        "id": "token_id_ge_vocab", "kind": "index",
        "requires": "n_past > 0 && base_vocab", "prior": 0.1,
        "fits": "n_past + n_wrapped > 0",
        "why": "token ids past the vocabulary index a vocabulary-sized dim (scores, embeddings): a tokenizer larger than the model's",
        "support": [
            {"when": "base_vocab", "weight": "0.3", "fact": "the dim has {high} entries, a common base vocabulary's size"},
        ],
        "refute": [
        ],
        "fix": [
        ],
    },
    {
        "id": "label_ge_num_classes", "kind": "index",
        "requires": "0", "prior": 0.1,
        "fits": "n_past + n_wrapped > 0",
        "why": "class labels used as an index are >= the number of classes",
        "support": [
        ],
        "refute": [
        ],
        "fix": [
        ],
    },
    {
        "id": "seq_len_gt_max_positions", "kind": "index",
        "requires": "0", "prior": 0.1,
        "fits": "n_past + n_wrapped > 0",
        "why": "position ids used as an index run past the position table",
        "support": [
        ],
        "refute": [
        ],
        "fix": [
        ],
    },
    {
        "id": "ignore_label_not_ignored", "kind": "index",
        "requires": "n_255 > 0", "prior": 0.1,
        "fits": "n_255 + n_m1 + n_m100 + n_wrapped > 0",
        "why": "void / padding labels (255, -1, -100) used as an index (one_hot's scatter, a label gather)",
        "support": [
            {"when": "n_255 > 0", "weight": "0.4 * n_255 / count", "fact": "{n_255} of the {count} bad indices are 255, the void label of VOC-style masks"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "remap the void label 255 before the op (`mask[mask == 255] = 0`, or keep a separate ignore mask)", "when": None, "check": None},
        ],
    },
    {
        "id": "ignore_label_not_ignored", "kind": "index",
        "requires": "n_m1 + n_m100 > 0", "prior": 0.1,
        "fits": "n_255 + n_m1 + n_m100 + n_wrapped > 0",
        "why": "ignore labels (-1, -100) used as an index (targets the loss skips still index its class weights, `weight[target]`, or a label gather)",
        "support": [
            {"when": "n_m1 + n_m100 > 0", "weight": "0.1 * (n_m1 + n_m100) / count", "fact": "{n_m1 + n_m100} of the {count} bad indices are -1 / -100, the usual ignore labels"},
        ],
        "refute": [
        ],
        "fix": [
            {"text": "drop the ignored targets before they index (`keep = target != ignore_index`, then `target[keep]`)", "when": None, "check": None},
        ],
    },
]

# The shares `advice::calibrate` gives causes (docs/how-it-works.md): established
# causes together; left free for a cause nobody listed when no `unknown` is.
ESTABLISHED_SHARE = 0.9
UNLISTED_SHARE = 0.05

# Characters text quoted from an input must not print raw (render/inert.rs):
# inclusive code point ranges; and the most bytes one quoted text prints.
UNSAFE_RANGES = ((0x0000, 0x0008), (0x000a, 0x001f), (0x007f, 0x009f), (0x061c, 0x061c), (0x200b, 0x200f), (0x2028, 0x202e), (0x2060, 0x2069), (0xfeff, 0xfeff),)
LINE_MAX = 1024
