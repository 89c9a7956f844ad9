//! Host-side error texts: the device-side assert error in all its wrappers
//! (`RuntimeError: CUDA error: …`, `torch.AcceleratorError`, `HIP error`,
//! `THCudaCheck FAIL … error=59`, `cuda runtime error (59)`, `Triton Error
//! [CUDA]`, `CUDA error after cudaEventDestroy`), the separate root causes
//! (illegal memory access, unspecified launch failure) and the classes of
//! fallout that follow a broken CUDA context.

use aho_corasick::AhoCorasick;
use std::sync::OnceLock;

/// What one line of host output says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostKind {
    /// The device-side assert error itself.
    DeviceAssert,
    /// `an illegal memory access was encountered`.
    IllegalAccess,
    /// `unspecified launch failure` (what ROCm's kernel `abort()` surfaces as).
    LaunchFailure,
    /// The HSA runtime's queue abort (ROCm).
    HsaAbort,
    Cublas,
    Cudnn,
    ReduceSync,
    FatalAbort,
    Terminate,
    NcclTimeout,
    NcclError,
    ChildFailed,
}

impl HostKind {
    /// The fallout `kind` string of the JSON contract.
    pub fn fallout_kind(self) -> &'static str {
        match self {
            HostKind::DeviceAssert => "repeated_error",
            HostKind::IllegalAccess => "illegal_memory_access",
            HostKind::LaunchFailure => "launch_failure",
            HostKind::HsaAbort => "hsa_abort",
            HostKind::Cublas => "cublas",
            HostKind::Cudnn => "cudnn",
            HostKind::ReduceSync => "reduce_failed",
            HostKind::FatalAbort => "abort",
            HostKind::Terminate => "terminate",
            HostKind::NcclTimeout => "nccl_timeout",
            HostKind::NcclError => "nccl_error",
            HostKind::ChildFailed => "child_failed",
        }
    }
}

/// Literal → kind, most specific first: one line gets the kind of its
/// earliest listed literal.
const TABLE: &[(&str, HostKind)] = &[
    (
        "Watchdog caught collective operation timeout",
        HostKind::NcclTimeout,
    ),
    (
        "watchdog thread terminated with exception",
        HostKind::NcclTimeout,
    ),
    (
        "Some NCCL operations have failed or timed out",
        HostKind::NcclTimeout,
    ),
    ("terminate called after throwing", HostKind::Terminate),
    ("Fatal Python error: Aborted", HostKind::FatalAbort),
    ("ChildFailedError", HostKind::ChildFailed),
    ("CUBLAS_STATUS_", HostKind::Cublas),
    ("CUDNN_STATUS_", HostKind::Cudnn),
    ("cuDNN error", HostKind::Cudnn),
    ("reduce failed to synchronize", HostKind::ReduceSync),
    ("ncclUnhandledCudaError", HostKind::NcclError),
    ("unhandled cuda error", HostKind::NcclError),
    ("device-side assert triggered", HostKind::DeviceAssert),
    ("cudaErrorAssert", HostKind::DeviceAssert),
    ("cuda runtime error (59)", HostKind::DeviceAssert),
    ("cuda runtime error (710)", HostKind::DeviceAssert),
    (
        "an illegal memory access was encountered",
        HostKind::IllegalAccess,
    ),
    ("cudaErrorIllegalAddress", HostKind::IllegalAccess),
    // compute-sanitizer's / cuda-memcheck's report of an out-of-bounds access.
    ("Invalid __global__ ", HostKind::IllegalAccess),
    ("Invalid __shared__ ", HostKind::IllegalAccess),
    ("Invalid __local__ ", HostKind::IllegalAccess),
    ("unspecified launch failure", HostKind::LaunchFailure),
    ("hipErrorLaunchFailure", HostKind::LaunchFailure),
    ("HSA_STATUS_ERROR_EXCEPTION", HostKind::HsaAbort),
];

fn matcher() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| {
        // The literals are fixed and valid; building cannot fail.
        AhoCorasick::new(TABLE.iter().map(|(l, _)| *l))
            .unwrap_or_else(|e| unreachable!("host error literals: {e}"))
    })
}

/// The kind of a line, and whether the line also carries the device-side
/// assert text (a watchdog or `terminate` line can wrap it).
pub fn classify(line: &str) -> Option<(HostKind, bool)> {
    use crate::device_line::{searcher, Searcher};
    static THC: Searcher = searcher!(b"THCudaCheck FAIL");
    // The `Search for `cudaErrorAssert' in …` hint belongs to the error line above it.
    if line.starts_with("Search for `") {
        return None;
    }
    let mut best: Option<usize> = None;
    let mut device = false;
    for m in matcher().find_overlapping_iter(line) {
        let i = m.pattern().as_usize();
        if TABLE[i].1 == HostKind::DeviceAssert {
            device = true;
        }
        best = Some(best.map_or(i, |b| b.min(i)));
    }
    // THC's `THCudaCheck FAIL file=… line=… error=59 : device-side assert triggered`
    // is caught above; older ones print only the code.
    if best.is_none()
        && THC.find(line.as_bytes()).is_some()
        && (line.contains("error=59") || line.contains("error=710"))
    {
        return Some((HostKind::DeviceAssert, true));
    }
    best.map(|i| (TABLE[i].1, device))
}

/// Whether [`classify`] reads numbers in `line` (`cuda runtime error (59)`,
/// THC's `error=59`): elsewhere its answer is the same whatever the
/// line's numbers (its other literals hold no digit).
pub fn reads_codes(line: &str) -> bool {
    use crate::device_line::{searcher, Searcher};
    static RUNTIME: Searcher = searcher!(b"runtime error (");
    static CODE: Searcher = searcher!(b"error=");
    RUNTIME.find(line.as_bytes()).is_some() || CODE.find(line.as_bytes()).is_some()
}

/// The message hints that tell how the traceback was taken.
pub fn is_async_hint(line: &str) -> bool {
    line.contains("might be asynchronously reported")
}

pub fn is_dsa_hint(line: &str) -> bool {
    line.contains("TORCH_USE_CUDA_DSA")
        || line.contains("TORCH_USE_HIP_DSA")
        || line.contains("Device-side assertion tracking was not enabled")
}

/// The log shows the program ran with blocking launches (an environment
/// dump, the command line, a config print) — not the "consider passing" hint.
pub fn sets_launch_blocking(line: &str) -> bool {
    if line.contains("consider passing") {
        return false;
    }
    for key in ["CUDA_LAUNCH_BLOCKING", "AMD_SERIALIZE_KERNEL"] {
        let mut rest = line;
        while let Some(i) = rest.find(key) {
            let after = rest[i + key.len()..].trim_start_matches(['"', '\'', ']', ' ']);
            let after = after
                .strip_prefix('=')
                .or_else(|| after.strip_prefix(':'))
                .map(|a| a.trim_start_matches(['"', '\'', ' ']));
            if let Some(a) = after {
                if a.starts_with('1') || a.starts_with('3') {
                    return true;
                }
            }
            rest = &rest[i + key.len()..];
        }
    }
    false
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_code_the_table_reads_is_named_by_reads_codes() {
        // The reader keeps lines by shape on the promise of `reads_codes`.
        for (literal, _) in super::TABLE {
            if literal.bytes().any(|b| b.is_ascii_digit()) {
                assert!(super::reads_codes(literal), "{literal}");
            }
        }
        assert!(super::reads_codes(
            "THCudaCheck FAIL file=x line=3 error=59 : x"
        ));
    }

    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(
            classify("RuntimeError: CUDA error: device-side assert triggered"),
            Some((HostKind::DeviceAssert, true))
        );
        assert_eq!(
            classify("torch.AcceleratorError: CUDA error: device-side assert triggered"),
            Some((HostKind::DeviceAssert, true))
        );
        assert_eq!(classify("THCudaCheck FAIL file=/x/THCReduceAll.cuh line=339 error=59 : device-side assert triggered"), Some((HostKind::DeviceAssert, true)));
        assert_eq!(
            classify("THCudaCheck FAIL file=/x/THCReduceAll.cuh line=339 error=59"),
            Some((HostKind::DeviceAssert, true))
        );
        assert_eq!(
            classify(
                "RuntimeError: cuda runtime error (59) : device-side assert triggered at /x.cu:1"
            ),
            Some((HostKind::DeviceAssert, true))
        );
        assert_eq!(
            classify("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`"),
            Some((HostKind::Cublas, false))
        );
        assert_eq!(classify("[PG 0 Rank 0] Process group watchdog thread terminated with exception: CUDA error: device-side assert triggered"), Some((HostKind::NcclTimeout, true)));
        assert_eq!(
            classify("RuntimeError: CUDA error: an illegal memory access was encountered"),
            Some((HostKind::IllegalAccess, false))
        );
        assert_eq!(classify("step 5 loss 0.3"), None);
    }

    #[test]
    fn launch_blocking() {
        assert!(sets_launch_blocking(
            "+ CUDA_LAUNCH_BLOCKING=1 python train.py"
        ));
        assert!(sets_launch_blocking(
            "os.environ['CUDA_LAUNCH_BLOCKING'] = '1'"
        ));
        assert!(!sets_launch_blocking(
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1."
        ));
        assert!(!sets_launch_blocking("CUDA_LAUNCH_BLOCKING=0"));
    }
}
