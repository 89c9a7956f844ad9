//! explain's causes decided by the facts a log states (issue 36): the
//! offending values and bound, and the `[[log_fact]]` lines and frames of
//! `catalog/causes.toml`, through the engine scan, check, preflight and the
//! guard use. Each log is written in the shape real logs take.

mod common;

use common::{bin, cause_ids as ids, cause_why as why, explain_first as first};
use serde_json::Value;

#[test]
fn an_id_at_the_end_of_a_position_sized_table_is_a_sequence_too_long() {
    let f = first(
        "RuntimeError: index out of range: Tried to access index 512 out of table with 511 rows. at /pytorch/aten/src/TH/generic/THTensorEvenMoreMath.cpp:418\n",
    );
    assert_eq!(ids(&f)[0], "seq_len_gt_max_positions", "{f}");
    assert!(
        why(&f, "seq_len_gt_max_positions")
            .contains("(facts: id 512 is the first past a table of 512 rows"),
        "{f}"
    );
    // The same id named at the token embedding is no position.
    let g = first(
        "  File \"m.py\", line 9, in forward\n    x = self.word_embeddings(input_ids)\n\
         RuntimeError: index out of range: Tried to access index 512 out of table with 511 rows.\n",
    );
    assert_ne!(ids(&g)[0], "seq_len_gt_max_positions", "{g}");
}

/// The tokenizer's length is printed and does not reach the bad id.
const SHORT_TOKENIZER: &str = "len(tokenizer) = 32000\n\
     Traceback (most recent call last):\n  File \"train.py\", line 51, in <module>\n    out = model(input_ids=ids)\n\
     \x20 File \"/usr/lib/python3/site-packages/transformers/models/llama/modeling_llama.py\", line 1021, in forward\n    inputs_embeds = self.embed_tokens(input_ids)\n\
     RuntimeError: index out of range: Tried to access index 32000 out of table with 31999 rows.\n";

#[test]
fn a_tokenizer_that_does_not_reach_the_id_rules_out_added_tokens_and_their_fix() {
    let f = first(SHORT_TOKENIZER);
    assert!(!ids(&f).contains(&"added_tokens_no_resize"), "{f}");
    let ruled = f["evidence"]["ruled_out"].to_string();
    assert!(
        ruled.contains("added_tokens_no_resize: len(tokenizer) = 32000 does not reach id 32000"),
        "{f}"
    );
    let fixes = f["fixes"].to_string();
    assert!(
        !fixes.contains("resize_token_embeddings"),
        "a refuted cause's fix is shown: {fixes}"
    );
}

#[test]
fn a_negative_target_puts_the_negative_label_causes_first() {
    let f = first(
        "  File \"train.py\", line 40, in <module>\n    loss = criterion(out, y)\n\
         IndexError: Target -1 is out of bounds.\n",
    );
    let top2 = &ids(&f)[..2];
    assert!(
        top2.contains(&"negative_label") && top2.contains(&"ignore_label_not_ignored"),
        "{f}"
    );
    assert!(
        why(&f, "negative_label").contains("(facts: 1 of the 1 bad labels are negative"),
        "{f}"
    );
}

#[test]
fn the_program_adding_tokens_supports_added_tokens_over_the_prior_order() {
    let f = first(
        "Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned or trained.\n\
         ../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [71,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n\
         \x20 File \"/home/u/.venv/lib/python3.10/site-packages/transformers/models/gpt2/modeling_gpt2.py\", line 845, in forward\n    inputs_embeds = self.wte(input_ids)\n\
         RuntimeError: CUDA error: device-side assert triggered\n",
    );
    assert_eq!(ids(&f)[0], "added_tokens_no_resize", "{f}");
}

#[test]
fn a_cause_nothing_in_the_log_bears_on_says_it_rests_on_its_prior() {
    let f = first(
        "../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [71,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n",
    );
    for id in ids(&f).into_iter().filter(|id| *id != "unknown") {
        assert!(why(&f, id).ends_with("ranked by its prior)"), "{id}: {f}");
    }
}

#[test]
fn the_text_names_each_ruled_out_cause_with_its_fact() {
    let out = bin()
        .args(["explain", "--color", "never", "--no-source", "-"])
        .write_stdin(SHORT_TOKENIZER)
        .output()
        .expect("run devassert");
    let text = String::from_utf8(out.stdout).expect("utf-8 output");
    assert!(
        text.contains("ruled out: added_tokens_no_resize — len(tokenizer) = 32000"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

/// A real log (corpus 111, split tune2): roberta-large fed texts as long as
/// its `max_position_embeddings` (514). Truncating to that number leaves the
/// crash in place, since RoBERTa's positions start at padding_idx + 1; the
/// truncation fix must name the offset, not send the user to 514.
#[test]
fn the_truncation_fix_counts_the_position_offset() {
    let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/real/111.log");
    let text = std::fs::read_to_string(&log).expect("corpus log 111");
    let f = first(&text);
    assert_eq!(ids(&f)[0], "seq_len_gt_max_positions", "{f}");
    let fixes: Vec<&str> = f["fixes"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let truncate = fixes
        .iter()
        .find(|x| x.contains("truncat"))
        .unwrap_or_else(|| panic!("no truncation fix: {f}"));
    assert!(
        !truncate.contains("max_length=model.config.max_position_embeddings"),
        "{truncate}"
    );
    assert!(truncate.contains("padding_idx + 1"), "{truncate}");
}

fn real(id: &str) -> Value {
    first(&real_without(id, None))
}

/// A corpus log's text, less its lines holding `drop`.
fn real_without(id: &str, drop: Option<&str>) -> String {
    let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/corpus/real/{id}.log"));
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("corpus log {id}: {e}"));
    text.lines()
        .filter(|l| drop.is_none_or(|d| !l.contains(d)))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn cause<'a>(f: &'a Value, id: &str) -> &'a Value {
    f["causes"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no cause {id}: {f}"))
}

/// Every fix the finding shows: its causes' and its next steps.
fn all_fixes(f: &Value) -> String {
    let mut s = f["fixes"].to_string();
    for c in f["causes"].as_array().into_iter().flatten() {
        s.push_str(&c["fixes"].to_string());
    }
    s
}

/// A cause none of the stated values fits: kept (the log states one bad
/// value, others may differ), said so, no fix, not ruled out.
fn assert_unfit(f: &Value, id: &str) {
    let c = cause(f, id);
    assert!(
        c["why"]
            .as_str()
            .is_some_and(|w| w.contains("none of the offending values the log states fits it")),
        "{id}: {f}"
    );
    assert!(
        c["fixes"].as_array().is_none_or(|a| a.is_empty()),
        "{id} shows a fix: {f}"
    );
    assert!(
        !f["evidence"]["ruled_out"].to_string().contains(id),
        "{id} is ruled out on one value: {f}"
    );
}

/// A real log (corpus 104, split tune): `IndexError: Target 12 is out of
/// bounds.`, no bound. 12 is past the last class whatever it is; it is not
/// negative, so the negative-label cause keeps its prior and shows no fix.
/// It may be a void label (any number may: 225 is one in a real log), so
/// ignore_label_not_ignored is no unfit cause.
#[test]
fn a_stated_label_past_the_bound_decides_the_causes_without_the_bound() {
    let f = real("104");
    assert_eq!(ids(&f)[0], "label_ge_num_classes", "{f}");
    assert!(
        why(&f, "label_ge_num_classes").contains("(facts: label 12 is past the last class"),
        "{f}"
    );
    assert_unfit(&f, "negative_label");
    let fixes = all_fixes(&f);
    assert!(!fixes.contains("labels < 0"), "{fixes}");
    assert!(!fixes.contains("padding value"), "{fixes}");
    assert!(
        !why(&f, "ignore_label_not_ignored").contains("none of the offending values"),
        "{f}"
    );
}

/// A real log (corpus 103, split tune): `Target -1 is out of bounds.`, no
/// bound. More classes cannot make -1 valid: label_ge_num_classes stays,
/// ranked by its prior, and its fixes ("num_labels = max label + 1") go.
#[test]
fn a_stated_negative_label_shows_no_fix_for_too_few_classes() {
    let f = real("103");
    let top2 = &ids(&f)[..2];
    assert!(
        top2.contains(&"negative_label") && top2.contains(&"ignore_label_not_ignored"),
        "{f}"
    );
    assert_unfit(&f, "label_ge_num_classes");
    let fixes = all_fixes(&f);
    assert!(!fixes.contains("num_labels"), "{fixes}");
    assert!(fixes.contains("labels[labels < 0] = -100"), "{fixes}");
    assert!(f["evidence"]["ruled_out"].is_null(), "{f}");
}

#[test]
fn a_stated_id_past_the_table_shows_no_fix_for_negative_ids() {
    let f = first(
        "RuntimeError: index out of range: Tried to access index 12 out of table with 9 rows. at /pytorch/aten/src/TH/generic/THTensorEvenMoreMath.cpp:418\n",
    );
    assert_unfit(&f, "negative_index");
    assert!(!all_fixes(&f).contains("pad_token_id in input_ids"), "{f}");
}

/// The CPU error names the first bad label, not the largest: the class
/// count the fix asks for is a floor, not the answer.
#[test]
fn the_class_count_a_log_implies_is_a_floor() {
    let f = first("num_labels = 12\nIndexError: Target 12 is out of bounds.\n");
    assert_eq!(ids(&f)[0], "label_ge_num_classes", "{f}");
    let fixes = all_fixes(&f);
    assert!(
        fixes.contains("set num_labels / num_classes to the largest label + 1 (at least 13)"),
        "{fixes}"
    );
    assert!(!fixes.contains("num_classes to 13"), "{fixes}");
}

/// A real log (corpus 103, split tune): `Target -1 is out of bounds.` A
/// token id is never negative: the label rule's token-id causes fit no
/// stated value, so their vocabulary and resize fixes go.
#[test]
fn a_stated_negative_target_shows_no_token_id_fix() {
    let f = real("103");
    assert_unfit(&f, "token_id_ge_vocab");
    assert_unfit(&f, "added_tokens_no_resize");
    let fixes = all_fixes(&f);
    assert!(!fixes.contains("vocab_size"), "{fixes}");
    assert!(!fixes.contains("resize_token_embeddings"), "{fixes}");
}

/// A real log (corpus 097, split tune): an NPU `IndexCheck` of advanced
/// indexing (DA111) states index 151645 past a dim of 129280. No negative
/// index is stated, so "mask -1 / -100 markers" cannot make it valid: the
/// negative-index cause keeps its prior and shows no fix.
#[test]
fn an_advanced_index_past_its_dim_shows_no_negative_marker_fix() {
    let f = real("097");
    assert_eq!(f["rule"], "DA111", "{f}");
    assert_unfit(&f, "negative_index");
    assert!(!all_fixes(&f).contains("markers"), "{}", all_fixes(&f));
    assert_eq!(ids(&f)[0], "token_id_ge_vocab", "{f}");
}

/// The CPU error of `x[idx]`: index 12, a dim of 10.
#[test]
fn a_stated_advanced_index_is_decided_by_its_value() {
    let f = first(
        "  File \"t.py\", line 3, in <module>\n    y = x[idx]\n\
         IndexError: index 12 is out of bounds for dimension 0 with size 10\n",
    );
    assert_eq!(f["rule"], "DA111", "{f}");
    assert_eq!(ids(&f)[0], "index_ge_dim_size", "{f}");
    assert_unfit(&f, "negative_index");
    assert!(!all_fixes(&f).contains("markers"), "{}", all_fixes(&f));
}

/// IndexKernel's CUDA assert with the CPU rerun stating the value: an index
/// equal to the dim's size is one past the last.
#[test]
fn the_index_kernel_assert_with_a_stated_value_is_one_past_the_last() {
    let f = first(
        "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], thread: [31,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.\n\
         RuntimeError: CUDA error: device-side assert triggered\n\
         On the CPU: IndexError: index 10 is out of bounds for dimension 0 with size 10\n",
    );
    assert_eq!(f["rule"], "DA111", "{f}");
    assert_eq!(ids(&f)[0], "index_ge_dim_size", "{f}");
    assert!(
        why(&f, "index_ge_dim_size")
            .contains("(facts: index 10 equals the dim's size: one past the last"),
        "{f}"
    );
    assert_unfit(&f, "negative_index");
    assert!(!all_fixes(&f).contains("markers"), "{}", all_fixes(&f));
}

/// take (DA112), another index rule: its CPU error states index 12 of a
/// tensor of 10 elements; no negative index is stated.
#[test]
fn a_stated_take_index_shows_no_negative_marker_fix() {
    let f = first(
        "  File \"m.py\", line 7, in forward\n    out = torch.take(x, idx)\n\
         RuntimeError: out of range: tried to access index 12 on a tensor of 10 elements.\n",
    );
    assert_eq!(f["rule"], "DA112", "{f}");
    assert_eq!(ids(&f)[0], "index_ge_dim_size", "{f}");
    assert_unfit(&f, "negative_index");
    assert!(!all_fixes(&f).contains("-1 markers"), "{}", all_fixes(&f));
}

/// gather's CUDA assert (DA121) with the CPU rerun's error, a message
/// advanced indexing shares: it states the gather's value, 12 of a dim of
/// 10. Neither a negative index nor a void label (255, -1, -100) is
/// stated, so their fixes go.
#[test]
fn a_gather_assert_with_a_stated_value_shows_no_void_label_or_marker_fix() {
    let f = first(
        "/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu:144: operator(): block: [0,0,0], thread: [0,0,0] Assertion `idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"` failed.\n\
         RuntimeError: CUDA error: device-side assert triggered\n\
         On the CPU: RuntimeError: index 12 is out of bounds for dimension 1 with size 10\n",
    );
    assert_eq!(f["rule"], "DA121", "{f}");
    assert_eq!(f["values"], serde_json::json!([12]), "{f}");
    assert_unfit(&f, "negative_index");
    assert_unfit(&f, "ignore_label_not_ignored");
    let fixes = all_fixes(&f);
    assert!(!fixes.contains("-1 / -100"), "{fixes}");
    assert!(!fixes.contains("void labels"), "{fixes}");
}

/// The same CPU message with no CUDA line: the frame that raised it calls
/// `torch.gather`, so the failure is gather's (DA121), not advanced
/// indexing's, which the catalog's order would pick.
#[test]
fn a_shared_cpu_message_is_the_op_its_raising_frame_calls() {
    let gather = first(
        "Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    loss = step(batch)\n\
         \x20 File \"train.py\", line 22, in step\n    picked = torch.gather(logits, 1, labels.unsqueeze(1))\n\
         RuntimeError: index 12 is out of bounds for dimension 1 with size 10\n",
    );
    assert_eq!(gather["rule"], "DA121", "{gather}");
    assert_eq!(gather["values"], serde_json::json!([12]), "{gather}");
    // `x[idx]` raises it too, and an outer frame's gather is another call.
    let getitem = first(
        "Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    picked = torch.gather(step(batch), 1, labels)\n\
         \x20 File \"train.py\", line 22, in step\n    return table[idx]\n\
         IndexError: index 12 is out of bounds for dimension 0 with size 10\n",
    );
    assert_eq!(getitem["rule"], "DA111", "{getitem}");
}

/// A real log (corpus 136, split tune3): IndexKernel's assert under a
/// detectron2 logger line (`d2.data.datasets.coco`). In a detection
/// framework an index past its bound is most often a category id past the
/// configured classes; without such a line the dim's size leads.
#[test]
fn an_index_assert_from_a_detection_framework_is_a_class_id_past_the_classes() {
    let f = real("136");
    assert_eq!(f["rule"], "DA111", "{f}");
    assert_eq!(ids(&f)[0], "label_ge_num_classes", "{f}");
    assert!(
        why(&f, "label_ge_num_classes").contains("object-detection framework"),
        "{f}"
    );
    let plain = real_without("136", Some("d2."));
    assert_eq!(ids(&first(&plain))[0], "index_ge_dim_size");
}

/// A real log (corpus 224, split tune9): a one-stage detector's focal loss
/// (RetinaNet's, copied into EfficientDet ports) marks the class column of
/// its matched boxes, `assigned_annotations[…, 4]`, and a class id runs past
/// the classes. The code line the poster kept says so; without it the
/// index equal to the dim's size leads.
#[test]
fn a_one_stage_detectors_class_column_is_a_class_id_past_the_classes() {
    let f = real("224");
    assert_eq!(f["rule"], "DA111", "{f}");
    assert_eq!(ids(&f)[0], "label_ge_num_classes", "{f}");
    let plain = real_without("224", Some("annotations"));
    assert_eq!(ids(&first(&plain))[0], "index_ge_dim_size");
    // A YOLO training's frame path says the same.
    let yolo = first(
        "Traceback (most recent call last):\n  File \"/work/yolov5/utils/loss.py\", line 150, in build_targets\n    t[range(n), tcls[i]] = self.cp\n\
         IndexError: index 80 is out of bounds for dimension 1 with size 80\n",
    );
    assert_eq!(ids(&yolo)[0], "label_ge_num_classes", "{yolo}");
}

/// A cross-entropy assert with nothing else: negative labels (a -1 in the
/// label column) rank above LM labels past the vocabulary (corpus tuning
/// splits: as common as labels past C; LM labels past the vocabulary unseen).
#[test]
fn a_bare_cross_entropy_assert_ranks_negative_labels_before_lm_vocabulary() {
    let f = first(
        "/pytorch/aten/src/ATen/native/cuda/Loss.cu:242: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [3,0,0] Assertion `t >= 0 && t < n_classes` failed.\n\
         RuntimeError: CUDA error: device-side assert triggered\n",
    );
    let order = ids(&f);
    let at = |id: &str| {
        order
            .iter()
            .position(|c| *c == id)
            .unwrap_or_else(|| panic!("no {id}: {f}"))
    };
    assert_eq!(order[0], "label_ge_num_classes", "{f}");
    assert!(at("negative_label") < at("token_id_ge_vocab"), "{f}");
}

/// A real log (corpus 119, split tune2): the poster kept the code line of
/// the failing frame, `logpt=torch.gather(logpt,1,torch.LongTensor(target))`,
/// and cut its `File …, line N` line. That code is the innermost frame's:
/// a loss gathering log-probabilities at its targets, so class targets past
/// the classes lead. It places nothing (no file, no line).
#[test]
fn the_code_above_an_error_whose_frame_line_was_cut_is_read_as_the_frames() {
    let f = real("119");
    assert_eq!(f["rule"], "DA121", "{f}");
    assert_eq!(ids(&f)[0], "label_ge_num_classes", "{f}");
    assert!(
        why(&f, "label_ge_num_classes").contains("labels are gathered from log-probabilities"),
        "{f}"
    );
    assert!(f["location"].is_null() && f["noticed_at"].is_null(), "{f}");
    // Without the code line nothing in the log bears on the cause.
    let g = first("RuntimeError: Invalid index in gather at c:\\pytorch\\aten\\src\\th\\generic/THTensorMath.c:600\n");
    assert_eq!(ids(&g)[0], "index_ge_dim_size", "{g}");
}

/// The code above a shared CPU message names the op that raised it, as its
/// frame's code does (`a_shared_cpu_message_is_the_op_its_raising_frame_calls`).
#[test]
fn the_code_above_a_cut_frame_names_the_op_of_a_shared_cpu_message() {
    let f = first(
        "    picked = torch.gather(logits, 1, labels.unsqueeze(1))\n\
         RuntimeError: index 12 is out of bounds for dimension 1 with size 10\n",
    );
    assert_eq!(f["rule"], "DA121", "{f}");
    // Not indented, it is no code line: the message's own rule.
    let g = first(
        "picked = torch.gather(logits, 1, labels.unsqueeze(1))\n\
         RuntimeError: index 12 is out of bounds for dimension 1 with size 10\n",
    );
    assert_eq!(g["rule"], "DA111", "{g}");
}

/// A real log (corpus 101, split tune): the code above the error is
/// PyTorch's own wrapper, `return torch.embedding(weight, input,
/// padding_idx, …)`, the same for every caller: its `padding_idx` is no
/// evidence of a padding id past the table.
#[test]
fn pytorch_wrapper_code_above_the_error_is_no_cause_evidence() {
    let f = real("101");
    assert_eq!(ids(&f)[0], "seq_len_gt_max_positions", "{f}");
    assert!(
        why(&f, "pad_token_id_out_of_range").contains("ranked by its prior"),
        "{f}"
    );
}

/// A real log (corpus 130, split tune3): `index -1 is out of bounds for
/// dimension 0 with size 2`. -1 is a 'none' marker, and an ignore label a
/// loss skips that still indexes its class weights: both causes are
/// offered, each with the fact and its fix, before `index_ge_dim_size`,
/// which no stated value fits (-1 is not past the size).
#[test]
fn a_stated_minus_one_index_offers_the_ignore_label_too() {
    let f = real("130");
    assert_eq!(f["rule"], "DA111", "{f}");
    assert_eq!(
        ids(&f)[..2],
        ["negative_index", "ignore_label_not_ignored"],
        "{f}"
    );
    assert!(
        why(&f, "index_ge_dim_size")
            .contains("none of the offending values the log states fits it"),
        "{f}"
    );
    assert!(
        why(&f, "ignore_label_not_ignored")
            .contains("(facts: 1 of the 1 bad indices are -1 / -100, the usual ignore labels)"),
        "{f}"
    );
    assert!(
        cause(&f, "ignore_label_not_ignored")["fixes"]
            .to_string()
            .contains("keep = target != ignore_index"),
        "{f}"
    );
}

/// one_hot's CPU check names the value's sign, not the value: a real log
/// (corpus 166, split tune5) says `Class values must be non-negative.`, so
/// a class value past the last class fits nothing it states.
#[test]
fn one_hots_message_states_the_value_is_negative() {
    let f = real("166");
    assert_eq!(f["rule"], "DA122", "{f}");
    assert_eq!(ids(&f)[0], "negative_label", "{f}");
    assert_unfit(&f, "label_ge_num_classes");
    assert_eq!(ids(&f).last(), Some(&"label_ge_num_classes"), "{f}");
}
