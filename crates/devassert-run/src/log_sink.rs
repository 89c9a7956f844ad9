//! The run's log: every byte of the child's output written to the log file,
//! whole lines per stream so that the two streams never cut into each other's
//! lines, and read by the log reader on a thread of its own.
//!
//! The file gets exactly what the program wrote (no newline is added to an
//! unfinished last line). The reader never holds the output up: lines it
//! cannot take in time are skipped and counted, and the log on disk stays
//! complete for `devassert explain`. A reader that crashes stops reading
//! and is reported as an internal error naming the log and the line: never
//! as a log with nothing in it.

use crate::supervise::Stream;
use devassert_core::{Catalog, Command, Report};
use devassert_log::{InternalError, LogAnalyzer};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

pub struct LogSink {
    file: File,
    name: String,
    reader: Option<(Sender<Vec<u8>>, JoinHandle<ReaderResult>)>,
    /// Bytes handed to the reader and not yet read.
    queued: Arc<AtomicUsize>,
    pending: [Vec<u8>; 2],
    write_error: Option<std::io::Error>,
    skipped: u64,
}

/// What the reader's thread returns: the log's diagnosis, or its crash.
type ReaderResult = Result<Report, InternalError>;

/// How the log ended.
#[derive(Debug)]
pub struct LogEnd {
    pub report: Report,
    /// The log file is incomplete: the first write that failed.
    pub write_error: Option<std::io::Error>,
    /// Bytes of output the log reader skipped because it fell behind.
    pub skipped: u64,
    /// The log reader crashed: `report` holds nothing from the log.
    pub crash: Option<InternalError>,
}

/// A line longer than this (progress bars with `\r`) is written as it is.
const MAX_PENDING: usize = 64 * 1024;
/// Bytes of whole lines that may wait for the reader: what it has not read
/// when the command ends is read before the diagnosis, so this also bounds
/// that wait.
const READER_QUEUE: usize = 8 << 20;

impl LogSink {
    /// `name` is how the log is named in messages and the report.
    pub fn new(file: File, name: String) -> Self {
        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        let input = name.clone();
        let queued = Arc::new(AtomicUsize::new(0));
        let read = Arc::clone(&queued);
        let handle = std::thread::spawn(move || {
            let mut analyzer = LogAnalyzer::new(Catalog::builtin());
            analyzer.begin_input(&input);
            let mut crash = None;
            for bytes in rx {
                // After a crash the lines are still taken off the queue
                // (unread), so the output is never held up.
                if crash.is_none() {
                    crash = analyzer.feed_caught(&bytes).err();
                }
                read.fetch_sub(bytes.len(), Ordering::AcqRel);
            }
            match crash {
                Some(e) => Err(e),
                None => analyzer.finish_caught(),
            }
        });
        LogSink {
            file,
            name,
            reader: Some((tx, handle)),
            queued,
            pending: [Vec::new(), Vec::new()],
            write_error: None,
            skipped: 0,
        }
    }

    /// A chunk of one stream's output, as it came.
    pub fn feed(&mut self, stream: Stream, bytes: &[u8]) {
        let i = usize::from(stream == Stream::Stderr);
        let mut buf = std::mem::take(&mut self.pending[i]);
        buf.extend_from_slice(bytes);
        let cut = match memchr::memrchr(b'\n', &buf) {
            Some(p) => p + 1,
            None if buf.len() > MAX_PENDING => buf.len(),
            None => 0,
        };
        if cut > 0 {
            let rest = buf.split_off(cut);
            self.write(&buf);
            self.read(buf);
            buf = rest;
        }
        self.pending[i] = buf;
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.write_error.is_none() {
            if let Err(e) = self.file.write_all(bytes) {
                // Not eprintln!: a closed stderr is no reason to panic.
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "devassert: cannot write the log file {}: {e}",
                    self.name
                );
                self.write_error = Some(e);
            }
        }
    }

    fn read(&mut self, lines: Vec<u8>) {
        let Some((tx, _)) = &self.reader else { return };
        let n = lines.len();
        if self.queued.load(Ordering::Acquire) + n > READER_QUEUE {
            self.skipped += n as u64;
            return;
        }
        self.queued.fetch_add(n, Ordering::AcqRel);
        if tx.send(lines).is_err() {
            self.skipped += n as u64;
        }
    }

    /// Flush what is pending and return the log's diagnosis.
    pub fn finish(mut self) -> LogEnd {
        for i in 0..2 {
            let rest = std::mem::take(&mut self.pending[i]);
            if !rest.is_empty() {
                self.write(&rest);
                // The reader reads lines: an unfinished last one is ended
                // for it only (the file keeps the bytes as written).
                let mut line = rest;
                line.push(b'\n');
                self.read(line);
            }
        }
        if self.write_error.is_none() {
            if let Err(e) = self.file.flush() {
                self.write_error = Some(e);
            }
        }
        let read = match self.reader.take() {
            Some((tx, handle)) => {
                drop(tx);
                // Every panic of the reader is caught inside the thread;
                // should one escape, it is a crash all the same.
                handle.join().unwrap_or_else(|_| {
                    Err(InternalError {
                        input: self.name.clone(),
                        line: None,
                        message: "the log reader stopped".to_string(),
                        place: None,
                    })
                })
            }
            None => Ok(Report::new(Command::Run)),
        };
        let (report, crash) = match read {
            Ok(r) => (r, None),
            Err(e) => (Report::new(Command::Run), Some(e)),
        };
        LogEnd {
            report,
            write_error: self.write_error,
            skipped: self.skipped,
            crash,
        }
    }
}
