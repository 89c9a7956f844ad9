//! One frame of a traceback: the leaf type the traceback builder and
//! IPython's frame styles both make.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub file: String,
    pub line: u64,
    pub function: String,
    pub code: Option<String>,
}

impl Frame {
    /// A frame of the user's own code: not the standard library, not an
    /// installed package, not PyTorch or Transformers.
    pub fn is_user(&self) -> bool {
        let f = self.file.replace('\\', "/");
        let library = [
            "site-packages/",
            "dist-packages/",
            "/torch/",
            "/transformers/",
            "/lib/python",
            "<frozen",
            "/conda/lib/",
            "/usr/lib/",
        ];
        !(library.iter().any(|l| f.contains(l)) || f.starts_with("torch/"))
    }
}
