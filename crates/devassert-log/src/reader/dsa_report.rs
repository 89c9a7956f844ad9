//! What the reader keeps of a `TORCH_USE_CUDA_DSA` report, whether one is
//! being read, and the lines that make one (the reading is in `dsa`).

use super::pos::Pos;

/// The fields of a DSA report.
pub(super) const KEYS: [&str; 9] = [
    "GPU assertion failure message = ",
    "File containing assertion = ",
    "Device function containing assertion = ",
    "Thread ID that failed assertion = ",
    "Block ID that failed assertion = ",
    "File containing kernel launch = ",
    "Function containing kernel launch = ",
    "Name of kernel launched that led to failure = ",
    "Device that launched kernel = ",
];

/// A line that starts a DSA report.
pub(super) fn opens(t: &str) -> bool {
    t.contains("CUDA device-side assertion failures were found")
        || t.starts_with("Looking for device-side assertion failure information")
}

/// Whether `dsa_line` does anything with a line while no report is open.
pub(super) fn starts_or_fills(t: &str) -> bool {
    opens(t) || KEYS.iter().any(|k| t.contains(k))
}

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
