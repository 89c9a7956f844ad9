//! Running the command: argv directly (no shell), in its own process group,
//! with the terminating signals a user or a scheduler sends forwarded to the
//! group and both output streams passed through as they come while every chunk
//! is also handed to the caller.
//!
//! The child never outlives devassert: it gets SIGKILL when devassert dies,
//! however it dies (Linux `PR_SET_PDEATHSIG`; on other systems only the
//! forwarded signals reach it). A closed stdout downstream (`| head`) closes
//! the child's pipe too, so the child sees the broken pipe it would see
//! without devassert. Once the child has exited, its output is drained for
//! at most [`DRAIN`]: a background process it left holding the pipes does not
//! keep the run waiting.

use crate::error::RunError;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long output is still read after the child exited.
pub const DRAIN: Duration = Duration::from_secs(2);
/// Chunks queued between the pass-through threads and the caller: a bound on
/// memory (64 KiB each) that a slow disk, never the log reader, can reach.
const QUEUE: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// What to run and the environment changes to make for it.
#[derive(Debug, Clone, Default)]
pub struct RunConfig {
    pub argv: Vec<OsString>,
    pub set_env: Vec<(OsString, OsString)>,
    /// Pass the child's stdout to our stderr: our stdout then carries only
    /// devassert's own machine output (`run --format json`), never the
    /// child's lines. The log still tells the two streams apart.
    pub stdout_to_stderr: bool,
}

/// How the child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Code(i32),
    Signal(i32),
}

impl ExitStatus {
    /// The shell convention: the exit code, or 128 + N for signal N.
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Code(c) => c,
            ExitStatus::Signal(s) => 128 + s,
        }
    }
}

/// The child's process group, read by the signal handler (0 before the spawn).
static CHILD_PGID: AtomicI32 = AtomicI32::new(0);
/// A signal that arrived before the child existed, or the last one forwarded.
static PENDING: AtomicI32 = AtomicI32::new(0);
static FORWARDED: AtomicBool = AtomicBool::new(false);

/// Signals that end a run: forwarded, and the child's group is killed once
/// the child has exited (no straggling workers).
const INTERRUPT: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];
/// Signals a program or a scheduler uses to talk to the job (Slurm sends
/// SIGUSR1 before a time limit): forwarded only. Left alone they would
/// kill devassert and, with it, the child.
const NOTIFY: [libc::c_int; 3] = [libc::SIGUSR1, libc::SIGUSR2, libc::SIGALRM];

extern "C" fn forward(sig: libc::c_int) {
    // Only async-signal-safe calls here: atomics and killpg.
    let pg = CHILD_PGID.load(Ordering::SeqCst);
    PENDING.store(sig, Ordering::SeqCst);
    if pg > 0 {
        if INTERRUPT.contains(&sig) {
            FORWARDED.store(true, Ordering::SeqCst);
        }
        // SAFETY: killpg is async-signal-safe; pg is the child's group.
        unsafe {
            libc::killpg(pg, sig);
        }
    }
}

fn install_forwarding() {
    for sig in INTERRUPT.into_iter().chain(NOTIFY) {
        // SAFETY: a plain handler that only touches atomics and calls killpg.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = forward as extern "C" fn(libc::c_int) as usize;
            act.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
}

/// Whether stdin is a terminal whose foreground group is ours: then the child's
/// group is made the foreground group, so it can read the terminal and Ctrl-C
/// reaches it directly.
fn owns_terminal() -> bool {
    // SAFETY: plain queries on fd 0.
    unsafe { libc::isatty(0) == 1 && libc::tcgetpgrp(0) == libc::getpgrp() }
}

/// Make `pgrp` the terminal's foreground group; SIGTTOU is ignored meanwhile
/// because a background group asking for this would otherwise be stopped.
fn set_foreground(pgrp: libc::pid_t) {
    // SAFETY: signal and tcsetpgrp on fd 0; restores the previous disposition.
    unsafe {
        let old = libc::signal(libc::SIGTTOU, libc::SIG_IGN);
        libc::tcsetpgrp(0, pgrp);
        libc::signal(libc::SIGTTOU, old);
    }
}

enum Event {
    Chunk(Stream, Vec<u8>),
    Exit(std::io::Result<std::process::ExitStatus>),
}

/// Pass `stream`'s chunks through to `to` (our stdout or stderr) and to the caller.
fn pump(mut from: impl Read, stream: Stream, to: Stream, tx: mpsc::SyncSender<Event>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let passed = match to {
            Stream::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(&buf[..n]).and_then(|_| out.flush())
            }
            Stream::Stderr => {
                let mut err = std::io::stderr().lock();
                err.write_all(&buf[..n]).and_then(|_| err.flush())
            }
        };
        if tx.send(Event::Chunk(stream, buf[..n].to_vec())).is_err() {
            break;
        }
        if matches!(&passed, Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe) {
            // Nobody reads our end any more (`| head`): close the child's
            // pipe, so that its next write fails as it would without us.
            break;
        }
    }
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    pub status: ExitStatus,
    /// The child exited but something it started still held its output open
    /// after [`DRAIN`]: what that process wrote later is not in the log.
    pub undrained: bool,
}

/// Run the command to its end. `on_output` sees every chunk of each stream in
/// order (after it was passed through). Returns how the child ended.
pub fn run(cfg: &RunConfig, mut on_output: impl FnMut(Stream, &[u8])) -> Result<Ended, RunError> {
    let Some((program, args)) = cfg.argv.split_first() else {
        return Err(RunError::NoCommand);
    };
    let name = program.to_string_lossy().into_owned();
    install_forwarding();
    let foreground = owns_terminal();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in &cfg.set_env {
        cmd.env(k, v);
    }
    // The child must not inherit our forwarding handlers' effect: exec resets
    // caught signals to their defaults, so nothing to undo here.
    // SAFETY: getpid before the fork; the closure runs in the forked child
    // before exec and makes only async-signal-safe calls.
    let parent = unsafe { libc::getpid() };
    unsafe {
        cmd.pre_exec(move || {
            die_with_parent(parent);
            if foreground {
                set_foreground(libc::getpid());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|source| RunError::Spawn {
        program: name.clone(),
        source,
    })?;
    let pid = child.id() as i32;
    CHILD_PGID.store(pid, Ordering::SeqCst);
    if foreground {
        set_foreground(pid);
    }
    let early = PENDING.swap(0, Ordering::SeqCst);
    if early != 0 {
        FORWARDED.store(true, Ordering::SeqCst);
        // SAFETY: signalling the child's own group.
        unsafe {
            libc::killpg(pid, early);
        }
    }
    let (tx, rx) = mpsc::sync_channel(QUEUE);
    let mut threads = Vec::new();
    if let Some(out) = child.stdout.take() {
        let tx = tx.clone();
        let to = if cfg.stdout_to_stderr {
            Stream::Stderr
        } else {
            Stream::Stdout
        };
        threads.push(std::thread::spawn(move || {
            pump(out, Stream::Stdout, to, tx)
        }));
    }
    if let Some(err) = child.stderr.take() {
        let tx = tx.clone();
        threads.push(std::thread::spawn(move || {
            pump(err, Stream::Stderr, Stream::Stderr, tx)
        }));
    }
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let status = child.wait();
            let _ = tx.send(Event::Exit(status));
        });
    }
    drop(tx);
    let mut status = None;
    // Until the child exits, wait as long as it runs; then drain until this.
    let mut drain_until: Option<Instant> = None;
    let mut undrained = false;
    loop {
        let ev = match drain_until {
            None => match rx.recv() {
                Ok(ev) => ev,
                Err(_) => break,
            },
            Some(deadline) => {
                match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Ok(ev) => ev,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        undrained = true;
                        break;
                    }
                }
            }
        };
        match ev {
            Event::Chunk(s, bytes) => on_output(s, &bytes),
            Event::Exit(st) => {
                if FORWARDED.load(Ordering::SeqCst) {
                    // The user interrupted the run: leave no stragglers
                    // (workers, ranks) of the child's group behind.
                    // SAFETY: signalling the child's own group; ESRCH is fine.
                    unsafe {
                        libc::killpg(pid, libc::SIGKILL);
                    }
                }
                status = Some(st);
                drain_until = Some(Instant::now() + DRAIN);
            }
        }
    }
    if !undrained {
        for t in threads {
            let _ = t.join();
        }
    }
    CHILD_PGID.store(0, Ordering::SeqCst);
    if foreground {
        // SAFETY: query of our own group.
        set_foreground(unsafe { libc::getpgrp() });
    }
    let st = match status {
        Some(Ok(st)) => st,
        Some(Err(source)) => {
            return Err(RunError::Wait {
                program: name,
                source,
            })
        }
        None => {
            return Err(RunError::Wait {
                program: name,
                source: std::io::Error::other("the child's status was lost"),
            })
        }
    };
    let status = match (st.code(), st.signal()) {
        (Some(c), _) => ExitStatus::Code(c),
        (None, Some(s)) => ExitStatus::Signal(s),
        (None, None) => ExitStatus::Code(1),
    };
    Ok(Ended { status, undrained })
}

/// In the forked child: SIGKILL when devassert dies, and no start at all if
/// it died already (between the fork and this call).
fn die_with_parent(parent: libc::pid_t) {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl, getppid and _exit are async-signal-safe.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
        if libc::getppid() != parent {
            libc::_exit(137);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
}
