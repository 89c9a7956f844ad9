//! The reader's own trigger words: a line holding none of them (and no
//! catalog literal set) can yield nothing the reader uses.

/// Words without which a line cannot hold anything the reader itself uses.
pub(super) const TRIGGERS: &[&str] = &[
    "Assertion",
    "assertion",
    "assert",
    "Assert",
    "rror",
    "Traceback",
    // faulthandler's stacks, listed innermost first.
    "most recent call first",
    "File \"",
    "CUDA",
    "HIP",
    "NCCL",
    "CUBLAS",
    "cuDNN",
    "CUDNN",
    "Fatal",
    "terminate",
    "atchdog",
    "ChildFailed",
    "synchronize",
    ".cu",
    "block: [",
    "global id: [",
    "containing",
    "Name of kernel",
    "illegal memory",
    // compute-sanitizer: `Invalid __global__ read of size 4 bytes`.
    "Invalid __",
    "launch failure",
    "HSA_STATUS",
    "During handling",
    "above exception",
    "AMD_SERIALIZE",
    "xception",
    "\\n",
    "out of bounds",
    "out of range",
    // The end of a printed assertion, for a row a terminal broke inside the
    // word `Assertion` (the unwrapper then finds the row before).
    "` failed",
    "' failed",
    // IPython / Jupyter tracebacks: the program is a notebook.
    "Cell In[",
    "<ipython-input-",
    "/ipykernel_",
];
