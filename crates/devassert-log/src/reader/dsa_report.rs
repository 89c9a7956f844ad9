//! What the reader keeps of a `TORCH_USE_CUDA_DSA` report, and whether
//! one is being read (the reading is in `dsa`).

use super::pos::Pos;

/// `TORCH_USE_CUDA_DSA` report fields (the first failure of the report).
#[derive(Debug, Clone, Default)]
pub struct DsaReport {
    pub message: Option<String>,
    pub assert_file: Option<String>,
    pub device_function: Option<String>,
    pub thread: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub launch_file: Option<String>,
    pub launch_function: Option<String>,
    pub kernel: Option<String>,
    pub failures: u64,
    pub first: Pos,
    pub rank: Option<i64>,
}

/// Whether a report is being read (its lines may carry no key).
#[derive(Default)]
pub(super) struct DsaState {
    pub(super) open: bool,
}
