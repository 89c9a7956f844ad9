//! Causes ranked from evidence that means what it says: each log line below
//! is evidence for what the message really implies.

mod common;

use serde_json::Value;

fn causes(log: &str) -> (Vec<String>, Vec<String>) {
    let f = common::explain_first(log);
    let ids = common::cause_ids(&f)
        .into_iter()
        .map(String::from)
        .collect();
    let fixes = f["fixes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    (ids, fixes)
}

const EMBEDDING: &str = "../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [7,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n";
const NLL: &str = "../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [1,0,0] Assertion `t >= 0 && t < n_classes` failed.\n";

#[test]
fn pad_set_to_eos_means_generation_not_a_bad_pad_id() {
    let log = format!("Setting `pad_token_id` to `eos_token_id`:50256 for open-end generation.\n{EMBEDDING}RuntimeError: CUDA error: device-side assert triggered\n");
    let (ids, _) = causes(&log);
    assert!(
        ids[..2].contains(&"seq_len_gt_max_positions".to_string())
            && ids[..2].contains(&"token_id_ge_vocab".to_string()),
        "{ids:?}"
    );
    assert!(
        !ids[..3].contains(&"pad_token_id_out_of_range".to_string()),
        "{ids:?}"
    );
}

#[test]
fn roberta_with_token_type_ids_is_type_vocab_size() {
    let log = format!(
        "Some weights of XLMRobertaForSequenceClassification were not initialized from the model checkpoint at xlm-roberta-base\n{EMBEDDING}\
         Traceback (most recent call last):\n  File \"/home/u/cls.py\", line 40, in <module>\n    out = model(input_ids=ids, token_type_ids=tt)\n\
         RuntimeError: CUDA error: device-side assert triggered\n"
    );
    assert_eq!(causes(&log).0[0], "type_vocab_size");
    // The model's module in the traceback says the same without the log line.
    let log = format!(
        "{EMBEDDING}Traceback (most recent call last):\n  File \"/home/u/cls.py\", line 40, in <module>\n    out = model(ids, token_type_ids=tt)\n\
         \x20 File \"/venv/lib/python3.11/site-packages/transformers/models/camembert/modeling_camembert.py\", line 120, in forward\n    x = self.token_type_embeddings(token_type_ids)\n\
         RuntimeError: CUDA error: device-side assert triggered\n"
    );
    assert_eq!(causes(&log).0[0], "type_vocab_size");
}

#[test]
fn target_minus_one_ranks_both_ignore_and_negative() {
    for hint in [
        "labels: tensor([ 3, -1,  0,  2], device='cuda:0')\n",
        "IndexError: Target -1 is out of bounds.\n",
    ] {
        let log = format!("{hint}{NLL}RuntimeError: CUDA error: device-side assert triggered\n");
        let (ids, _) = causes(&log);
        let top: Vec<&str> = ids.iter().take(3).map(String::as_str).collect();
        assert!(
            top.contains(&"ignore_label_not_ignored") && top.contains(&"negative_label"),
            "{hint}: {top:?}"
        );
    }
}

#[test]
fn target_255_is_a_void_label_not_a_class_count() {
    let (ids, fixes) = causes("IndexError: Target 255 is out of bounds.\n");
    assert_eq!(ids[0], "ignore_label_not_ignored");
    assert!(fixes[0].contains("ignore_index"), "{fixes:?}");
    // Any other target is a class count.
    let (ids, _) = causes("IndexError: Target 12 is out of bounds.\n");
    assert_eq!(ids[0], "label_ge_num_classes");
}

#[test]
fn lua_torch_criterion_ranks_negative_label_first() {
    // Lua torch subtracts its index base (1) before `t >= 0`: a 0-based label fails it.
    let lua = "/home/u/torch/extra/cunn/lib/THCUNN/ClassNLLCriterion.cu:52: void cunn_ClassNLLCriterion_updateOutput_kernel(Dtype *, Dtype *, Dtype *, long *, Dtype *, int, int, int, int) [with Dtype = float, Acctype = float]: block: [0,0,0], thread: [2,0,0] Assertion `t >= 0 && t < n_classes` failed.\n";
    assert_eq!(causes(lua).0[0], "negative_label");
    // The same kernel from a PyTorch wheel keeps the usual order.
    let py = lua.replace(
        "/home/u/torch/extra/cunn/lib/THCUNN",
        "/pytorch/aten/src/THCUNN",
    );
    assert_eq!(causes(&py).0[0], "label_ge_num_classes");
}

#[test]
fn a_vocabulary_sized_bound_is_a_token_id_past_the_vocab() {
    let index = "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], thread: [0,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.\n";
    let (ids, _) = causes(index);
    assert_eq!(ids[0], "index_ge_dim_size", "{ids:?}");
    // Ascend's bounds check names the bound: 129280 rows is a vocabulary, not boxes.
    let ascend = "Index out of range in dimension 1: index value 151645 exceeds bounds 129280!\n[ASSERT] .../ascendc/index_check/index_check.h:130: Assertion `(idx < bound)' failed.\n";
    let (ids, _) = causes(ascend);
    assert_eq!(ids[0], "token_id_ge_vocab", "{ids:?}");
    // A small bound says nothing about a vocabulary.
    let small = ascend.replace("151645 exceeds bounds 129280", "12 exceeds bounds 10");
    let (ids, _) = causes(&small);
    assert_eq!(ids[0], "index_ge_dim_size", "{ids:?}");
}

#[test]
fn an_id_equal_to_a_standard_vocabulary_size_is_a_token_added_after_sizing() {
    // 128256 is Llama-3's vocabulary: the id is the first token added past it.
    let added = format!("WARNING: token id 128256 out of range\n{EMBEDDING}RuntimeError: CUDA error: device-side assert triggered\n");
    let (ids, _) = causes(&added);
    assert_eq!(ids[0], "added_tokens_no_resize", "{ids:?}");
    assert!(
        ids[..3].contains(&"pad_token_id_out_of_range".to_string()),
        "{ids:?}"
    );
    // One id further is no vocabulary's edge: the default ranking holds.
    let other = added.replace("128256", "128257");
    let (ids, _) = causes(&other);
    assert_eq!(ids[0], "token_id_ge_vocab", "{ids:?}");
    assert!(
        !ids[..3].contains(&"pad_token_id_out_of_range".to_string()),
        "{ids:?}"
    );
}

#[test]
fn a_value_the_log_states_beside_its_bound_is_reported() {
    // The evidence pattern takes the vocabulary-sized bound; the line also
    // names the id that ran past it.
    let ascend = "Index out of range in dimension 1: index value 151645 exceeds bounds 129280!\n[ASSERT] /usr/local/Ascend/ascend-toolkit/latest/include/ascendc/index_check/index_check.h:130: Assertion `(idx < bound)' failed.\n";
    let out = common::bin()
        .args(["explain", "--format", "json", "--no-source", "-"])
        .write_stdin(ascend)
        .output()
        .expect("run devassert");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let f = &v["findings"][0];
    assert_eq!(f["values"], serde_json::json!([151645]), "{f}");
    assert_eq!(f["bound"]["high"], 129280, "{f}");
}

/// A real log (corpus 119, split tune2): PyTorch ≤ 1.5 reported a bad
/// gather / scatter index on the CPU as TH's `Invalid index in gather`, with
/// no kernel line. It is DA121's failure, and the thread's cause (identity
/// labels past the classes) is among the first three.
#[test]
fn th_invalid_index_in_gather_is_a_gather_scatter_failure() {
    let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/real/119.log");
    let out = common::bin()
        .args(["explain", "--format", "json", "--no-source"])
        .arg(&log)
        .output()
        .expect("run devassert");
    assert_eq!(out.status.code(), Some(1), "a failure is found");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "DA121", "{f}");
    assert_eq!(f["op_family"], "gather_scatter", "{f}");
    let text = std::fs::read_to_string(&log).expect("corpus log 119");
    let (ids, _) = causes(&text);
    assert!(
        ids.iter().take(3).any(|c| c == "label_ge_num_classes"),
        "{ids:?}"
    );
}

/// A memory checker's report names the kernel that read out of bounds: a
/// real one (corpus 164, split tune5: compute-sanitizer on ctc_loss, no
/// traceback) is an illegal access in ctc_loss, not "no failure found";
/// advice to run the checker it already ran is left out.
#[test]
fn a_memory_checker_names_the_faulting_kernel_and_its_op() {
    let log = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/real/164.log"),
    )
    .expect("corpus log 164");
    let f = common::explain_first(&log);
    assert_eq!(f["rule"], "DA003", "{f}");
    assert_eq!(f["op_family"], "ctc_loss", "{f}");
    assert_eq!(
        f["evidence"]["kernel"], "ctc_loss_log_alpha_gpu_kernel",
        "{f}"
    );
    let guess = f["evidence"]["op_guess"].as_str().unwrap_or_default();
    assert!(
        guess.starts_with("DA205 ") && guess.contains("memory checker"),
        "{f}"
    );
    assert!(!f.to_string().contains("compute-sanitizer"), "{f}");
}

/// The kernel the checker names wins over the traceback's code: the error
/// surfaces at a later line (here a loss) because launches are async.
#[test]
fn the_checkers_kernel_wins_over_the_line_where_the_error_surfaced() {
    let log = "========= Invalid __global__ read of size 4 bytes\n\
        =========     at void at::native::EmbeddingBag_updateOutputKernel_max<float, long>(const long *, const long *, const float *, float *, long *, long, long, long, long, long, long, long, long, long, long)+0x2b0\n\
        =========     by thread (0,0,0) in block (5,0,0)\n\
        Traceback (most recent call last):\n  File \"rec.py\", line 40, in <module>\n    loss = F.cross_entropy(scores, target)\n\
        RuntimeError: CUDA error: unspecified launch failure\n";
    let f = common::explain_first(log);
    assert_eq!(f["op_family"], "embedding_bag", "{f}");
    assert_eq!(
        f["evidence"]["kernel"], "EmbeddingBag_updateOutputKernel_max",
        "{f}"
    );
    // A kernel no guess knows (a Triton kernel) is named, and the op stays unknown.
    let g = common::explain_first(
        "========= Invalid __global__ write of size 16 bytes\n\
         =========     at 0x1c0 in /srv/kernels/moe.py:175:fused_moe_kernel\n",
    );
    assert_eq!(g["rule"], "DA003", "{g}");
    assert_eq!(g["op_family"], "unknown", "{g}");
    assert_eq!(g["evidence"]["kernel"], "fused_moe_kernel", "{g}");
    assert!(g["evidence"]["op_guess"].is_null(), "{g}");
    assert!(!g.to_string().contains("compute-sanitizer"), "{g}");
}

/// A checker's frame is untrusted text: a kernel name of megabytes is
/// shown clipped, in the evidence and in the op guess alike.
#[test]
fn a_checkers_kernel_name_of_any_length_is_shown_clipped() {
    let name = format!(
        "EmbeddingBag_updateOutputKernel_sum_{}",
        "x".repeat(2_000_000)
    );
    let log = format!(
        "========= Invalid __global__ read of size 4 bytes\n=========     at 0x2b0 in {name}\n"
    );
    let f = common::explain_first(&log);
    let head: String = f.to_string().chars().take(2000).collect();
    assert_eq!(f["op_family"], "embedding_bag", "{head}");
    let kernel = f["evidence"]["kernel"].as_str().unwrap_or_default();
    assert_eq!(kernel, &name[..300]);
    assert!(f["evidence"]["op_guess"].as_str().unwrap_or_default().len() < 500);
}

#[test]
fn a_log_without_its_kernel_line_ranks_the_common_causes_and_leads_with_finding_the_op() {
    // Only the host error: the op is not named, so the causes are the common
    // ones by how often each is the cause, "none of these" last, and the
    // first step is the rerun that names the op, not a guess's check.
    let f = common::explain_first("RuntimeError: CUDA error: device-side assert triggered\n");
    assert_eq!(f["rule"], "DA001", "{f:#}");
    let ids = common::cause_ids(&f);
    assert_eq!(
        ids[..3],
        [
            "label_ge_num_classes",
            "seq_len_gt_max_positions",
            "token_id_ge_vocab"
        ],
        "{ids:?}"
    );
    assert_eq!(ids.last(), Some(&"unknown"), "{ids:?}");
    let first = f["fixes"][0].as_str().unwrap_or_default();
    assert!(first.contains("devassert run --"), "{f:#}");
    // A frame that bears on a cause still moves it up.
    let log = "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    out = model.embeddings.position_embeddings(pos)\nRuntimeError: CUDA error: device-side assert triggered\n";
    let framed = common::explain_first(log);
    let ids = common::cause_ids(&framed);
    assert_eq!(ids[0], "seq_len_gt_max_positions", "{ids:?}");
}
