//! The streaming state machine: bytes in (any chunking), and out only what
//! the diagnosis needs, in bounded memory: assertion groups with counts,
//! the first tracebacks, the first host errors of each kind, the DSA report,
//! and the catalog's log evidence.
//!
//! Types and the jobs that fill them are apart, so that no file reaches
//! back to this one: `state` holds the [`Reader`] and where it is in its
//! inputs, `kept` what it keeps ([`Facts`]), `group` an assertion group and
//! the last thread line, `thread_set` a group's distinct threads,
//! `dsa_report` a DSA report, `pos` a place in the inputs. The reader's methods, by job: `route` routes each line to the
//! others; `lines` splits bytes into lines (the prefilter skips every line
//! that cannot matter without looking at it further; rows a terminal cut
//! are joined) and lines into cleaned text (`repr`: a `repr`'d error
//! into its lines); `facts` keeps tracebacks, host
//! errors and evidence; `groups` counts device assertion lines into groups
//! (`glued`: a line of assertions printed back to back, in pieces);
//! `dsa` reads `TORCH_USE_CUDA_DSA` reports; `code_above` keeps the code
//! line above an error line whose frame line was cut; `notebook` finds a
//! notebook's cell.

mod block;
mod code_above;
mod dsa;
mod dsa_report;
mod facts;
mod glued;
mod group;
mod groups;
mod kept;
mod lines;
mod memo;
mod memo_rows;
mod notebook;
mod pos;
mod quiet;
mod repr;
mod route;
mod searched;
mod shape_memo;
mod shape_rows;
mod state;
mod thread_set;

pub use dsa_report::DsaReport;
pub use group::AssertGroup;
pub use kept::{CodeAbove, CpuHit, Facts, HostEvent, InputStats};
pub use lines::rank_from_name;
pub use pos::Pos;
pub use searched::{search_with, Searched, MAX_LINE};
pub use state::Reader;
pub use thread_set::ThreadSet;
