//! Evidence real logs carry that explain once missed or misread (issue 36):
//! an error line inside a one-line code block, logger-prefixed frames, a
//! host line naming the kernel's source, a Triton bound behind a frozen
//! importlib path, torch_geometric's re-raised index error, torch's CPU
//! lookup message cut at its end, R's torch counting from 1. Each log is
//! written here in the shape such logs take.

mod common;

use common::{cause_ids, cause_why, explain_first as first, explain_json};

#[test]
fn an_error_line_in_a_one_line_code_block_is_read() {
    let f = first(
        "Traceback (most recent call last):\n  File \"train.py\", line 42, in <module>\n    loss.backward()\n\
         ```RuntimeError: CUDA error: device-side assert triggered```\n",
    );
    assert_eq!(f["rule"], "DA001", "{f}");
    assert_eq!(f["noticed_at"]["line"], 42, "{f}");
}

#[test]
fn frames_behind_a_logging_prefix_give_the_place() {
    let f = first(
        "2022-12-28 16:13:02 [ERROR] Traceback (most recent call last):\n\
         2022-12-28 16:13:02 [ERROR]    File \"/home/u/run.py\", line 55, in main\n\
         2022-12-28 16:13:02 [ERROR]      trainer.fit(model)\n\
         2022-12-28 16:13:02 [ERROR]    File \"/home/u/run.py\", line 31, in fit\n\
         2022-12-28 16:13:02 [ERROR]      loss = self.step(batch)\n\
         2022-12-28 16:13:02 [ERROR] RuntimeError: CUDA error: device-side assert triggered\n",
    );
    assert_eq!(f["noticed_at"]["file"], "/home/u/run.py", "{f}");
    assert_eq!(f["noticed_at"]["line"], 31, "{f}");
}

#[test]
fn a_thc_line_naming_the_loss_source_is_nll_loss() {
    for last in [
        "RuntimeError: cuda runtime error (59) : device-side assert triggered at /pytorch/aten/src/THCUNN/generic/ClassNLLCriterion.cu:110",
        "RuntimeError: CUDA error 59",
    ] {
        let f = first(&format!(
            "THCudaCheck FAIL file=/pytorch/aten/src/THCUNN/generic/ClassNLLCriterion.cu line=110 error=59 : device-side assert triggered\n\
             Traceback (most recent call last):\n  File \"train.py\", line 77, in <module>\n    loss = criterion(out, y)\n{last}\n"
        ));
        assert_eq!((f["rule"].as_str(), f["op_family"].as_str()), (Some("DA201"), Some("nll_loss")), "{f}");
    }
}

#[test]
fn a_triton_bound_behind_a_frozen_importlib_path_is_inductors() {
    let f = first(
        "<frozen importlib._bootstrap_external>:843: triton_poi_fused_embedding_0: block: [0,0,0], thread: [5,0,0] Assertion `index out of bounds: 0 <= tmp4 < 24` failed.\n\
         RuntimeError: CUDA error: device-side assert triggered\n",
    );
    assert_eq!(f["op_family"], "inductor", "{f}");
    assert_ne!(f["rule"], "DA403", "{f}");
}

#[test]
fn torch_geometrics_reraised_index_error_is_an_index_select_past_the_nodes() {
    let f = first(
        "Traceback (most recent call last):\n  File \"gnn.py\", line 30, in <module>\n    out = model(data.x, data.edge_index)\n\
         ValueError: Encountered a CUDA error. Please ensure that all indices in 'edge_index' point to valid indices in the interval [0, 26) in your node feature matrix and try again.\n",
    );
    assert_eq!(f["rule"], "DA101", "{f}");
    assert_eq!(cause_ids(&f).first(), Some(&"index_ge_dim_size"), "{f}");
}

#[test]
fn the_cpu_lookup_message_cut_at_its_end_is_the_embeddings_and_pythons_own_are_not() {
    let f = first("IndexError: index out of range\n");
    assert_eq!(f["rule"], "DA101", "{f}");
    for own in [
        "IndexError: list index out of range\n",
        "IndexError: index out of range for dim 2\n",
    ] {
        let out = explain_json(own);
        assert_eq!(out["findings"], serde_json::json!([]), "{own}: {out}");
    }
}

#[test]
fn torch_for_r_counts_from_1_so_a_lookup_is_off_by_one_and_a_label_negative() {
    let msg = "  index out of range in self (operator() at ../aten/src/ATen/native/TensorAdvancedIndexing.cpp:448)\n";
    let f = first(&format!(
        "Error in (function (weight, indices, padding_idx, scale_grad_by_freq,  : \n{msg}"
    ));
    assert_eq!(f["rule"], "DA101", "{f}");
    assert_eq!(cause_ids(&f).first(), Some(&"off_by_one"), "{f}");
    // The same message from Python says nothing of where ids start.
    let f = first(&format!("IndexError:{msg}"));
    assert!(!cause_ids(&f)[..3].contains(&"off_by_one"), "{f}");
    // A class label 0 reaches libtorch as -1, as in Lua torch.
    let f = first(
        "/pytorch/aten/src/ATen/native/cuda/Loss.cu:240: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [3,0,0] Assertion `t >= 0 && t < n_classes` failed.\n\
         Error in cpp_torch_namespace_nll_loss_self_Tensor_target_Tensor(self = self, target = target) : \n\
         CUDA error: device-side assert triggered\n",
    );
    assert_eq!(f["rule"], "DA201", "{f}");
    assert_eq!(cause_ids(&f).first(), Some(&"negative_label"), "{f}");
}

#[test]
fn a_categorical_features_table_ranks_ids_counted_from_1_first() {
    // A recommender's user table, sized by the number of distinct users while
    // the raw ids run from 1: no position or tokenizer story fits it.
    let tb = "Traceback (most recent call last):\n\
              \x20 File \"/srv/rec/train.py\", line 52, in <module>\n    scores = model(users, items)\n\
              \x20 File \"/srv/rec/ncf.py\", line 31, in forward\n    u = self.user_embedding(users)\n";
    let kernel = "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [3,0,0], thread: [9,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n";
    let f = first(&format!(
        "{kernel}{tb}RuntimeError: CUDA error: device-side assert triggered\n"
    ));
    assert_eq!(f["rule"], "DA101", "{f}");
    assert_eq!(cause_ids(&f).first(), Some(&"off_by_one"), "{f}");
    // Without the kernel line (DA001), and through a library's frames alone.
    let f = first(
        "Traceback (most recent call last):\n\
         \x20 File \"/opt/venv/lib/python3.10/site-packages/torchfm/layer.py\", line 60, in forward\n    x = x + x.new_tensor(self.offsets).unsqueeze(0)\n\
         RuntimeError: CUDA error: device-side assert triggered\n",
    );
    assert_eq!(f["rule"], "DA001", "{f}");
    assert_eq!(cause_ids(&f).first(), Some(&"off_by_one"), "{f}");
    // A language model's token table is no categorical feature.
    let f = first(&format!(
        "{kernel}{}RuntimeError: CUDA error: device-side assert triggered\n",
        tb.replace("self.user_embedding(users)", "self.embed_tokens(input_ids)")
    ));
    assert_ne!(cause_ids(&f).first(), Some(&"off_by_one"), "{f}");
}

#[test]
fn positions_indexing_a_rotary_cache_or_a_position_table_are_a_sequence_too_long() {
    // `x[idx]` (IndexKernel), not an embedding lookup: a rotary cache, and a
    // learned position table's weight, indexed by position ids.
    let kernel = "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], thread: [7,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.\n";
    for (function, code) in [
        (
            "apply_rotary_pos_emb",
            "cos = cos[position_ids].unsqueeze(1)",
        ),
        ("forward", "return self.weight[position_ids]"),
    ] {
        let f = first(&format!(
            "{kernel}Traceback (most recent call last):\n\
             \x20 File \"/srv/lm/model.py\", line 88, in {function}\n    {code}\n\
             RuntimeError: CUDA error: device-side assert triggered\n"
        ));
        assert_eq!(f["rule"], "DA111", "{f}");
        assert_eq!(
            cause_ids(&f).first(),
            Some(&"seq_len_gt_max_positions"),
            "{f}"
        );
    }
}

#[test]
fn an_inference_engines_failure_ranks_token_ids_before_labels() {
    // A server computes no loss: its engine's log lines say so, with or
    // without the kernel line.
    let engine = "ERROR 03-02 11:20:05 [core.py:412] EngineCore encountered a fatal error.\n\
                  ERROR 03-02 11:20:05 [core.py:412]   File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py\", line 1210, in execute_model\n\
                  ERROR 03-02 11:20:05 [core.py:412] RuntimeError: CUDA error: device-side assert triggered\n";
    let f = first(engine);
    assert_eq!(f["rule"], "DA001", "{f}");
    let ids = cause_ids(&f);
    assert_eq!(ids.first(), Some(&"token_id_ge_vocab"), "{f}");
    assert!(ids[..2].iter().all(|c| *c != "label_ge_num_classes"), "{f}");
    let gather = "../aten/src/ATen/native/cuda/ScatterGatherKernel.cu:144: operator(): block: [0,0,0], thread: [5,0,0] Assertion `idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"` failed.\n";
    let f = first(&format!("{gather}{engine}"));
    assert_eq!(f["rule"], "DA121", "{f}");
    assert_eq!(cause_ids(&f).first(), Some(&"token_id_ge_vocab"), "{f}");
}

#[test]
fn a_target_message_retyped_without_its_s_is_the_loss_with_its_value() {
    // A post's sentence quoting the message as `… out of bound`.
    let f = first("Training stops with Target 12 is out of bound\n");
    assert_eq!(f["rule"], "DA201", "{f}");
    assert_eq!(f["values"], serde_json::json!([12]), "{f}");
    // Not another word that starts the same.
    let f = first("Target 12 is out of boundary checks\n");
    assert_ne!(f["rule"], "DA201", "{f}");
}

#[test]
fn vs_codes_banner_gives_the_innermost_frame() {
    let f = first(
        "Exception has occurred: RuntimeError\nCUDA error: device-side assert triggered\n\
         CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n\
         \x20 File \"/home/u/proj/train.py\", line 120, in train_step\n    loss.item()\n\
         \x20 File \"/home/u/proj/train.py\", line 200, in <module>\n    train_step(batch)\n",
    );
    assert_eq!(f["noticed_at"]["line"], 120, "{f}");
    assert_eq!(f["noticed_at"]["function"], "train_step", "{f}");
}

#[test]
fn a_stack_listed_innermost_first_gives_the_innermost_frame() {
    let f = first(
        "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [10,0,0], thread: [64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n\
         Fatal Python error: Aborted\n\nCurrent thread 0x00007f3b (most recent call first):\n\
         \x20 File \"/home/u/model.py\", line 14 in forward\n\
         \x20 File \"/home/u/train.py\", line 90 in step\n\
         \x20 File \"/home/u/train.py\", line 120 in <module>\n",
    );
    let place = if f["location"].is_null() {
        &f["noticed_at"]
    } else {
        &f["location"]
    };
    assert_eq!(
        (place["file"].as_str(), place["line"].as_i64()),
        (Some("/home/u/model.py"), Some(14)),
        "{f}"
    );
    assert_eq!(place["function"], "forward", "{f}");
}

#[test]
fn nccls_rank_tag_names_the_rank_that_timed_out() {
    // torch 1.13 under torchrun: no launcher prefix, only NCCL's own `[Rank 1]`.
    let log = r#"../aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [91,0,0], thread: [64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.
../aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [91,0,0], thread: [65,0,0] Assertion `srcIndex < srcSelectDimSize` failed.
Traceback (most recent call last):
  File "/workspace/train.py", line 118, in <module>
    main()
  File "/workspace/train.py", line 102, in main
    loss = model(input_ids=batch["input_ids"], labels=batch["labels"]).loss
  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1194, in _call_impl
    return forward_call(*input, **kwargs)
RuntimeError: CUDA error: device-side assert triggered
CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2045, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800394 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.
[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.
terminate called after throwing an instance of 'std::runtime_error'
  what():  [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2045, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800394 milliseconds before timing out.
ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 1 (pid: 41237) of binary: /opt/conda/bin/python
"#;
    let v = common::explain_json(log);
    assert_eq!(v["findings"][0]["rule"], "DA101", "{v}");
    let timeout = v["fallout"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["kind"] == "nccl_timeout"))
        .unwrap_or_else(|| panic!("no NCCL timeout in the fallout: {v}"));
    assert_eq!(timeout["ranks"], serde_json::json!([1]), "{v}");
}

/// A traceback's frames, the last one the position embedding's.
const FRAMES: &str = "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 41, in <module>\n    logits = model(input_ids)\n  File \"/opt/venv/lib/python3.11/site-packages/transformers/models/bert/modeling_bert.py\", line 212, in forward\n    position_embeddings = self.position_embeddings(position_ids)\n";

#[test]
fn a_log_cut_inside_a_traceback_says_so_and_asks_for_the_error_line() {
    let report = common::explain_json(FRAMES);
    assert_eq!(report["exit_code"], 0, "nothing says a failure: {report:#}");
    let f = &report["findings"][0];
    assert_eq!(f["rule"], "DA005", "{report:#}");
    assert_eq!(f["severity"], "note", "{f:#}");
    assert_eq!(f["noticed_at"]["line"], 41, "the user's frame: {f:#}");
    // The frames bear on the causes as they do without a kernel line.
    assert_eq!(cause_ids(f)[0], "seq_len_gt_max_positions", "{f:#}");
    let first_step = f["fixes"][0].as_str().unwrap_or_default();
    assert!(first_step.contains("the whole output"), "{f:#}");
}

#[test]
fn a_traceback_with_its_error_line_or_followed_by_one_is_not_cut() {
    let whole = format!("{FRAMES}KeyError: 'labels'\n");
    assert_eq!(
        common::explain_json(&whole)["findings"],
        serde_json::json!([])
    );
    // A cut traceback earlier in the log, then a whole one: the log's last
    // traceback has its error line.
    let later = format!("{FRAMES}step 9\n{whole}");
    assert_eq!(
        common::explain_json(&later)["findings"],
        serde_json::json!([])
    );
    // faulthandler's stack has no error line by design.
    let dump = "Fatal Python error: Aborted\n\nCurrent thread 0x00007f3a (most recent call first):\n  File \"/home/u/train.py\", line 12 in step\n  File \"/home/u/train.py\", line 30 in <module>\n";
    assert_eq!(
        common::explain_json(dump)["findings"],
        serde_json::json!([])
    );
}

#[test]
fn colabs_folded_frames_line_is_no_error_line() {
    // Colab folds library frames into `N frames`; the error comes after them.
    let cell = "---------------------------------------------------------------------------\n\
                IndexError                                Traceback (most recent call last)\n\
                <ipython-input-7-3f2a> in <module>()\n      1 batch = tok(text)\n\
                ----> 2 out = model(**batch)\n\n11 frames\n";
    let cut = first(cell);
    assert_eq!(cut["rule"], "DA005", "{cut:#}");
    assert_eq!(cut["noticed_at"]["line"], 2, "{cut:#}");
    let whole = first(&format!(
        "{cell}/usr/local/lib/python3.7/dist-packages/torch/nn/functional.py in embedding(input, weight)\n\
         IndexError: index out of range in self\n"
    ));
    assert_eq!(whole["rule"], "DA101", "{whole:#}");
}

#[test]
fn a_cut_notebook_traceback_is_ranked_by_the_exception_its_header_names() {
    // The paste stops at Colab's fold; only the header says what was raised.
    let cell = |class: &str, code: &str| {
        format!(
            "---------------------------------------------------------------------------\n\
             {class:<42}Traceback (most recent call last)\n\
             <ipython-input-7-3f2a> in <module>()\n      1 batch = tok(text)\n\
             ----> 2 {code}\n\n11 frames\n"
        )
    };
    // PyTorch's IndexError is the CPU lookup's `index out of range in self`
    // far more often than anything else: the embedding's causes lead.
    let f = first(&cell("IndexError", "out = model(**batch)"));
    assert_eq!(f["rule"], "DA005", "{f:#}");
    assert_eq!(f["op_family"], "index_select", "{f:#}");
    let guess = f["evidence"]["op_guess"].as_str().unwrap_or_default();
    assert!(
        guess.starts_with("DA101") && guess.contains("IndexError"),
        "{f:#}"
    );
    assert_eq!(cause_ids(&f)[0], "seq_len_gt_max_positions", "{f:#}");
    // A RuntimeError is every op's: no guess, the common causes by prior.
    let f = first(&cell("RuntimeError", "out = step(**batch)"));
    assert!(f["evidence"].get("op_guess").is_none(), "{f:#}");
    assert_eq!(cause_ids(&f)[0], "label_ge_num_classes", "{f:#}");
    // A frame that names an op says more than the class.
    let f = first(&cell("IndexError", "loss = F.cross_entropy(out, y)"));
    let guess = f["evidence"]["op_guess"].as_str().unwrap_or_default();
    assert!(guess.starts_with("DA201"), "{f:#}");
}

#[test]
fn a_traceback_in_the_models_forward_ranks_the_lookups_and_one_in_a_loss_the_labels() {
    // No kernel line: where the traceback runs says which reads failed.
    let log = |code: &str| {
        format!(
            "Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    {code}\n\
             RuntimeError: CUDA error: device-side assert triggered\n"
        )
    };
    // Ids and positions are looked up in the forward pass.
    for code in [
        "outputs = model(input_ids)",
        "logits = self.model(batch)[0]",
    ] {
        let f = first(&log(code));
        assert_eq!(f["rule"], "DA001", "{f:#}");
        assert_eq!(
            cause_ids(&f)[..2],
            ["seq_len_gt_max_positions", "token_id_ge_vocab"],
            "{f:#}"
        );
        assert!(
            cause_why(&f, "token_id_ge_vocab").contains("forward pass"),
            "{f:#}"
        );
        // It speaks for both alike: finding the op comes first.
        let step = f["fixes"][0].as_str().unwrap_or_default();
        assert!(step.contains("devassert run"), "{f:#}");
    }
    // Labels are read by the loss, even one fed straight from the model.
    let f = first(&log("loss = criterion(model(x), labels)"));
    assert_eq!(cause_ids(&f)[0], "label_ge_num_classes", "{f:#}");
    assert!(
        cause_why(&f, "label_ge_num_classes").contains("loss call"),
        "{f:#}"
    );
    // A name that only ends in `model` calls no model; nothing then moves
    // the causes from their priors.
    let f = first(&log("x = self.load_model(path)"));
    assert_eq!(cause_ids(&f)[0], "label_ge_num_classes", "{f:#}");
    assert!(
        !cause_why(&f, "token_id_ge_vocab").contains("evidence"),
        "{f:#}"
    );
    // A paste cut inside a Hugging Face model's forward.
    let cut = "Traceback (most recent call last):\n  File \"run.py\", line 9, in <module>\n    out = bert(ids)\n\
               \x20 File \"/env/lib/python3.6/site-packages/torch/nn/modules/module.py\", line 541, in __call__\n    result = self.forward(*input, **kwargs)\n\
               \x20 File \"/env/lib/python3.6/site-packages/transformers/modeling_bert.py\", line 735, in forward\n";
    let f = first(cut);
    assert_eq!(f["rule"], "DA005", "{f:#}");
    assert_eq!(cause_ids(&f)[0], "seq_len_gt_max_positions", "{f:#}");
}

#[test]
fn an_assertion_pasted_alone_is_the_rule_whose_assertion_it_is() {
    // No path, kernel or coordinates: the assertion text alone names the op.
    let bare = "Assertion `t >= 0 && t < n_classes` failed\n";
    let f = first(&bare.repeat(3));
    assert_eq!(f["rule"], "DA201", "{f:#}");
    assert_eq!(f["evidence"]["count"], 3, "{f:#}");
    assert_eq!(cause_ids(&f)[0], "label_ge_num_classes", "{f:#}");
    // An assertion no rule owns is prose, not a device line.
    let prose = common::explain_json("Assertion `config.ready` failed\n");
    assert_eq!(prose["findings"], serde_json::json!([]), "{prose:#}");
    // Beside a whole device line, a bare one of another assertion is no
    // failure of its own (a torn line's fragment).
    let whole = "../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [7,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n";
    let report = common::explain_json(&format!("{bare}{whole}"));
    let rules: Vec<&str> = report["findings"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f["rule"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(rules, ["DA101"], "{report:#}");
}
