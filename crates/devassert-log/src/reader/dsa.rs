//! `TORCH_USE_CUDA_DSA` reports: the fields of the first failure, and a
//! group for its assertion when no device line printed it.

use super::dsa_report::{opens, DsaReport, KEYS};
use super::group::AssertGroup;
use super::state::Reader;
use super::thread_set::ThreadSet;
use crate::normalize::{normalize_assertion, normalize_kernel, normalize_path};
use crate::text::clip;
use std::collections::HashSet;

impl Reader {
    pub(super) fn dsa_line(&mut self, t: &str, rank: Option<i64>) {
        if opens(t) {
            self.dsa.open = true;
            return;
        }
        let Some((k, v)) = KEYS
            .iter()
            .enumerate()
            .find_map(|(k, key)| t.find(key).map(|i| (k, t[i + key.len()..].trim())))
        else {
            if self.dsa.open
                && !(t.starts_with("Assertion failure")
                    || t.starts_with("Backtrace")
                    || t.starts_with("Stream kernel")
                    || t.is_empty())
            {
                // Launch backtraces run on; any other line ends the report.
                self.dsa.open = t.starts_with("frame #")
                    || t.starts_with('#')
                    || t.starts_with("But at least")
                    || t.starts_with("Adjust");
            }
            return;
        };
        self.dsa.open = true;
        let pos = self.pos();
        let d = self.facts.dsa.get_or_insert_with(|| DsaReport {
            first: pos,
            rank,
            ..DsaReport::default()
        });
        let v = clip(v, 500);
        match k {
            0 => {
                d.failures += 1;
                if d.message.is_none() {
                    d.message = Some(v);
                }
            }
            _ if d.failures > 1 => {}
            1 => d.assert_file = d.assert_file.take().or(Some(v)),
            2 => d.device_function = d.device_function.take().or(Some(v)),
            3 => d.thread = d.thread.or_else(|| bracket_triple(&v)),
            4 => d.block = d.block.or_else(|| bracket_triple(&v)),
            5 => d.launch_file = d.launch_file.take().or(Some(v)),
            6 => d.launch_function = d.launch_function.take().or(Some(v)),
            7 => d.kernel = d.kernel.take().or(Some(v)),
            _ => {}
        }
    }

    /// A DSA report names the assertion even when no device line was printed.
    pub(super) fn dsa_group(&mut self) {
        let Some(d) = &self.facts.dsa else { return };
        let Some(msg) = &d.message else { return };
        let assertion = normalize_assertion(msg);
        if self.facts.groups.iter().any(|g| g.assertion == assertion) {
            return;
        }
        let (file, line) = match d.assert_file.as_deref().and_then(|f| f.rsplit_once(':')) {
            Some((f, l)) => (normalize_path(f), l.trim().parse().ok()),
            None => (
                d.assert_file
                    .as_deref()
                    .map(normalize_path)
                    .unwrap_or_default(),
                None,
            ),
        };
        let rank = d.rank.unwrap_or(-1);
        let mut g = AssertGroup {
            kernel: d.device_function.as_deref().map(normalize_kernel),
            raw_kernel: d.device_function.clone(),
            assertion,
            file,
            line,
            lines: d.failures.max(1),
            triples: ThreadSet::default(),
            blocks: HashSet::default(),
            last_block: None,
            ranks: d.rank.into_iter().collect(),
            first: d.first,
            first_time: None,
            rocm: false,
            printf_message: None,
            from_dsa: true,
            bare: false,
        };
        if let (Some(b), Some(t)) = (d.block, d.thread) {
            g.triples.insert(rank, b, t);
            g.blocks.insert((rank, b));
        }
        self.facts.groups.push(g);
    }
}

fn bracket_triple(v: &str) -> Option<[u32; 3]> {
    let inner = v.trim().strip_prefix('[')?.split(']').next()?;
    let mut out = [0u32; 3];
    for (i, p) in inner.split(',').take(3).enumerate() {
        out[i] = p.trim().parse().ok()?;
    }
    Some(out)
}
