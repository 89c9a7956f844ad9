//! Running the command: argv directly (no shell), in its own process group,
//! with SIGINT/SIGTERM/SIGHUP forwarded to the group and both output streams
//! passed through as they come while every chunk is also handed to the caller.

use crate::RunError;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc;

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

const FORWARD: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn forward(sig: libc::c_int) {
    // Only async-signal-safe calls here: an atomic load and killpg.
    let pg = CHILD_PGID.load(Ordering::SeqCst);
    PENDING.store(sig, Ordering::SeqCst);
    if pg > 0 {
        FORWARDED.store(true, Ordering::SeqCst);
        // SAFETY: killpg is async-signal-safe; pg is the child's group.
        unsafe {
            libc::killpg(pg, sig);
        }
    }
}

fn install_forwarding() {
    for sig in FORWARD {
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

fn pump(mut from: impl Read, stream: Stream, tx: mpsc::Sender<Event>) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut passthrough = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if passthrough {
            // A closed stdout (`| head`) stops the pass-through, not the run.
            let ok = match stream {
                Stream::Stdout => {
                    let mut out = std::io::stdout().lock();
                    out.write_all(&buf[..n]).and_then(|_| out.flush()).is_ok()
                }
                Stream::Stderr => {
                    let mut err = std::io::stderr().lock();
                    err.write_all(&buf[..n]).and_then(|_| err.flush()).is_ok()
                }
            };
            passthrough = ok;
        }
        if tx.send(Event::Chunk(stream, buf[..n].to_vec())).is_err() {
            break;
        }
    }
}

/// Run the command to its end. `on_output` sees every chunk of each stream in
/// order (after it was passed through). Returns how the child ended.
pub fn run(
    cfg: &RunConfig,
    mut on_output: impl FnMut(Stream, &[u8]),
) -> Result<ExitStatus, RunError> {
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
    if foreground {
        // SAFETY: runs in the forked child before exec; only async-signal-safe calls.
        unsafe {
            cmd.pre_exec(|| {
                set_foreground(libc::getpid());
                Ok(())
            });
        }
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
    let (tx, rx) = mpsc::channel();
    let mut threads = Vec::new();
    if let Some(out) = child.stdout.take() {
        let tx = tx.clone();
        threads.push(std::thread::spawn(move || pump(out, Stream::Stdout, tx)));
    }
    if let Some(err) = child.stderr.take() {
        let tx = tx.clone();
        threads.push(std::thread::spawn(move || pump(err, Stream::Stderr, tx)));
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
    for ev in rx {
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
            }
        }
    }
    for t in threads {
        let _ = t.join();
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
    Ok(match (st.code(), st.signal()) {
        (Some(c), _) => ExitStatus::Code(c),
        (None, Some(s)) => ExitStatus::Signal(s),
        (None, None) => ExitStatus::Code(1),
    })
}
