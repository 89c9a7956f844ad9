use super::*;

fn run(lines: &[&str]) -> Vec<Traceback> {
    let mut out = Vec::new();
    let mut b: Option<Builder> = None;
    for l in lines {
        loop {
            let t = l.trim();
            if b.is_none() {
                if starts(t) {
                    b = Some(Builder::new(0, 1, None, false));
                } else {
                    break;
                }
            }
            let Some(cur) = b.as_mut() else { break };
            match cur.step(l) {
                Step::More | Step::Ignored => break,
                Step::Done(tb, refeed) => {
                    out.push(tb);
                    b = None;
                    if !refeed {
                        break;
                    }
                    if !starts(t) {
                        break;
                    }
                }
            }
        }
    }
    out.extend(b.map(Builder::finish));
    out
}

#[test]
fn frames_code_and_message() {
    let tbs = run(&[
        "Traceback (most recent call last):",
        "  File \"train.py\", line 97, in main",
        "    loss.item()",
        "    ^^^^^^^^^^^",
        "  File \"/usr/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1501, in _call_impl",
        "    return forward_call(*args, **kwargs)",
        "RuntimeError: CUDA error: device-side assert triggered",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
        "",
        "Traceback (most recent call last):",
    ]);
    assert_eq!(tbs.len(), 2);
    let tb = &tbs[0];
    assert_eq!(tb.frames.len(), 2);
    assert_eq!(tb.frames[0].code.as_deref(), Some("loss.item()"));
    assert_eq!(tb.user_frame().map(|f| f.line), Some(97));
    assert_eq!(
        tb.exception.as_deref(),
        Some("RuntimeError: CUDA error: device-side assert triggered")
    );
    assert_eq!(tb.message.len(), 1);
}

#[test]
fn ipython_tracebacks_read_as_frames() {
    let new = [
        "---------------------------------------------------------------------------",
        "RuntimeError                              Traceback (most recent call last)",
        "Cell In[12], line 7",
        "      5 for batch in loader:",
        "----> 7     out = model(**batch)",
        "      8     loss = out.loss",
        "",
        "File /opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py:1518, in Module._wrapped_call_impl(self, *args, **kwargs)",
        "   1517 else:",
        "-> 1518     return self._call_impl(*args, **kwargs)",
        "",
        "    [... skipping hidden 1 frame]",
        "",
        "Cell In[9], line 4, in Net.forward(self, x)",
        "      3 def forward(self, x):",
        "----> 4     return self.head(self.emb(x))",
        "",
        "RuntimeError: CUDA error: device-side assert triggered",
        "CUDA kernel errors might be asynchronously reported at some other API call.",
        "",
    ];
    let old = [
        "RuntimeError                              Traceback (most recent call last)",
        "<ipython-input-12-3f2a9c1d7e2b> in <module>",
        "      6     batch = {k: v.to(\"cuda\") for k, v in batch.items()}",
        "----> 7     out = model(**batch)",
        "",
        "/opt/conda/lib/python3.7/site-packages/torch/nn/modules/module.py in _call_impl(self, *input, **kwargs)",
        "   1050                 or _global_forward_hooks):",
        "-> 1051             return forward_call(*input, **kwargs)",
        "   1052         # Do not call functions when jit is used",
        "",
        "/tmp/ipykernel_4021/1893452.py in forward(self, x)",
        "      3     def forward(self, x):",
        "----> 4         return self.head(self.emb(x))",
        "",
        "RuntimeError: CUDA error: device-side assert triggered",
    ];
    let input = [
        "RuntimeError                              Traceback (most recent call last)",
        "Input In [12], in <cell line: 7>()",
        "      5 for batch in loader:",
        "----> 7     out = model(**batch)",
        "",
        "File /opt/conda/lib/python3.9/site-packages/torch/nn/modules/module.py:1130, in Module._call_impl(self, *input, **kwargs)",
        "-> 1130     return forward_call(*input, **kwargs)",
        "",
        "Input In [9], in Net.forward(self, x)",
        "----> 4     return self.head(self.emb(x))",
        "",
        "RuntimeError: CUDA error: device-side assert triggered",
    ];
    let want_new = [
        ("Cell In[12]", 7, "<module>", "out = model(**batch)"),
        (
            "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py",
            1518,
            "Module._wrapped_call_impl",
            "return self._call_impl(*args, **kwargs)",
        ),
        (
            "Cell In[9]",
            4,
            "Net.forward",
            "return self.head(self.emb(x))",
        ),
    ];
    let want_old = [
        ("Cell In[12]", 7, "<module>", "out = model(**batch)"),
        (
            "/opt/conda/lib/python3.7/site-packages/torch/nn/modules/module.py",
            1051,
            "_call_impl",
            "return forward_call(*input, **kwargs)",
        ),
        (
            "/tmp/ipykernel_4021/1893452.py",
            4,
            "forward",
            "return self.head(self.emb(x))",
        ),
    ];
    let want_input = [
        ("Cell In[12]", 7, "<module>", "out = model(**batch)"),
        (
            "/opt/conda/lib/python3.9/site-packages/torch/nn/modules/module.py",
            1130,
            "Module._call_impl",
            "return forward_call(*input, **kwargs)",
        ),
        (
            "Cell In[9]",
            4,
            "Net.forward",
            "return self.head(self.emb(x))",
        ),
    ];
    for (lines, want) in [
        (&new[..], &want_new),
        (&old[..], &want_old),
        (&input[..], &want_input),
    ] {
        let tbs = run(lines);
        assert_eq!(tbs.len(), 1, "{lines:?}");
        let tb = &tbs[0];
        let got: Vec<_> = tb
            .frames
            .iter()
            .map(|f| {
                (
                    f.file.as_str(),
                    f.line,
                    f.function.as_str(),
                    f.code.as_deref().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(got, want.to_vec());
        assert_eq!(
            tb.exception.as_deref(),
            Some("RuntimeError: CUDA error: device-side assert triggered")
        );
        assert_eq!(tb.user_frame().map(|f| f.line), Some(4));
    }
}

#[test]
fn ipython_plain_and_verbose_modes() {
    let plain = [
        "Traceback (most recent call last):",
        "  Cell In[1], line 9",
        "    out = lib.call(lookup, table, ids)",
        "  File /tmp/pkg/lib/__init__.py:2 in call",
        "    return f(*args, **kwargs)",
        "  Cell In[1], line 6 in lookup",
        "    return [table[i] for i in ids]",
        "IndexError: list index out of range",
    ];
    let verbose = [
        "IndexError                                Traceback (most recent call last)",
        "Cell In[1], line 9",
        "      8 ids = [1, 2, 12]",
        "----> 9 out = lib.call(lookup, table, ids)",
        "        ids = [1, 2, 12]",
        "File /tmp/pkg/lib/__init__.py:2, in call(f=<function lookup>, *args=([0, 1], [1, 2, 12]), **kwargs={})",
        "----> 2     return f(*args, **kwargs)",
        "        kwargs = {}",
        "Cell In[1], line 6, in lookup(table=[0, 1], ids=[1, 2, 12])",
        "----> 6     return [table[i] for i in ids]",
        "        table = [0, 1]",
        "IndexError: list index out of range",
    ];
    for lines in [&plain[..], &verbose[..]] {
        let tbs = run(lines);
        let got: Vec<_> = tbs[0]
            .frames
            .iter()
            .map(|f| (f.file.as_str(), f.line, f.code.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(
            got,
            [
                ("Cell In[1]", 9, "out = lib.call(lookup, table, ids)"),
                ("/tmp/pkg/lib/__init__.py", 2, "return f(*args, **kwargs)"),
                ("Cell In[1]", 6, "return [table[i] for i in ids]"),
            ]
        );
        assert_eq!(
            tbs[0].exception.as_deref(),
            Some("IndexError: list index out of range")
        );
    }
}

#[test]
fn plain_frames_of_an_old_kernel_name_the_cell() {
    let tbs = run(&[
        "Traceback (most recent call last):",
        "  File \"<ipython-input-3-aa12>\", line 2, in <module>",
        "    y = emb(x)",
        "IndexError: index out of range in self",
    ]);
    assert_eq!(tbs[0].frames[0].file, "Cell In[3]");
}

#[test]
fn stacks_listed_innermost_first() {
    // VS Code's banner: type, message, then the frames innermost first.
    let tbs = run(&[
        "Exception has occurred: RuntimeError",
        "CUDA error: device-side assert triggered",
        "  File \"/home/u/train.py\", line 120, in train_step",
        "    loss.item()",
        "  File \"/home/u/train.py\", line 200, in <module>",
        "    train_step(batch)",
        "Epoch 3",
    ]);
    assert_eq!(tbs.len(), 1);
    let tb = &tbs[0];
    assert!(tb.innermost_first);
    assert_eq!(
        tb.exception.as_deref(),
        Some("RuntimeError: CUDA error: device-side assert triggered")
    );
    assert_eq!(tb.user_frame().map(|f| f.line), Some(120));
    // faulthandler: no comma before `in`.
    let tbs = run(&[
        "Current thread 0x00007f3b (most recent call first):",
        "  File \"/home/u/model.py\", line 14 in forward",
        "  File \"/home/u/train.py\", line 90 in step",
    ]);
    let tb = &tbs[0];
    assert!(tb.innermost_first && tb.exception.is_none());
    assert_eq!(tb.frames[0].function, "forward");
    assert_eq!(tb.user_frame().map(|f| f.line), Some(14));
}

/// A frame line as long as a line may be keeps a bounded file and function:
/// the tracebacks the reader keeps stay small whatever the log holds.
#[test]
fn a_huge_frame_keeps_a_bounded_file_and_function() {
    let path = format!("/x/{}.py", "a".repeat(60_000));
    let name = "f".repeat(5_000);
    let frame = format!("  File \"{path}\", line 3, in {name}");
    let tbs = run(&[
        "Traceback (most recent call last):",
        &frame,
        "    g()",
        "ValueError: x",
        "",
    ]);
    let f = &tbs[0].frames[0];
    assert_eq!(f.file.chars().count(), MAX_FILE);
    assert_eq!(f.function.chars().count(), MAX_FUNCTION);
    assert!(path.starts_with(&f.file));
    assert_eq!(tbs[0].exception.as_deref(), Some("ValueError: x"));
}

/// Lines of every kind the builder tells apart (Python's, IPython's,
/// faulthandler's, VS Code's), for comparing `step_known` with `step`.
const KINDS: &[&str] = &[
    "Traceback (most recent call last):",
    "  Traceback (most recent call last):",
    "Stack (most recent call first):",
    "Exception has occurred: RuntimeError",
    "  File \"train.py\", line 97, in main",
    "File \"/usr/lib/python3.11/json/decoder.py\", line 340, in decode",
    "  File \"x.py\", line 14 in forward",
    "  File \"<ipython-input-3-9f2c>\", line 4, in <module>",
    "Cell In[12], line 3",
    "Input In [7], in <cell line: 2>()",
    "RuntimeError                              Traceback (most recent call last)",
    "----> 7     out = model(x)",
    "      6 y = 1",
    "---------------------------------------------------------------------------",
    "    loss.backward()",
    "\tx = emb(ids)",
    "    ^^^^^^^^^^^^^",
    "    ~~~~^^^",
    "    [Previous line repeated 996 more times]",
    "",
    "   ",
    "RuntimeError: CUDA error: device-side assert triggered",
    "json.decoder.JSONDecodeError: Extra data: line 1 column 4 (char 3)",
    "CUDA kernel errors might be asynchronously reported",
    "    indented message",
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
    "2024-05-01 12:00:01,970 - WARNING - loader - skipping sample 1",
];

/// What a step did, comparably.
fn outcome(s: Step) -> (u8, Option<Traceback>, bool) {
    match s {
        Step::More => (0, None, false),
        Step::Ignored => (1, None, false),
        Step::Done(tb, refeed) => (2, Some(tb), refeed),
    }
}

proptest::proptest! {
    /// A builder fed each line's `RowStep` (a repeated row's) does what
    /// one fed the line does, step by step, over any sequence of lines
    /// of every kind, re-fed as the reader re-feeds them.
    #[test]
    fn step_known_steps_as_step(picks in proptest::collection::vec(0..KINDS.len(), 0..80)) {
        let mut plain: Option<Builder> = None;
        let mut known: Option<Builder> = None;
        let (mut out_plain, mut out_known) = (Vec::new(), Vec::new());
        for (n, &i) in picks.iter().enumerate() {
            let line = KINDS[i];
            let row = RowStep::of(line);
            for _ in 0..2 {
                if plain.is_none() {
                    proptest::prop_assert!(known.is_none());
                    if !starts(line.trim()) {
                        break;
                    }
                    plain = Some(Builder::new(0, n as u64, None, false));
                    known = Some(Builder::new(0, n as u64, None, false));
                }
                let (Some(p), Some(k)) = (plain.as_mut(), known.as_mut()) else { break };
                let (a, b) = (outcome(p.step(line)), outcome(k.step_known(line, &row)));
                proptest::prop_assert_eq!(&a, &b, "line {:?}", line);
                match a {
                    (2, tb, refeed) => {
                        out_plain.extend(tb);
                        out_known.extend(b.1);
                        plain = None;
                        known = None;
                        if !refeed {
                            break;
                        }
                    }
                    _ => break,
                }
            }
        }
        out_plain.extend(plain.map(Builder::finish));
        out_known.extend(known.map(Builder::finish));
        proptest::prop_assert_eq!(out_plain, out_known);
    }
}

/// The rows of a traceback of `frames` frames (each with its code line
/// when `code`) and `messages` message rows, ended by an empty row.
fn traceback_rows(i: usize, frames: usize, code: bool, messages: usize) -> Vec<String> {
    let mut rows = vec!["Traceback (most recent call last):".to_string()];
    for j in 0..frames {
        rows.push(format!("  File \"f{i}_{j}.py\", line {j}, in fn{j}"));
        if code {
            rows.push(format!("    code({i}, {j})"));
        }
    }
    rows.push(format!("ValueError: bad row {i}"));
    rows.extend((0..messages).map(|k| format!("  message {i} {k}")));
    rows.push(String::new());
    rows
}

/// The traceback `rows` complete (see `traceback_rows`).
fn built(b: &mut Builder, rows: &[String]) -> Option<Traceback> {
    rows.iter().find_map(|r| match b.step(r) {
        Step::Done(tb, _) => Some(tb),
        _ => None,
    })
}

proptest::proptest! {
    /// Tracebacks built into the strings and buffers of dropped ones (a
    /// `Spare` given to each builder, what it left reclaimed, the dropped
    /// traceback kept) are those a fresh builder builds, whatever the
    /// number of frames, code lines and message rows of each.
    #[test]
    fn tracebacks_built_in_spare_buffers_are_built_fresh(
        shapes in proptest::collection::vec((1usize..7, proptest::bool::ANY, 0usize..5), 1..30),
    ) {
        let mut spare = Spare::default();
        let mut latest = std::collections::VecDeque::new();
        for (i, &(frames, code, messages)) in shapes.iter().enumerate() {
            let rows = traceback_rows(i, frames, code, messages);
            let fresh = built(&mut Builder::new(0, 1, None, false), &rows);
            let mut b = Builder::new(0, 1, None, false).with_spare(std::mem::take(&mut spare));
            let reused = built(&mut b, &rows);
            spare.reclaim(b.take_spare());
            proptest::prop_assert_eq!(&fresh, &reused, "traceback {}", i);
            proptest::prop_assert!(fresh.is_some());
            latest.extend(reused);
            if latest.len() > 2 {
                spare.keep(latest.pop_front().unwrap_or_default());
            }
        }
    }
}

proptest::proptest! {
    /// What rows leave in a builder fresh from a header, saved
    /// (`Builder::body`) and put in place in another fresh builder that
    /// builds in a dropped traceback's strings (`put_body`), is what the
    /// rows leave: the two hold the same and step every row after alike.
    #[test]
    fn a_body_put_in_place_is_what_its_rows_leave(
        picks in proptest::collection::vec(0..KINDS.len(), 0..14),
        after in proptest::collection::vec(0..KINDS.len(), 0..14),
        dropped in 0usize..5,
    ) {
        let header = KINDS[0];
        let mut stepped = Builder::new(0, 1, None, false);
        let _ = stepped.step(header);
        proptest::prop_assert!(stepped.is_fresh());
        // The rows up to one that ends the traceback: a block holds no such row.
        let mut saved = Builder::new(0, 1, None, false);
        let _ = saved.step(header);
        for &i in &picks {
            if let Step::Done(..) = saved.step(KINDS[i]) {
                break;
            }
            let _ = stepped.step(KINDS[i]);
        }
        let mut spare = Spare::default();
        if dropped > 0 {
            let rows = traceback_rows(7, dropped, dropped % 2 == 0, dropped - 1);
            if let Some(tb) = built(&mut Builder::new(0, 1, None, false), &rows) {
                spare.keep(tb);
            }
        }
        let mut put = Builder::new(0, 1, None, false).with_spare(spare);
        let _ = put.step(header);
        proptest::prop_assert!(put.is_fresh());
        put.put_body(&stepped.body());
        proptest::prop_assert_eq!(format!("{:?}", put.body()), format!("{:?}", stepped.body()));
        for &i in &after {
            let (a, b) = (outcome(stepped.step(KINDS[i])), outcome(put.step(KINDS[i])));
            proptest::prop_assert_eq!(&a, &b, "line {:?}", KINDS[i]);
            if a.0 == 2 {
                return Ok(());
            }
        }
        proptest::prop_assert_eq!(stepped.finish(), put.finish());
    }
}
