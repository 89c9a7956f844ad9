use super::super::repr::unescape_repr;
use super::*;

#[test]
fn ranks_from_file_names() {
    assert_eq!(rank_from_name("logs/rank3.log"), Some(3));
    assert_eq!(rank_from_name("log_rank_12.txt"), Some(12));
    assert_eq!(rank_from_name("/x/attempt_0/5/stderr.log"), Some(5));
    assert_eq!(rank_from_name("job.out"), None);
}

#[test]
fn repr_pieces() {
    let p = unescape_repr(r"ERROR - RuntimeError('CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported\nCompile with `TORCH_USE_CUDA_DSA`')").unwrap_or_default();
    assert_eq!(p.len(), 3);
    assert!(p[0].ends_with("device-side assert triggered"));
    assert_eq!(unescape_repr("plain line"), None);
}

#[test]
fn backslash_n_in_assertions_and_windows_paths_is_no_line_break() {
    let grouped = r#"/pytorch/aten/src/ATen/native/cuda/GroupMMCommon.cuh:55: prepare_grouped_gemm_data: block: [0,0,0], thread: [0,0,0] Assertion `delta >0 && "expected ofsets to be greater than 0\n"` failed."#;
    assert_eq!(unescape_repr(grouped), None);
    let windows = r"C:\actions-runner\_work\pytorch\pytorch\pytorch\aten\src\ATen\native\cuda\Loss.cu:250: block: [0,0,0], thread: [0,0,0] Assertion `t >= 0 && t < n_classes` failed.";
    assert_eq!(unescape_repr(windows), None);
    let markdown = r#"../aten/src/ATen/native/cuda/GroupMMCommon.cuh:55: prepare_grouped_gemm_data: block: [0,0,0], thread: [0,0,0] Assertion delta >0 && "expected ofsets to be greater than 0\n" failed."#;
    assert_eq!(unescape_repr(markdown), None);
    let nccl = r"D:\torch\csrc\distributed\c10d\symm_mem\ops\nccl_all_to_all_nd.cu:112: block: [0,0,0], thread: [0,0,0] Assertion `x` failed.";
    assert_eq!(unescape_repr(nccl), None);
    let frame = r#"File "C:\nn\x.py", line 3, in f"#;
    assert_eq!(unescape_repr(frame), None);
    // A repr that holds a device line still splits around it.
    let repr = r#"RuntimeError('x.cu:5: k: block: [0,0,0], thread: [0,0,0] Assertion `a && "b\n"` failed.\nCUDA error: device-side assert triggered')"#;
    let p = unescape_repr(repr).unwrap_or_default();
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(p[0].ends_with(r#""b\n"` failed."#), "{p:?}");
}

#[test]
fn windows_paths_keep_their_backslash_n() {
    let line = r"RuntimeError: Assertion `cur_target >= 0 && cur_target < n_classes' failed.  at c:\new-builder_3\win-wheel\pytorch\aten\src\thnn\generic/ClassNLLCriterion.c:93";
    assert_eq!(unescape_repr(line), None);
    let p = unescape_repr(
        r"Error('CUDA error at C:\w\aten\src\ATen\native\cuda\x.cu:12\nframe #0: c10::Error')",
    )
    .unwrap_or_default();
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(p[0].ends_with(r"native\cuda\x.cu:12"), "{p:?}");
}

proptest::proptest! {
    /// The first scan for `[` and `^` turns away no row that one of the
    /// three searches would find: a row is plain as searching for each
    /// needle says.
    #[test]
    fn plain_row_is_each_needle_searched(parts in proptest::collection::vec(proptest::sample::select(vec![
        "ESC[", "ESC", "[", "^M", "^", "M", ": [", ": ", "block: [1,0,0]", "\x1b", "\r", "x", " ", "é",
    ]), 0..8)) {
        let row = parts.concat();
        let row = row.as_bytes();
        let find = |needle: &[u8]| memchr::memmem::find(row, needle).is_some();
        let searched = memchr::memchr2(0x1b, b'\r', row).is_none()
            && !find(b"ESC[")
            && !find(b"^M")
            && !find(b": [");
        proptest::prop_assert_eq!(plain_row(row), searched);
    }
}
