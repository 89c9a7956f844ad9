//! A device-side assert the guard did not stop: the program died of it, so
//! the log's finding says so and names the exact command that finds its line
//! (`--blocking` reports the launching line, `--eager` lets the guard see the
//! ops of compiled regions).

use crate::guard::GuardLevel;
use devassert_core::render::inert::shell_word;
use devassert_core::{Finding, OpFamily, Report};
use serde_json::{json, Value};
use std::ffi::OsString;

/// How the run that died was started.
#[derive(Debug, Clone)]
pub struct RunFlags<'a> {
    /// The user's command, as given after `--`.
    pub argv: &'a [OsString],
    pub exit_code: i32,
    pub blocking: bool,
    pub eager: bool,
    pub level: GuardLevel,
}

/// Annotate the log's device-assert findings when the program died of one
/// that no guard finding accounts for: `evidence.note` says why the guard did
/// not stop it, `evidence.rerun` holds the command to rerun with, and that
/// command leads the fixes. Returns whether anything was annotated.
pub fn annotate_unstopped(log: &mut Report, guard: &[Finding], run: &RunFlags) -> bool {
    if run.exit_code == 0 || guard.iter().any(|f| !f.caught) {
        return false;
    }
    let mut any = false;
    for f in log.findings.iter_mut().filter(|f| is_device_assert(f)) {
        annotate(f, run);
        any = true;
    }
    any
}

/// A failure a kernel asserted: a kernel or assertion line, the bare
/// `device-side assert triggered`, or a Triton / Inductor assert.
fn is_device_assert(f: &Finding) -> bool {
    let e = &f.evidence;
    e.contains_key("kernel")
        || e.contains_key("assertion")
        || f.op_family == OpFamily::Inductor
        || e.get("message")
            .and_then(Value::as_str)
            .is_some_and(|m| m.contains("device-side assert"))
}

fn annotate(f: &mut Finding, run: &RunFlags) {
    let compiled = f.op_family == OpFamily::Inductor;
    // A compiled region's assert needs only eager mode: then the guard sees
    // the op. Anything else also wants the launching line.
    let blocking = run.blocking || !compiled;
    let guarded = run.level != GuardLevel::Off;
    let note = if !guarded {
        "the guard was off (--guard off), so nothing stopped this device-side assert before it fired"
    } else if compiled {
        "the guard did not stop this assert: it fired in a kernel torch.compile generated, and the guard does not see the ops of compiled regions"
    } else if run.blocking && run.eager {
        "the guard did not stop this device-side assert: the op is not one it checks (a custom kernel, an op outside the catalog); with --blocking the traceback shows the line that launched it"
    } else {
        "the guard did not stop this device-side assert: the op is not one it checks (a custom kernel, an op outside the catalog) or it ran in a torch.compile region; CUDA reported it at a later sync, not at its line"
    };
    f.evidence.insert("note".into(), json!(note));
    if guarded && blocking == run.blocking && run.eager {
        // Nothing left to turn on: the traceback already is the launch line.
        return;
    }
    let cmd = rerun_command(run, blocking);
    let why = if compiled {
        "rerun with torch.compile disabled, so the guard checks every op and stops this one at its line"
    } else {
        "rerun to get the line that launched it (and the values, if the guard covers the op)"
    };
    f.fixes.insert(0, format!("{why}: {cmd}"));
    f.evidence.insert("rerun".into(), json!(cmd));
}

/// `devassert run [--blocking] --eager [--guard strict] -- CMD…`, quoted for a
/// POSIX shell.
pub fn rerun_command(run: &RunFlags, blocking: bool) -> String {
    let mut parts = vec!["devassert".to_string(), "run".to_string()];
    if blocking {
        parts.push("--blocking".into());
    }
    parts.push("--eager".into());
    // `async` substitutes indices instead of stopping at the launch: the
    // rerun wants the exact level. `strict` checks more: keep it.
    if run.level == GuardLevel::Strict {
        parts.push("--guard".into());
        parts.push("strict".into());
    }
    parts.push("--".into());
    parts.extend(
        run.argv
            .iter()
            .map(|a| shell_word(&a.to_string_lossy()).into_owned()),
    );
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_finding(rule: &str, family: OpFamily, kernel: bool) -> Finding {
        let mut f = Finding::new(rule, "n", family, "s");
        if kernel {
            f.evidence
                .insert("kernel".into(), json!("indexSelectLargeIndex"));
        } else {
            f.evidence.insert(
                "message".into(),
                json!("RuntimeError: CUDA error: device-side assert triggered"),
            );
        }
        f
    }

    fn flags(argv: &[OsString], blocking: bool, eager: bool) -> RunFlags<'_> {
        RunFlags {
            argv,
            exit_code: 1,
            blocking,
            eager,
            level: GuardLevel::On,
        }
    }

    fn argv(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn an_unstopped_assert_gets_the_exact_rerun_command() {
        let a = argv(&["python", "train.py", "--name", "my run"]);
        let mut log = Report::new(devassert_core::Command::Run);
        log.findings
            .push(log_finding("DA001", OpFamily::Unknown, false));
        assert!(annotate_unstopped(&mut log, &[], &flags(&a, false, false)));
        let f = &log.findings[0];
        let cmd = "devassert run --blocking --eager -- python train.py --name 'my run'";
        assert_eq!(f.evidence["rerun"], cmd);
        assert!(f.fixes[0].ends_with(cmd), "{:?}", f.fixes);
        assert!(f.evidence["note"]
            .as_str()
            .unwrap()
            .contains("did not stop"));
    }

    #[test]
    fn a_compiled_assert_points_to_eager() {
        let a = argv(&["python", "train.py"]);
        let mut log = Report::new(devassert_core::Command::Run);
        log.findings
            .push(log_finding("DA401", OpFamily::Inductor, true));
        assert!(annotate_unstopped(&mut log, &[], &flags(&a, false, false)));
        assert_eq!(
            log.findings[0].evidence["rerun"],
            "devassert run --eager -- python train.py"
        );
        assert!(log.findings[0].evidence["note"]
            .as_str()
            .unwrap()
            .contains("torch.compile"));
    }

    #[test]
    fn an_uncaught_guard_finding_or_a_clean_exit_is_not_annotated() {
        let a = argv(&["python", "t.py"]);
        let mut log = Report::new(devassert_core::Command::Run);
        log.findings
            .push(log_finding("DA101", OpFamily::IndexSelect, true));
        let guard = vec![Finding::new("DA101", "n", OpFamily::IndexSelect, "s")];
        assert!(!annotate_unstopped(
            &mut log,
            &guard,
            &flags(&a, false, false)
        ));
        let mut ok = flags(&a, false, false);
        ok.exit_code = 0;
        assert!(!annotate_unstopped(&mut log, &[], &ok));
        // A caught guard finding does not explain the crash.
        let mut caught = guard[0].clone();
        caught.caught = true;
        assert!(annotate_unstopped(
            &mut log,
            &[caught],
            &flags(&a, false, false)
        ));
    }

    #[test]
    fn host_errors_are_not_device_asserts() {
        let a = argv(&["python", "t.py"]);
        let mut log = Report::new(devassert_core::Command::Run);
        let mut f = Finding::new("DA101", "n", OpFamily::IndexSelect, "s");
        f.evidence.insert(
            "message".into(),
            json!("IndexError: index out of range in self"),
        );
        log.findings.push(f);
        assert!(!annotate_unstopped(&mut log, &[], &flags(&a, false, false)));
    }

    #[test]
    fn nothing_new_to_turn_on_gives_no_command() {
        let a = argv(&["python", "t.py"]);
        let mut log = Report::new(devassert_core::Command::Run);
        log.findings
            .push(log_finding("DA004", OpFamily::CustomKernel, true));
        assert!(annotate_unstopped(&mut log, &[], &flags(&a, true, true)));
        let f = &log.findings[0];
        assert!(f.evidence.get("rerun").is_none());
        assert!(f.fixes.is_empty());
        assert!(f.evidence["note"].as_str().unwrap().contains("--blocking"));
    }

    #[test]
    fn the_suggested_level_keeps_strict_and_turns_the_guard_on() {
        let a = argv(&["python", "t.py"]);
        let mut run = flags(&a, true, true);
        run.level = GuardLevel::Off;
        let mut log = Report::new(devassert_core::Command::Run);
        log.findings
            .push(log_finding("DA001", OpFamily::Unknown, false));
        assert!(annotate_unstopped(&mut log, &[], &run));
        let f = &log.findings[0];
        assert_eq!(
            f.evidence["rerun"],
            "devassert run --blocking --eager -- python t.py"
        );
        assert!(f.evidence["note"].as_str().unwrap().contains("--guard off"));
        run.level = GuardLevel::Strict;
        assert_eq!(
            rerun_command(&run, true),
            "devassert run --blocking --eager --guard strict -- python t.py"
        );
        run.level = GuardLevel::Async;
        assert_eq!(
            rerun_command(&run, false),
            "devassert run --eager -- python t.py"
        );
    }
}
