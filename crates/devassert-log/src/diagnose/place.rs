//! Which traceback tells the failure's place, and what its frames say:
//! the traceback that reported it, its chained predecessor, whether it was
//! taken with blocking launches, the op its code names.

use crate::ranks::RankSet;
use crate::reader::{Facts, Pos};
use crate::traceback::{Frame, Traceback};
use devassert_core::{Catalog, CompiledRule, SourceLocation};

/// The rule the catalog's op guesses find for a failure with no kernel
/// line, with what it was read from. A memory checker's faulting kernel
/// (`kernel`) is asked first: the traceback shows only where the error
/// surfaced. Then the code above the error line whose frame the log lacks
/// (`code_above`: the innermost frame's), then the frames, innermost first.
pub(super) fn op_guess<'c>(
    catalog: &'c Catalog,
    tb: Option<&Traceback>,
    code_above: Option<&str>,
    kernel: Option<&str>,
) -> Option<(&'c CompiledRule, String)> {
    if let Some((rule, k)) = kernel.and_then(|k| catalog.guess_op(k).map(|r| (r, k))) {
        let from = format!(
            "from the kernel the memory checker found out of bounds, {}",
            kernel_name(k)
        );
        return Some((rule, from));
    }
    let unconfirmed = |at: &str| format!("from the code at {at}; no kernel line confirms it");
    if let Some(rule) = code_above.and_then(|c| catalog.guess_op(c)) {
        let at = "the line above the error line (its frame line is not in the log)";
        return Some((rule, unconfirmed(at)));
    }
    let tb = tb?;
    let by_frame = tb.frames.iter().rev().find_map(|f| {
        frame_guess(catalog, f).map(|rule| (rule, unconfirmed(&format!("{}:{}", f.file, f.line))))
    });
    // A paste cut before its error line whose header still names the class.
    let by_class = || {
        let class = tb
            .header_exception
            .as_deref()
            .filter(|_| tb.exception.is_none())?;
        let rule = catalog.guess_op_by_exception(class)?;
        Some((rule, format!("from the exception's class in the traceback's header, {class}; the error line is not in the log")))
    };
    by_frame.or_else(by_class)
}

/// The most of a memory checker's kernel name shown, as of a kernel
/// line's (`reader/groups.rs`): the frame is untrusted text of any length.
const MAX_KERNEL: usize = 300;

/// A kernel's bare name from a memory checker's frame text:
/// `void at::native::<unnamed>::ctc_loss_log_alpha_gpu_kernel<float, long>(T1 *, …)+0x11d0`
/// → `ctc_loss_log_alpha_gpu_kernel`, at most [`MAX_KERNEL`] characters.
pub(super) fn kernel_name(frame: &str) -> String {
    let mut s = frame.split('(').next().unwrap_or(frame).trim_end();
    // Drop the template arguments at the end, nested ones included.
    if s.ends_with('>') {
        let mut depth = 0usize;
        for (i, c) in s.char_indices().rev() {
            match c {
                '>' => depth += 1,
                '<' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        s = &s[..i];
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let start = s.rfind([':', ' ', '/']).map_or(0, |i| i + 1);
    let name = Some(&s[start..]).filter(|n| !n.is_empty()).unwrap_or(frame);
    crate::text::clip(name, MAX_KERNEL)
}

/// The code line above the error line at `error` whose frame line the log
/// lacks, if the reader kept one.
pub(super) fn code_above(facts: &Facts, error: Option<Pos>) -> Option<&str> {
    let error = error?;
    facts
        .code_above
        .iter()
        .find(|c| c.error == error)
        .map(|c| c.code.as_str())
}

/// The rule a frame's code names: its code lines, then its function name.
fn frame_guess<'c>(catalog: &'c Catalog, f: &Frame) -> Option<&'c CompiledRule> {
    f.code
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(f.function.as_str()))
        .find_map(|t| catalog.guess_op(t))
}

/// The rule that stated a CPU message two rules share (`index N is out of
/// bounds for dimension d with size S`: advanced indexing and gather), when
/// the frame that raised it names the other op: Python raises a CPU error
/// at the line that called the op, so only that innermost frame's code
/// counts (an outer frame may call anything): the code above the error
/// line when its frame line was cut (`code_above`).
pub(super) fn cpu_raiser<'c>(
    catalog: &'c Catalog,
    tb: Option<&Traceback>,
    code_above: Option<&str>,
    stated_by: &CompiledRule,
    message: &str,
) -> Option<&'c CompiledRule> {
    let other = |r: &&CompiledRule| r.id != stated_by.id && r.states_cpu_message(message);
    if let Some(code) = code_above {
        return catalog.guess_op(code).filter(other);
    }
    let tb = tb?;
    let raising = if tb.innermost_first {
        tb.frames.first()
    } else {
        tb.frames.last()
    }?;
    frame_guess(catalog, raising).filter(other)
}

/// The device-related words a traceback's exception carries.
pub(super) fn device_related(tb: &Traceback) -> u8 {
    let text: Vec<&str> = tb.text().collect();
    let has = |k: &str| text.iter().any(|l| l.contains(k));
    if has("device-side assert")
        || has("illegal memory access")
        || has("unspecified launch failure")
        || has("cuda runtime error")
    {
        2
    } else if has("CUDA")
        || has("HIP error")
        || has("cuda")
        || has("AcceleratorError")
        || has("CUBLAS")
        || has("NCCL")
    {
        1
    } else {
        0
    }
}

/// The traceback that reported the failure: device-related first, the root's
/// rank preferred, then the earliest.
pub(super) fn pick_traceback<'a>(
    facts: &'a Facts,
    ranks: &RankSet,
    cpu_text: Option<&str>,
) -> Option<&'a Traceback> {
    if let Some(text) = cpu_text {
        if let Some(tb) = facts.tracebacks.iter().find(|tb| {
            tb.exception
                .as_deref()
                .is_some_and(|e| e.contains(text) || text.contains(e))
        }) {
            return Some(tb);
        }
    }
    let score = |tb: &Traceback| {
        let rank_ok = ranks.is_empty() || tb.rank.is_none_or(|r| ranks.contains(r));
        (device_related(tb), rank_ok)
    };
    let best = facts.tracebacks.iter().map(score).max()?;
    if best.0 == 0 && cpu_text.is_none() {
        // A stack dumped innermost first with no exception line of its own
        // (faulthandler on the crash) is the failure's.
        return facts
            .tracebacks
            .iter()
            .find(|tb| tb.innermost_first && tb.exception.is_none());
    }
    facts.tracebacks.iter().find(|tb| score(tb) == best)
}

/// A chained traceback's predecessor (its frames are evidence too).
pub(super) fn chain_before<'a>(facts: &'a Facts, tb: &Traceback) -> Option<&'a Traceback> {
    if !tb.chained {
        return None;
    }
    facts
        .tracebacks
        .iter()
        .filter(|t| t.rank == tb.rank && (t.input, t.line) < (tb.input, tb.line))
        .max_by_key(|t| (t.input, t.line))
}

/// Whether the traceback shows where the failure happened: taken with
/// blocking launches (no asynchronous hint but the DSA / `Search for` line
/// the same releases print), or the log shows CUDA_LAUNCH_BLOCKING=1.
pub(super) fn synchronous(facts: &Facts, tb: &Traceback) -> bool {
    if facts.launch_blocking {
        return true;
    }
    let lines: Vec<&str> = tb.text().collect();
    let async_hint = lines.iter().any(|l| crate::errors::is_async_hint(l));
    let suffix = lines
        .iter()
        .any(|l| crate::errors::is_dsa_hint(l) || l.starts_with("Search for `"));
    !async_hint && suffix
}

pub(super) fn loc(f: &Frame) -> SourceLocation {
    SourceLocation {
        file: f.file.clone(),
        line: f.line,
        function: (!f.function.is_empty()).then(|| f.function.clone()),
        code: f.code.clone(),
    }
}

/// Whether a code line with no frame to say its file reads as PyTorch's
/// own wrapper of an op (`return torch.embedding(weight, input,
/// padding_idx, …)`, nn.Embedding's `return F.embedding(input, self.weight,
/// self.padding_idx, …)`): a return of a `torch.` / `F.` / `_VF.` call. Like
/// PyTorch's frames (see [`frames_text`]) it is the same for every caller:
/// it names the op, not which table or label was wrong.
pub(super) fn pytorch_wrapper(code: &str) -> bool {
    let Some(call) = code.strip_prefix("return ") else {
        return false;
    };
    ["torch.", "F.", "_VF.", "nn.functional."]
        .iter()
        .any(|m| call.trim_start().starts_with(m))
}

pub(super) fn frames_text<'a>(tbs: &[&'a Traceback]) -> Vec<&'a str> {
    let mut v = Vec::new();
    for tb in tbs {
        // PyTorch's own frames are the same for every caller (`torch.embedding(weight, input, padding_idx, …)`)
        // and say nothing about which table or label was wrong.
        for f in tb
            .frames
            .iter()
            .filter(|f| !f.file.replace('\\', "/").contains("/torch/"))
        {
            // The module's name says which model ran (`modeling_roberta.py`).
            v.push(f.file.rsplit(['/', '\\']).next().unwrap_or(&f.file));
            v.push(f.function.as_str());
            if let Some(c) = &f.code {
                v.push(c.as_str());
            }
        }
        if let Some(e) = &tb.exception {
            v.push(e.as_str());
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::kernel_name;

    #[test]
    fn a_kernel_is_named_without_its_scope_templates_and_arguments() {
        for (frame, name) in [
            (
                "void at::native::<unnamed>::ctc_loss_log_alpha_gpu_kernel<float, long>(T1 *, long)+0x11d0",
                "ctc_loss_log_alpha_gpu_kernel",
            ),
            ("col_kernel(const unsigned int *, float)+0x490", "col_kernel"),
            ("/srv/kernels/moe.py:175:fused_moe_kernel", "fused_moe_kernel"),
            ("void f<std::pair<int, int>>(int)", "f"),
            ("<unnamed>", "<unnamed>"),
        ] {
            assert_eq!(kernel_name(frame), name, "{frame}");
        }
    }

    #[test]
    fn a_kernel_name_of_any_length_is_shown_clipped() {
        let long = format!("void {}<float>(float *)+0x10", "k".repeat(10_000));
        assert_eq!(kernel_name(&long), "k".repeat(super::MAX_KERNEL));
    }
}
