use super::coords::numbers;
use super::*;

fn one(line: &str) -> DeviceLine<'_> {
    let v = parse_all(line);
    assert_eq!(v.len(), 1, "{line}: {v:?}");
    v.into_iter().next().unwrap_or_else(|| unreachable!())
}

/// The byte parser gives what `str::parse` of the trimmed parts gives.
fn numbers_by_parse(inner: &str) -> Option<[u32; 3]> {
    let mut v = [0u32; 3];
    let parts: Vec<&str> = inner.split(',').collect();
    if parts.len() > 3 {
        return None;
    }
    for (i, p) in parts.iter().enumerate() {
        v[i] = p.trim().parse().ok()?;
    }
    Some(v)
}

#[test]
fn coordinates_parse_as_numbers() {
    let cases = [
        "0,0,0",
        "12, 3 ,4",
        "7",
        "1,2",
        "",
        ",",
        "1,,2",
        "1,2,3,4",
        " 5 ",
        "1 2,3",
        "4294967295,0,0",
        "4294967296,0,0",
        "00012,0,0",
        "+5,0,0",
        "5\t,0,0",
        "x",
    ];
    for c in cases {
        assert_eq!(numbers(c), numbers_by_parse(c), "{c:?}");
        if c.bytes()
            .all(|b| b.is_ascii_digit() || b == b',' || b == b' ')
        {
            assert_eq!(number_bytes(c.as_bytes()), numbers_by_parse(c), "{c:?}");
        }
    }
}

proptest::proptest! {
    #[test]
    fn byte_numbers_agree_with_parse(s in "[0-9, ]{0,24}") {
        proptest::prop_assert_eq!(number_bytes(s.as_bytes()), numbers_by_parse(&s));
        proptest::prop_assert_eq!(numbers(&s), numbers_by_parse(&s));
    }

    /// The one-pass span and numbers are the span's end and the numbers
    /// of the span, None where either is (numbers past `u32`, a fourth
    /// part, spaces inside a number, no `]`, other bytes).
    #[test]
    fn numbers_at_is_the_span_and_its_numbers(
        s in "[0-9, \\]x]{0,24}|[0-9]{9,11}(,[0-9]{1,11}){0,3}\\]",
        at in 0usize..26,
    ) {
        let b = s.as_bytes();
        let two_passes = numbers_span(b, at).and_then(|r| Some((r.end, number_bytes(&b[r])?)));
        proptest::prop_assert_eq!(numbers_at(b, at), two_passes);
    }

    /// A walk told whether the line holds ROCm's marker ends its pieces
    /// where a walk that searches for it does, on lines of CUDA and ROCm
    /// assertions, their pieces and debris glued in any order.
    #[test]
    fn a_walk_told_of_rocm_ends_where_one_that_searches_does(
        parts in proptest::collection::vec(proptest::sample::select(vec![
            ASSERT_LINE,
            ROCM_LINE,
            "Assertion `",
            "Device-side assertion `x' failed",
            "` failed.",
            "' failed",
            "failed: `c`: m",
            " Assertion failed: `c`",
            "**",
            "text ",
        ]), 0..12),
    ) {
        let line = parts.concat();
        let walk = |mut ends: Ends| {
            let (mut at, mut out) = (0, Vec::new());
            while let Some(e) = ends.next(&line, at).filter(|_| at < line.len()) {
                out.push(e);
                at = e;
            }
            out
        };
        let rocm = has_rocm(line.as_bytes());
        proptest::prop_assert_eq!(walk(Ends::knowing(rocm)), walk(Ends::default()));
        proptest::prop_assert_eq!(parse_last_with(&line, Ends::knowing(rocm)), parse_last(&line));
        proptest::prop_assert_eq!(parse_last(&line), parse_all(&line).pop());
    }
}

proptest::proptest! {
    /// A piece whose one assertion closes at its end (`closes_at_end`)
    /// ends there for the walk when other text follows that does not start
    /// with debris: what counting a glued line from its pieces alone
    /// relies on (`reader::glued`). Pieces of every quoting, the printf
    /// form, debris and none; text after of every kind.
    #[test]
    fn a_piece_that_closes_at_its_end_ends_there_glued_to_more(
        head in proptest::sample::select(vec!["", "a.cu:1: k: block: [1,0,0], thread: [2,0,0] ", "x "]),
        body in proptest::sample::select(vec!["`x", "x", "`x` failed y", "**`x", "failed: `c`: m", "failed: c", "", "`"]),
        close in proptest::sample::select(vec!["` failed", "' failed", "`** failed", " failed", ""]),
        debris in proptest::sample::select(vec!["", ".", "**.", " "]),
        rest in proptest::collection::vec(proptest::sample::select(vec![
            ASSERT_LINE,
            ROCM_LINE,
            "Assertion `",
            "` failed.",
            "' failed",
            "failed: `c`: m",
            ".",
            "*",
            "text ",
        ]), 1..5),
    ) {
        let piece = format!("{head}Assertion {body}{close}{debris}");
        let rest = rest.concat();
        let line = format!("{piece}{rest}");
        if closes_at_end(&piece, 0) && piece.matches("ssertion ").count() == 1 && !rest.starts_with(['.', '*']) {
            let mut ends = Ends::knowing(has_rocm(line.as_bytes()));
            proptest::prop_assert_eq!(ends.next(&line, 0), Some(piece.len()));
        }
    }
}

#[test]
fn a_piece_closes_at_its_end_only_without_text_after_its_debris() {
    let piece = "a.cu:1: k: block: [1,0,0], thread: [2,0,0] Assertion `x` failed.";
    assert!(closes_at_end(piece, 0));
    assert!(closes_at_end(&format!("{piece}**"), 0));
    assert!(!closes_at_end(&format!("{piece} at x"), 0));
    // The printf form runs to the end of its line, wherever that is.
    assert!(!closes_at_end(
        "k: block: [1,0,0], thread: [2,0,0]: Assertion failed: `x`: m",
        0
    ));
    // ROCm's marker is not CUDA's.
    assert!(!closes_at_end(ROCM_LINE, 0));
}

const ROCM_LINE: &str = "/r/Loss.hip:9: k: Device-side assertion `t < n' failed.";

#[test]
fn a_kernel_name_without_its_path_is_kept() {
    let d = one(": nll_loss2d_forward_kernel: block: [3,0,0], thread: [674,0,0] Assertion `t >= 0 && t < n_classes` failed.");
    assert_eq!(d.file, None);
    assert_eq!(d.function, Some("nll_loss2d_forward_kernel"));
    let d = one("indexSelectLargeIndex: block: [1,0,0], thread: [2,0,0] Assertion `srcIndex < srcSelectDimSize` failed.");
    assert_eq!(d.function, Some("indexSelectLargeIndex"));
    let d = one(
        "ERROR: block: [1,0,0], thread: [2,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
    );
    assert_eq!(d.function, None);
}

#[test]
fn cuda_line() {
    let d = one("../aten/src/ATen/native/cuda/Indexing.cu:1292: indexSelectLargeIndex: block: [371,0,0], thread: [116,0,0] Assertion `srcIndex < srcSelectDimSize` failed.");
    assert_eq!(d.file, Some("../aten/src/ATen/native/cuda/Indexing.cu"));
    assert_eq!(d.line, Some(1292));
    assert_eq!(d.function, Some("indexSelectLargeIndex"));
    assert_eq!(d.block, Some([371, 0, 0]));
    assert_eq!(d.thread, Some([116, 0, 0]));
    assert_eq!(d.assertion, "srcIndex < srcSelectDimSize");
}

#[test]
fn windows_rocm_inductor_xpu_printf() {
    let d = one(
        r"C:\actions-runner\_work\pytorch\IndexKernel.cu:92: block: [94,0,0], thread: [32,0,0] Assertion `index >= -sizes[i] && index < sizes[i] && ``index out of bounds``` failed.",
    );
    assert_eq!(d.function, None);
    assert_eq!(d.line, Some(92));
    let d = one("/opt/rocm/pytorch/aten/src/ATen/native/hip/Loss.hip:250: nll_loss_forward_reduce_cuda_kernel_2d: Device-side assertion `t >= 0 && t < n_classes' failed.");
    assert!(d.rocm);
    assert_eq!(d.assertion, "t >= 0 && t < n_classes");
    assert_eq!(d.function, Some("nll_loss_forward_reduce_cuda_kernel_2d"));
    let d = one("unknown:0: unknown: block: [0,0,0], thread: [8,0,0] Assertion `index out of bounds: 0 <= tmp4 < 32000` failed.");
    assert_eq!(
        (d.file, d.line, d.function),
        (Some("unknown"), Some(0), Some("unknown"))
    );
    let d = one("/x/Indexing.cpp:16: vectorized_gather_kernel: global id: [1,0,0], local id: [3,0,0] Assertion `ind >=0` failed.");
    assert_eq!(d.thread, Some([3, 0, 0]));
    let d = one("[CUDA_KERNEL_ASSERT] /pytorch/aten/src/ATen/native/cuda/Repeat.cu:20: compute_cuda_kernel: block: [0,0,0], thread: [0,0,0]: Assertion failed: `result_size == cumsum_ptr[size - 1]`: Invalid input! In `repeat_interleave`, the `output_size` argument (5) must be the same as the sum of the elements in the `repeats` tensor (7).");
    assert_eq!(d.assertion, "result_size == cumsum_ptr[size - 1]");
    assert!(d.printf_message.is_some_and(|m| m.contains("(7)")));
}

#[test]
fn backticks_inside_eaten_or_bold() {
    let d = one("/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu:112: _assert_async_cuda_kernel: block: [0,0,0], thread: [0,0,0] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.");
    assert_eq!(
        d.assertion,
        "probability tensor contains either `inf`, `nan` or element < 0"
    );
    let d = one("/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: k: block: [0,0,0], thread: [725,0,0] Assertion t >= 0 && t < n_classes failed");
    assert_eq!(d.assertion, "t >= 0 && t < n_classes");
    let d = one("/pytorch/aten/src/ATen/native/cuda/Loss.cu:111: operator(): block: [62,0,0], thread: [0,0,0] Assertion **`input_val >= zero && input_val <= one` failed**.");
    assert_eq!(d.assertion, "input_val >= zero && input_val <= one");
    let d = one("/pytorch/aten/src/ATen/native/cuda/Loss.cu:111: operator(): block: [62,0,0], thread: [2,0,0] Assertion `**input_val >= zero && input_val <= one` failed.**");
    assert_eq!(d.assertion, "input_val >= zero && input_val <= one");
}

#[test]
fn place_after_the_assertion() {
    let d = one("RuntimeError: Assertion `cur_target >= 0 && cur_target < n_classes' failed.  at /pytorch/aten/src/THNN/generic/SpatialClassNLLCriterion.c:111");
    assert_eq!(
        d.file,
        Some("/pytorch/aten/src/THNN/generic/SpatialClassNLLCriterion.c")
    );
    assert_eq!(d.line, Some(111));
    assert_eq!(d.assertion, "cur_target >= 0 && cur_target < n_classes");
    let d = one("Assertion `a < b` failed. at the end of the day");
    assert_eq!(d.file, None);
}

#[test]
fn glued_lines_and_prefixes() {
    let v = parse_all("../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [6,0,0], thread: [39../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [58,0,0], thread: [11,0,0] Assertion `srcIndex < srcSelectDimSize` failed.,0,0] Assertion `srcIndex < srcSelectDimSize` failed.");
    assert_eq!(v.len(), 2);
    assert_eq!(v[0].block, Some([58, 0, 0]));
    assert_eq!(
        v[0].file.map(crate::normalize::normalize_path).as_deref(),
        Some("aten/src/ATen/native/cuda/Indexing.cu")
    );
    assert_eq!(v[1].file, None);
    let d = one("#####words_embeddings  [1,0]<stderr>:/tmp/pip/aten/src/THC/THCTensorIndex.cu:362: void indexSelectLargeIndex(TensorInfo<T, IndexType>, long) [with T = c10::Half, IndexType = unsigned int]: block: [66,0,0], thread: [96,0,0] Assertion `srcIndex < srcSelectDimSize` failed.");
    assert_eq!(d.rank, Some(0));
    assert_eq!(d.file, Some("/tmp/pip/aten/src/THC/THCTensorIndex.cu"));
    assert!(d
        .function
        .is_some_and(|f| f.starts_with("void indexSelectLargeIndex(")));
    assert!(parse_all("AssertionError: boom").is_empty());
    assert!(parse_last("AssertionError: boom").is_none());
}

#[test]
fn many_glued_assertions_each_close_at_their_own_end() {
    let one = |t: usize, q: &str| {
        format!("/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: k: block: [0,0,0], thread: [{t},0,0] Assertion {q}t >= 0 && t < n_classes{q} failed.")
    };
    let mut line: String = (0..300).map(|t| one(t, "`")).collect();
    line.push_str(&one(300, "`"));
    line.push_str(&one(301, ""));
    let v = parse_all(&line);
    assert_eq!(v.len(), 302);
    assert!(
        v.iter().all(|d| d.assertion == "t >= 0 && t < n_classes"),
        "{:?}",
        v.last()
    );
    assert_eq!(v[299].thread, Some([299, 0, 0]));
    assert_eq!(v[301].thread, Some([301, 0, 0]));
    // The pieces a glued line is read in end where parse_all's do.
    let mut ends = Ends::default();
    let mut at = 0;
    let mut pieces = Vec::new();
    while let Some(e) = ends.next(&line, at) {
        pieces.push(&line[at..e]);
        at = e;
    }
    assert_eq!(pieces.len(), 302);
    let each: Vec<DeviceLine<'_>> = pieces.iter().flat_map(|p| parse_all(p)).collect();
    assert_eq!(each, v);
}

#[test]
fn the_last_assertion_alone() {
    let glued = "../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [6,0,0], thread: [39../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [58,0,0], thread: [11,0,0] Assertion `srcIndex < srcSelectDimSize` failed.,0,0] Assertion `srcIndex < srcSelectDimSize` failed.";
    let thnn = "RuntimeError: Assertion `cur_target >= 0 && cur_target < n_classes' failed.  at /x/ClassNLLCriterion.c:93";
    let two: String = [ASSERT_LINE, ASSERT_LINE, "trailing text"].concat();
    for line in [
        glued,
        thnn,
        ASSERT_LINE,
        two.as_str(),
        "no assertion",
        "Assertion `open",
    ] {
        assert_eq!(parse_last(line), parse_all(line).pop(), "{line}");
    }
}

const ASSERT_LINE: &str = "/p/aten/src/ATen/native/cuda/Loss.cu:250: k: block: [0,0,0], thread: [1,0,0] Assertion `t < n` failed.";

#[test]
fn coordinates_of_a_thread_line() {
    let l = b"[rank0]:/x/Indexing.cu:1422: k: block: [371,0,0], thread: [116, 0, 0] Assertion `a < b` failed.";
    let (b, t) = coordinate_spans(l).unwrap_or((0..0, 0..0));
    assert_eq!(&l[b], b"371,0,0");
    assert_eq!(&l[t], b"116, 0, 0");
    // Two glued lines, or a thread before the block: not one line's coordinates.
    assert!(
        coordinate_spans(b"block: [1,0,0], thread: [2,0,0] block: [3,0,0], thread: [4").is_none()
    );
    assert!(coordinate_spans(b"thread: [2,0,0] block: [1,0,0], thread: [2,0,0]").is_none());
    assert!(coordinate_spans(b"block: [x], thread: [2,0,0]").is_none());
    assert_eq!(
        without_coordinates("k: block: [255,0,0], thread: [3,0,0] Assertion `t < 255` failed."),
        "k: block: [], thread: [] Assertion `t < 255` failed."
    );
    assert_eq!(without_coordinates("labels 255"), "labels 255");
}

#[test]
fn dangling_paths() {
    assert_eq!(dangling_path("/pytorch/aten/src/ATen/native/cuda/IndexKernelUtils.cu    return forward_call(*args, **kwargs)"), Some("/pytorch/aten/src/ATen/native/cuda/IndexKernelUtils.cu"));
    assert_eq!(
        dangling_path(r"Error during training: C:\a\ScatterGatherKernel.cu:367:"),
        Some(r"C:\a\ScatterGatherKernel.cu:367:")
    );
    assert!(continues_path(
        ":16: vectorized_gather_kernel: block: [1024,0,0]"
    ));
    assert!(continues_path(
        "block: [4935,0,0], thread: [121,0,0] Assertion x failed."
    ));
    assert!(!continues_path("x: block: [1]"));
    assert_eq!(
        dangling_path("see x.cu_old/a.cuh\tand b/c.cu"),
        Some("x.cu_old/a.cuh")
    );
    assert_eq!(dangling_path("a.cu b/c.cuda d/e.cuh"), Some("d/e.cuh"));
    let glued = "/p/aten/src/ATen/native/cuda/Loss.cu:250: k: block: [0,0,0], thread: [1,0,0] Assertion `t < n` failed.".repeat(50);
    assert_eq!(dangling_path(&glued), None);
}

/// Every multi-byte whitespace character Rust knows (U+0085, U+00A0,
/// U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
fn unicode_spaces() -> Vec<char> {
    (0x80..=0x10ffff)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace())
        .collect()
}

/// Issue 41: the token before `:LINE:` ends at a multi-byte space
/// (`file_and_line`, through `parse_all`): the same place as after an ASCII one.
#[test]
fn a_path_after_a_multi_byte_space() {
    assert_eq!(unicode_spaces().len(), 19);
    for sp in unicode_spaces() {
        let line = format!("[rank0]:{sp}/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1553: indexSelectLargeIndex: block: [7,0,0], thread: [64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.");
        let d = one(&line);
        assert_eq!(
            d.file,
            Some("/pytorch/aten/src/ATen/native/cuda/Indexing.cu"),
            "{sp:?}"
        );
        assert_eq!(
            (d.line, d.function),
            (Some(1553), Some("indexSelectLargeIndex"))
        );
        // The issue's 23-byte input: the space is the whole token before it.
        let short = format!("{sp}:5:Assertion s failed");
        assert_eq!(
            parse_all(&short),
            parse_all(" :5:Assertion s failed"),
            "{sp:?}"
        );
    }
}

/// `dangling_path`'s two token starts: `FILE:LINE:` at the end, and a
/// `.cu` path followed by other output.
#[test]
fn a_dangling_path_after_a_multi_byte_space() {
    for sp in unicode_spaces() {
        let end = format!("Error during training:{sp}C:\\a\\ScatterGatherKernel.cu:367:");
        assert_eq!(
            dangling_path(&end),
            Some("C:\\a\\ScatterGatherKernel.cu:367:"),
            "{sp:?}"
        );
        let mid = format!("x{sp}/p/aten/IndexKernelUtils.cu{sp}return f()");
        assert_eq!(
            dangling_path(&mid),
            Some("/p/aten/IndexKernelUtils.cu"),
            "{sp:?}"
        );
    }
    assert_eq!(last_token_start("a\u{3000}b"), 4);
    assert_eq!(last_token_start("ab"), 0);
    assert_eq!(last_token_start("ab "), 3);
}
