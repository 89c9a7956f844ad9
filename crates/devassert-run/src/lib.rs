//! devassert-run: the supervisor behind `devassert run` and the Python guard
//! it injects into every Python process of the run.
//!
//! - [`guard`]: the embedded `python/devassert/` package and the generated
//!   `sitecustomize.py` that installs it, written to a private directory.
//! - [`supervise`]: runs the command in its own process group, forwards
//!   signals, passes both output streams through and hands every chunk to the
//!   caller (log file, log reader).
//! - [`collect`]: reads the findings the guards wrote and merges repeats.
//! - [`log_sink`]: keeps the output in the log file and reads it as it comes.
//! - [`merge`]: one diagnosis from the guards' findings and the log's.

pub mod collect;
pub mod guard;
pub mod log_sink;
pub mod merge;
pub mod supervise;

pub use collect::{collect_findings, Collected};
pub use guard::{GuardDir, GuardLevel};
pub use log_sink::LogSink;
pub use merge::{merge, relativize};
pub use supervise::{run, ExitStatus, RunConfig, Stream};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot create the private directory {path}: {source}")]
    PrivateDir {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write the guard into {path}: {source}")]
    WriteGuard {
        path: String,
        source: std::io::Error,
    },
    #[error("no command given (usage: devassert run [OPTIONS] -- CMD [ARGS...])")]
    NoCommand,
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("waiting for {program} failed: {source}")]
    Wait {
        program: String,
        source: std::io::Error,
    },
}
