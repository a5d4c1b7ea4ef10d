//! RUN: commands from a reply, never through a shell.
//!
//! Built so far: splitting RUN content into commands (`split`) and the
//! policy of which commands may run (`policy`). Spawning with limits, the
//! scratch working tree and approvals on a terminal come next (issue 4);
//! until then `apply` reports RUN as not available.

pub mod policy;
pub mod spawn;
pub mod split;
