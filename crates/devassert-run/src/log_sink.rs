//! The run's log: every byte of the child's output written to the log file
//! and read by the log reader, whole lines per stream so that the two
//! streams never cut into each other's lines.

use crate::supervise::Stream;
use devassert_core::{Catalog, Report};
use devassert_log::LogAnalyzer;
use std::fs::File;
use std::io::Write;

pub struct LogSink {
    file: File,
    name: String,
    analyzer: LogAnalyzer,
    pending: [Vec<u8>; 2],
    write_failed: bool,
}

/// A line longer than this (progress bars with `\r`) is written as it is.
const MAX_PENDING: usize = 64 * 1024;

impl LogSink {
    /// `name` is how the log is named in messages and the report.
    pub fn new(file: File, name: String) -> Self {
        let mut analyzer = LogAnalyzer::new(Catalog::builtin());
        analyzer.begin_input(&name);
        LogSink {
            file,
            name,
            analyzer,
            pending: [Vec::new(), Vec::new()],
            write_failed: false,
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
            self.write(&buf[..cut]);
            buf.drain(..cut);
        }
        self.pending[i] = buf;
    }

    fn write(&mut self, bytes: &[u8]) {
        self.analyzer.feed(bytes);
        if !self.write_failed && self.file.write_all(bytes).is_err() {
            self.write_failed = true;
            eprintln!("devassert: cannot write the log file {}", self.name);
        }
    }

    /// Flush what is pending (an unfinished last line gets its newline) and
    /// return the log's diagnosis.
    pub fn finish(mut self) -> Report {
        for i in 0..2 {
            let mut rest = std::mem::take(&mut self.pending[i]);
            if !rest.is_empty() {
                rest.push(b'\n');
                self.write(&rest);
            }
        }
        let _ = self.file.flush();
        self.analyzer.finish()
    }
}
