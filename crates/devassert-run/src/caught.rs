//! Which guard findings the program caught. A guarded process that exits
//! normally writes `reports/exit-<pid>.json`, `{"pid": 123, "uncaught":
//! ["123-1"]}`: the raise ids (`evidence.raise_id`, `<pid>-<n>`) that reached
//! `sys.excepthook`. A finding is caught when the whole program exited 0, or
//! when its process wrote an exit record that does not list its raise id. A
//! finding listed in a record is the one that ended that process.

use devassert_core::Finding;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The exit records of one run.
#[derive(Debug, Default)]
pub struct ExitRecords {
    /// pid → the raise ids its excepthook saw.
    uncaught: HashMap<u64, HashSet<String>>,
}

impl ExitRecords {
    /// Read every `exit-<pid>.json` under `reports`; an unreadable or
    /// malformed record counts as absent (its findings stay uncaught).
    pub fn read(reports: &Path) -> ExitRecords {
        let mut out = ExitRecords::default();
        let Ok(entries) = std::fs::read_dir(reports) else {
            return out;
        };
        for path in entries.filter_map(Result::ok).map(|e| e.path()) {
            let named = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("exit-") && n.ends_with(".json"));
            if !named {
                continue;
            }
            let Some(v) = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            else {
                continue;
            };
            let Some(pid) = v.get("pid").and_then(Value::as_u64) else {
                continue;
            };
            let ids = v
                .get("uncaught")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            out.uncaught.insert(pid, ids);
        }
        out
    }

    /// Whether the program caught `f`, given how the whole program ended.
    pub fn caught(&self, f: &Finding, program_exited_ok: bool) -> bool {
        if program_exited_ok {
            return true;
        }
        let Some(id) = f.evidence.get("raise_id").and_then(Value::as_str) else {
            return false;
        };
        // A raise re-raised in another process (a DataLoader worker's, in
        // its parent) may be listed by that process's record.
        if self.uncaught.values().any(|ids| ids.contains(id)) {
            return false;
        }
        raise_pid(id).is_some_and(|pid| self.uncaught.contains_key(&pid))
    }

    /// Whether `f`'s raise reached the top of a process uncaught (in its own
    /// process, or in a DataLoader parent that re-raised it): the failure
    /// that ended that process, whatever else was written before it.
    pub fn ended(&self, f: &Finding) -> bool {
        f.evidence
            .get("raise_id")
            .and_then(Value::as_str)
            .is_some_and(|id| self.uncaught.values().any(|ids| ids.contains(id)))
    }
}

/// The process that wrote `f`: `evidence.pid`, else the pid of its raise id.
pub fn process(f: &Finding) -> Option<u64> {
    f.evidence.get("pid").and_then(Value::as_u64).or_else(|| {
        f.evidence
            .get("raise_id")
            .and_then(Value::as_str)
            .and_then(raise_pid)
    })
}

/// The pid part of a raise id `<pid>-<n>`.
fn raise_pid(id: &str) -> Option<u64> {
    let (pid, n) = id.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use devassert_core::OpFamily;
    use serde_json::json;

    fn raised(id: &str) -> Finding {
        let mut f = Finding::new("DA114", "n", OpFamily::Index, "s");
        f.evidence.insert("raise_id".into(), json!(id));
        f
    }

    #[test]
    fn exit_records_decide_what_was_caught() {
        let dir = tempfile::tempdir().unwrap();
        let w = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        w("exit-10.json", r#"{"pid": 10, "uncaught": ["10-2"]}"#);
        w("exit-11.json", r#"{"pid": 11, "uncaught": []}"#);
        w("exit-12.json", "not json");
        w("exit-20.json", r#"{"pid": 20, "uncaught": ["30-1"]}"#);
        let rec = ExitRecords::read(dir.path());
        assert!(rec.caught(&raised("10-1"), false));
        assert!(!rec.caught(&raised("10-2"), false), "listed as uncaught");
        assert!(rec.caught(&raised("11-1"), false));
        assert!(!rec.caught(&raised("12-1"), false), "a malformed record");
        assert!(!rec.caught(&raised("13-1"), false), "no record: it died");
        assert!(
            !rec.caught(&raised("30-1"), false),
            "uncaught in its parent"
        );
        assert!(!rec.caught(&raised("junk"), false));
        let mut no_id = raised("x");
        no_id.evidence.remove("raise_id");
        assert!(!rec.caught(&no_id, false));
        // The program exited 0: whatever was raised was handled.
        assert!(rec.caught(&raised("10-2"), true));
        assert!(rec.caught(&no_id, true));
        // Listed uncaught by its own process or by the one that re-raised it.
        assert!(rec.ended(&raised("10-2")) && rec.ended(&raised("30-1")));
        assert!(!rec.ended(&raised("10-1")) && !rec.ended(&raised("13-1")));
        assert!(!rec.ended(&no_id));
        assert_eq!(process(&raised("30-1")), Some(30));
    }
}
