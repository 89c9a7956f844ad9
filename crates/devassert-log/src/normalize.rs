//! Printed log text → the normalised form the catalog matches: a source
//! path from PyTorch's root on, a device function's bare name, an assertion
//! with its whitespace collapsed.

use devassert_core::catalog::PYTORCH_ROOTS;

/// The stable part of a printed source path: from `aten/`, `c10/`,
/// `torch/csrc/`, `caffe2/` or PyTorch's `third_party/` kernels on, with `/` separators; any
/// other path is returned with `/` separators only.
pub fn normalize_path(raw: &str) -> String {
    let p = raw.trim().replace('\\', "/");
    let mut best: Option<usize> = None;
    for root in PYTORCH_ROOTS {
        // The root must start the path or follow a separator (`/pytorch/aten/…`, `../aten/…`).
        let mut from = 0;
        while let Some(i) = p[from..].find(root) {
            let at = from + i;
            if at == 0 || p.as_bytes()[at - 1] == b'/' {
                best = Some(best.map_or(at, |b: usize| b.min(at)));
                break;
            }
            from = at + 1;
        }
    }
    match best {
        Some(i) => p[i..].to_string(),
        None => p,
    }
}

/// The bare name of a printed device function: pretty signatures
/// (`void indexSelectSmallIndex(TensorInfo<T, I>, …) [with T = float, …]`),
/// qualified names (`at::native::<unnamed>::renormRowsL1`) and spelled-out
/// lambdas (`lambda [](int)->auto::operator()(int)->auto`) lose everything
/// but the name.
pub fn normalize_kernel(raw: &str) -> String {
    let s = raw.trim();
    let s = s.split(" [with ").next().unwrap_or(s);
    if s.contains("operator()") {
        return "operator()".to_string();
    }
    // Cut the parameter list: the first '(' outside template brackets.
    let mut depth = 0i32;
    let mut cut = s.len();
    for (i, ch) in s.char_indices() {
        match ch {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth <= 0 => {
                cut = i;
                break;
            }
            _ => {}
        }
    }
    let head = s[..cut].trim_end();
    // Drop the return type and qualifiers: the last whitespace-separated token
    // outside template brackets, then the last `::` component.
    let mut depth = 0i32;
    let mut start = 0;
    for (i, ch) in head.char_indices() {
        match ch {
            '<' => depth += 1,
            '>' => depth -= 1,
            ' ' | '*' | '&' if depth <= 0 => start = i + 1,
            _ => {}
        }
    }
    let name = &head[start..];
    let name = name.rsplit("::").next().unwrap_or(name);
    // Template arguments on the name itself are not part of it.
    let name = name.split('<').next().unwrap_or(name);
    if name.is_empty() {
        s.to_string()
    } else {
        name.to_string()
    }
}

/// Whitespace runs collapsed to one space, ends trimmed.
pub fn normalize_assertion(raw: &str) -> String {
    raw.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use devassert_core::catalog::is_pytorch_file;

    #[test]
    fn paths_are_cut_at_the_pytorch_root() {
        assert_eq!(
            normalize_path("/pytorch/aten/src/ATen/native/cuda/Indexing.cu"),
            "aten/src/ATen/native/cuda/Indexing.cu"
        );
        assert_eq!(
            normalize_path("../aten/src/ATen/native/cuda/Loss.cu"),
            "aten/src/ATen/native/cuda/Loss.cu"
        );
        assert_eq!(
            normalize_path(
                r"C:\actions-runner\_work\pytorch\pytorch\pytorch\aten\src\ATen\native\cuda\IndexKernelUtils.cu"
            ),
            "aten/src/ATen/native/cuda/IndexKernelUtils.cu"
        );
        assert_eq!(
            normalize_path("/opt/conda/conda-bld/pytorch_1518244421288/work/torch/lib/THC/x.cuh"),
            "/opt/conda/conda-bld/pytorch_1518244421288/work/torch/lib/THC/x.cuh"
        );
        assert_eq!(
            normalize_path("/home/me/ext/my_kernel.cu"),
            "/home/me/ext/my_kernel.cu"
        );
        assert!(!is_pytorch_file("/home/me/ext/my_kernel.cu"));
    }

    #[test]
    fn kernel_names_lose_signatures() {
        assert_eq!(
            normalize_kernel("indexSelectLargeIndex"),
            "indexSelectLargeIndex"
        );
        assert_eq!(
            normalize_kernel("void indexSelectSmallIndex(TensorInfo<T, IndexType>, TensorInfo<long, IndexType>, int, int, IndexType, long) [with T = float, IndexType = unsigned int, DstDim = 2, SrcDim = 2, IdxDim = -2]"),
            "indexSelectSmallIndex"
        );
        assert_eq!(
            normalize_kernel(
                "Acctype bce_functor<Dtype, Acctype>::operator()(Tuple) [with Tuple = t]"
            ),
            "operator()"
        );
        assert_eq!(
            normalize_kernel("lambda [](int)->auto::operator()(int)->auto"),
            "operator()"
        );
        assert_eq!(
            normalize_kernel(
                "int at::native::<unnamed>::binarySearchForMultinomial(scalar_t *, scal"
            ),
            "binarySearchForMultinomial"
        );
        assert_eq!(
            normalize_kernel(
                "void at::native::<unnamed>::EmbeddingBag_updateOutputKernel(long *, lo"
            ),
            "EmbeddingBag_updateOutputKernel"
        );
        assert_eq!(
            normalize_kernel(
                "IndexType indexToOffset(const TensorInfo<T, IndexType> &, long, IndexT"
            ),
            "indexToOffset"
        );
        assert_eq!(normalize_kernel("unknown"), "unknown");
    }

    #[test]
    fn assertion_whitespace_collapses() {
        assert_eq!(
            normalize_assertion("  t >= 0  &&\tt < n_classes "),
            "t >= 0 && t < n_classes"
        );
    }
}
