//! Why a run could not start or finish: each error names the path or the
//! program, and the cause.

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot create the run folder {path}: {source}")]
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
