//! The history commands' view of clada's commits: which commits an apply
//! wrote, the undo stack, the step-back session, and what a squash selects.
//!
//! Everything here reads and names history through `git` (no gix types);
//! the commands in `cli/` decide what to change and in which order.
//!
//! - `commits`: the kinds of clada commit and the unit of one apply (a
//!   post commit with its pre snapshot), or of one squash.
//! - `undo_stack`: undone applies kept under `refs/clada/undo/<n>`.
//! - `session`: the step-back session saved under `refs/clada/steps/`.
//! - `squash`: which units a squash selects, and its message.

pub mod commits;
pub mod session;
pub mod squash;
pub mod undo_stack;
