//! One memory budget for all the inputs of a command.
//!
//! Files read in place (raw tokens, `.npy`, safetensors, Megatron) take no
//! memory of their own: the kernel reads their map. What a file decodes
//! into memory (PNG pixels, npz members, Parquet pages, row offsets) is held
//! to `--max-decoded` for the whole command, not per thread (16 threads with
//! 256 MiB each could take 4 GiB): files read in parallel each get an equal
//! share ([`share`]), and one that needs more is read again afterwards, alone,
//! with all of it. A raised budget the machine cannot give is refused before
//! anything is read ([`affordable`]).

/// Each of `threads` files read at once gets this much of `budget`.
pub fn share(budget: u64, threads: usize) -> u64 {
    budget / threads.max(1) as u64
}

/// Refuse a budget of `bytes` that this machine cannot give now: more than
/// the memory available, the cgroup's room, or the address-space limit.
/// `Ok` where none of them can be read (the budget then stands as given).
pub fn affordable(bytes: u64) -> Result<(), String> {
    match available() {
        Some((room, from)) if bytes > room => Err(format!(
            "--max-decoded {} MiB is more than this machine can give: {} MiB {from}; lower it",
            bytes >> 20,
            room >> 20
        )),
        _ => Ok(()),
    }
}

/// The least room for memory, and where it was read.
fn available() -> Option<(u64, &'static str)> {
    let mut found: Vec<(u64, &'static str)> = Vec::new();
    if let Some(kb) = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| field(&t, "MemAvailable:"))
    {
        found.push((kb.saturating_mul(1024), "available (/proc/meminfo)"));
    }
    let cg = |name: &str| {
        let text = std::fs::read_to_string(format!("/sys/fs/cgroup/{name}")).ok()?;
        text.trim().parse::<u64>().ok()
    };
    if let (Some(max), Some(now)) = (cg("memory.max"), cg("memory.current")) {
        found.push((
            max.saturating_sub(now),
            "left under the cgroup's memory.max",
        ));
    }
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0
            && lim.rlim_cur != libc::RLIM_INFINITY
        {
            found.push((lim.rlim_cur, "of address space (ulimit -v)"));
        }
    }
    found.into_iter().min_by_key(|&(room, _)| room)
}

/// The number after `name` in `/proc/meminfo` (kB).
fn field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_past_all_memory_is_refused() {
        let e = affordable(u64::MAX / 2).expect_err("no machine has 8 EiB");
        assert!(e.contains("more than this machine can give"), "{e}");
        assert!(affordable(1 << 20).is_ok());
    }

    #[test]
    fn shares_add_up_to_the_budget() {
        assert_eq!(share(256 << 20, 16) * 16, 256 << 20);
        assert_eq!(share(100, 0), 100);
    }
}
