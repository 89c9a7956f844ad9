//! devassert-run: the supervisor behind `devassert run` and the Python guard
//! it injects into every Python process of the run.
//!
//! - [`guard`]: the embedded `python/devassert/` package and the generated
//!   `sitecustomize.py` that installs it, written to the run's folder.
//! - [`runs`]: one folder per run under the cache dir, the oldest pruned.
//! - [`supervise`]: runs the command in its own process group, forwards
//!   signals, passes both output streams through and hands every chunk to the
//!   caller (log file, log reader).
//! - [`collect`]: reads the findings the guards wrote and merges repeats.
//! - [`caught`]: the exit records that say which findings the program caught.
//! - [`log_sink`]: keeps the output in the log file and reads it as it comes
//!   (on its own thread: the reader never holds the output up).
//! - [`merge`]: one diagnosis from the guards' findings and the log's.
//! - [`rerun`]: a device-side assert the guard did not stop, and the exact
//!   command that finds its line.
//! - [`error`]: why a run could not start or finish.

pub mod caught;
pub mod collect;
pub mod error;
pub mod guard;
pub mod log_sink;
pub mod merge;
pub mod private;
pub mod rerun;
pub mod runs;
pub mod supervise;

pub use collect::{collect_findings, Collected};
pub use error::RunError;
pub use guard::{GuardDir, GuardLevel};
pub use log_sink::{LogEnd, LogSink};
pub use merge::{merge, relativize};
pub use supervise::{run, Ended, ExitStatus, RunConfig, Stream};
