use super::*;

const LINE: &str = "/pytorch/aten/src/THC/THCTensorIndex.cu:362: void indexSelectLargeIndex(TensorInfo<T, IndexType>, TensorInfo<T, IndexType>, TensorInfo<long, IndexType>, int, int, IndexType, IndexType, long) [with T = float, IndexType = unsigned int, DstDim = 2, SrcDim = 2, IdxDim = -2, IndexIsMajor = true]: block: [12,0,0], thread: [7,0,0] Assertion `srcIndex < srcSelectDimSize` failed.";

fn rows(s: &str, w: usize) -> Vec<Vec<u8>> {
    s.as_bytes().chunks(w).map(<[u8]>::to_vec).collect()
}

/// The rows read as the reader does: waiting on a cut row, else looking back.
fn first_unwrapped(rows: &[Vec<u8>]) -> String {
    let mut waiting: Option<(Kind, String, usize)> = None;
    for (i, r) in rows.iter().enumerate() {
        let cur = row(r);
        if let Some((kind, text, n)) = waiting.take() {
            match resume(kind, &text, n, &cur) {
                Resume::Joined(t) => {
                    return backward(&rows[..i - n], &t).unwrap_or(t);
                }
                Resume::More(t) => {
                    waiting = Some((kind, t, n + 1));
                    continue;
                }
                Resume::Apart => {}
            }
        }
        if let Some(t) = backward(&rows[..i], &cur) {
            return t;
        }
        if let Some(kind) = cut(&cur, false) {
            waiting = Some((kind, cur.into_owned(), 1));
        }
    }
    String::new()
}

#[test]
fn a_wrapped_line_is_whole_again() {
    for w in [80, 100, 120] {
        let r = rows(LINE, w);
        let t = first_unwrapped(&r);
        let d = device_line::parse_all(&t);
        assert_eq!(d.len(), 1, "{w}: {t}");
        assert_eq!(d[0].file, Some("/pytorch/aten/src/THC/THCTensorIndex.cu"));
        assert_eq!(d[0].assertion, "srcIndex < srcSelectDimSize");
    }
}

#[test]
fn padded_rows_break_at_a_space() {
    let a = format!(
        "{:<80}",
        "x.cu:9: k: block: [1,0,0], thread: [2,0,0] Assertion"
    );
    assert_eq!(cut(&a, false), Some(Kind::Device));
    let Resume::Joined(t) = resume(Kind::Device, &a, 1, "`t < n` failed.") else {
        panic!("not joined");
    };
    assert_eq!(device_line::parse_all(&t)[0].assertion, "t < n");
}

#[test]
fn prefixed_rows_go_on_in_unprefixed_ones() {
    let p = "(VllmWorker rank=0 pid=31877) ERROR 05-14 10:22:33 [multiproc_executor.py:671] RuntimeError: CUDA error: device-side as";
    assert!(prefixed(p));
    assert!(!prefixed("sert triggered"));
    let Resume::Joined(t) = resume(Kind::Prefixed(columns(p)), p, 1, "sert triggered") else {
        panic!("not joined");
    };
    assert!(t.ends_with("device-side assert triggered"), "{t}");
    // The next line of the same process carries its own prefix.
    assert!(matches!(
        resume(
            Kind::Prefixed(columns(p)),
            p,
            1,
            "(VllmWorker rank=0 pid=31877) ERROR 05-14 10:22:33 [multiproc_executor.py:671] x"
        ),
        Resume::Apart
    ));
    // A frame behind a prefix is still waited on until it is whole.
    let f = "[rank1]:   File \"/usr/local/lib/python3.10/dist-packages/torch/nn/modules/loss.py\", line ";
    assert_eq!(cut(f, false), Some(Kind::Frame));
    assert!(matches!(
        resume(Kind::Frame, f, 1, "1179, in forward"),
        Resume::Joined(_)
    ));
}

#[test]
fn traceback_rows() {
    let f = "  File \"/usr/local/lib/python3.10/dist-packages/torch/nn/modules/loss.py\", line ";
    assert_eq!(cut(f, false), Some(Kind::Frame));
    let Resume::Joined(t) = resume(Kind::Frame, f, 1, "1779, in forward") else {
        panic!("not joined");
    };
    let fr = traceback::parse_frame(t.trim());
    assert_eq!(
        fr.map(|f| (f.line, f.function)),
        Some((1779, "forward".to_string()))
    );
    let code = "    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.bl";
    assert_eq!(cut(code, true), Some(Kind::Code));
    assert_eq!(cut(code, false), None);
    assert!(matches!(
        resume(Kind::Code, code, 1, "ank, self.reduction,"),
        Resume::Joined(_)
    ));
    assert!(matches!(
        resume(
            Kind::Code,
            code,
            1,
            "RuntimeError: CUDA error: device-side assert triggered"
        ),
        Resume::Apart
    ));
    // IPython's context line before its arrow line and next frame.
    let context =
        "      6     batch = {k: v.to(\"cuda\") for k, v in batch.items() if k != \"idx\"}";
    assert_eq!(cut(context, true), Some(Kind::Code));
    for next in [
        "----> 7     out = model(**batch)",
        "File /opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py:1518, in f()",
        "Cell In[12], line 7",
    ] {
        assert!(
            matches!(resume(Kind::Code, context, 1, next), Resume::Apart),
            "{next}"
        );
    }
}

#[test]
fn a_place_on_the_next_row() {
    let a = "AssertHandler::printMessage: Assertion `srcIndex < srcSelectDimSize` failed";
    assert_eq!(cut(a, false), Some(Kind::Placeless));
    let Resume::Joined(t) = resume(
        Kind::Placeless,
        a,
        1,
        "/x/aten/src/ATen/native/xpu/sycl/Indexing.cpp:1234",
    ) else {
        panic!("not joined");
    };
    assert_eq!(device_line::parse_all(&t)[0].line, Some(1234));
    assert!(matches!(
        resume(Kind::Placeless, a, 1, "Aborted (core dumped)"),
        Resume::Apart
    ));
}

#[test]
fn whole_lines_are_left_alone() {
    let l = "../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [71,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.";
    assert_eq!(cut(l, false), None);
    assert_eq!(backward(&[l.as_bytes()], l), None);
    // A short row is not a wrapped one.
    assert_eq!(cut("x.cu:9: k: block: [1", false), None);
}

#[test]
fn rows_before_cross_regions() {
    let earlier = vec![b"a".to_vec(), b"b".to_vec()];
    let r = rows_before(b"c\nd\n", 2, &earlier);
    assert_eq!(r, vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    let mut e = earlier.clone();
    keep_last(b"c\nd\n", &mut e);
    assert_eq!(
        e,
        vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]
    );
}

#[test]
fn a_row_wider_than_the_prefixed_row_is_not_its_rest() {
    let p = "[rank0]: RuntimeError: CUDA error: device-side assert triggered, compile with TORC";
    let wide =
        "H_USE_CUDA_DSA to enable device-side assertions and a row longer than the prefixed one";
    assert!(columns(wide) > columns(p));
    assert!(matches!(
        resume(Kind::Prefixed(columns(p)), p, 1, wide),
        Resume::Apart
    ));
    // Escape codes take no columns, wide characters two.
    assert_eq!(columns("\u{1b}[31mab\u{1b}[0m"), 2);
    assert_eq!(columns("日本"), 4);
    let narrower = &wide[..20];
    assert!(matches!(
        resume(Kind::Prefixed(columns(p)), p, 1, narrower),
        Resume::Joined(_)
    ));
}
